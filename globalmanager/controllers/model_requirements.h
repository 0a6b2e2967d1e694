#pragma once

// ModelRequirements: how controllers of other kinds (IncrementalLearningJob, LifelongLearningJob,
// JointInferenceService, FederatedLearningJob) tell the Model controller which nodes need which
// Model. The Model controller sends a Model to the union of the nodes its requesters name (plus
// the nodes of the Model's own `nereid.io/nodes` annotation) and removes it from a node nobody
// needs it on any more.
//
// Keys: a model is "namespace/name"; a requester is any stable string naming the object that
// needs it, by convention "Kind/namespace/name" (e.g. "IncrementalLearningJob/default/il-1").
//
// Level-based use (preferred): every reconcile of a job calls SetRequirements(job, everything it
// needs now); an empty list (or ReleaseAll when the job is gone) releases. Calls are cheap and
// idempotent, and place the model on the edge registry synchronously when the Model is in the
// cache — so a controller that calls them from its PrimeEdge() has the models in the registry
// before the hub starts resyncing nodes. Thread-safe.

#include <string>
#include <vector>

namespace nereid::gm {

struct ModelNeed {
  std::string model_key;  // "namespace/name" of the Model
  std::string node;

  friend bool operator<(const ModelNeed& a, const ModelNeed& b) {
    return a.model_key != b.model_key ? a.model_key < b.model_key : a.node < b.node;
  }
  friend bool operator==(const ModelNeed&, const ModelNeed&) = default;
};

class ModelRequirements {
 public:
  virtual ~ModelRequirements() = default;
  // Replaces everything `requester` needs with `needs`.
  virtual void SetRequirements(const std::string& requester, const std::vector<ModelNeed>& needs) = 0;
  // Adds / removes one need of `requester`.
  virtual void RequireModel(const std::string& model_key, const std::string& node,
                            const std::string& requester) = 0;
  virtual void ReleaseModel(const std::string& model_key, const std::string& node,
                            const std::string& requester) = 0;
  // Drops every need of `requester` (e.g. the job was deleted).
  virtual void ReleaseAll(const std::string& requester) = 0;
};

}  // namespace nereid::gm
