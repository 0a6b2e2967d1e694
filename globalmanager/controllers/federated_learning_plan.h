#pragma once

// What a FederatedLearningJob should consist of, computed from the job, its Datasets and Models
// and the Nodes (pure: no API calls, so it is unit-tested on its own and the controller only acts
// on it).
//
// Tasks of the common job library (common/job), in this order:
//   "aggregation"          1 pod (0 while no training worker is placed): Sedna's aggregation
//                          worker — env AGG_BIND_PORT=7363, PARTICIPANTS_COUNT=<training pods>,
//                          TRANSMITTER=ws|s3, MODEL_URL (the aggregation Model),
//                          PRETRAINED_MODEL_URL, AGG_DATA_PATH (s3 transmitter);
//   "train-<i>"            trainingWorkers[i] with a nodeName (or no placement at all: the
//                          scheduler picks the node), 1 pod;
//   "train-<i>-<node>"     trainingWorkers[i] whose template selects nodes (nodeSelector/required
//                          affinity, no nodeName; placement.h): one task of 1 pod per matching
//                          edge node, pinned there with nodeName. When "<job>-train-<i>-<node>-0"
//                          is not a DNS label of <= 63 characters the node part is a 10-hex-digit
//                          hash of the node name instead.
// Each training pod: env AGG_IP=<job>-aggregation.<ns> (the Service), AGG_PORT=7363, MODEL_NAME,
// DATASET_NAME, TRANSMITTER, TRAIN_DATASET_URL (the Dataset's url), MODEL_URL, PRETRAINED_MODEL_URL,
// AGG_DATA_PATH; hostNetwork true and dnsPolicy ClusterFirstWithHostNet unless the template sets
// them (Sedna forces hostNetwork; the DNS policy lets a host-network pod resolve the Service).
// Every pod: NAMESPACE, JOB_NAME, LC_SERVER (WORKER_NAME = the pod's name is added per pod by the
// controller), restartPolicy OnFailure unless set (Sedna's), Sedna's labels
// federatedlearningjob.sedna.io/name|uid|worker-type (aggregation | train). Host-path URLs are
// mounted with hostPath volumes under /home/data (worker_template.h); s3:// models and datasets are
// fetched by Sedna's storage-initializer (worker_s3.h), AGG_DATA_PATH and http(s) URLs are passed
// as they are. With both transmitters set, s3 wins (TRANSMITTER=s3), as in Sedna. The S3
// credential env of a pod comes from the one Secret its s3:// URLs name (the Models', the
// Dataset's, transmitter.s3.credentialName): two different ones are invalid; a Secret that cannot
// be read is `credential_problem` (the controller reports its reason and retries later).
//
// Problems that creating pods cannot fix — a malformed spec or runPolicy, a missing template, bad
// node selection, a name too long for the pod hostnames — are `invalid` causes: the controller
// records SpecValid=False and creates nothing. A Dataset or Model that does not exist yet is
// `missing` (SpecValid=False reason DatasetNotFound / ModelNotFound, model_resolver.h): the job
// waits and is planned again when it appears (the controller watches them).

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/federated_learning_job.h"
#include "common/job/job_spec.h"
#include "common/job/job_status.h"
#include "common/kube/errors.h"
#include "common/kube/object.h"
#include "globalmanager/controllers/model_resolver.h"
#include "globalmanager/controllers/s3_credentials.h"
#include "globalmanager/controllers/worker_s3.h"
#include "nereid/edge/v1/resources.pb.h"

namespace nereid::gm {

namespace fl {
inline constexpr std::string_view kAggregationTask = "aggregation";
inline constexpr std::string_view kTrainTaskPrefix = "train-";
// Every pod carries the hash of the plan it was built from; a pod of another hash is from an
// older spec (the controller restarts the job's pods, see federated_learning_controller.h).
inline constexpr std::string_view kSpecHashAnnotation = "nereid.io/fl-spec-hash";
// runPolicy.cleanPodPolicy when unset: keep every pod, as Sedna does.
inline constexpr job::CleanPodPolicy kDefaultCleanPodPolicy = job::CleanPodPolicy::kNone;
}  // namespace fl

// Reads the job's world. Lookups return NotFound for an object that does not exist.
struct FlPlanInputs {
  std::function<absl::StatusOr<kube::ObjectPtr>(std::string_view name)> dataset;
  std::function<absl::StatusOr<kube::ObjectPtr>(std::string_view name)> model;
  std::vector<kube::ObjectPtr> nodes;
  std::string lc_server;
  // The S3 part of a pod whose s3:// URLs use Secret `secret_name` ("" = none). Unset: defaults.
  std::function<absl::StatusOr<WorkerS3Options>(std::string_view secret_name,
                                                std::optional<CredentialProblem>* problem)>
      s3;
};

struct FlTrainingTask {
  std::string task;         // job task name
  size_t worker_index = 0;  // spec.trainingWorkers[worker_index]
  std::string node;         // "" when the scheduler places it
  std::string dataset;      // Dataset name
  bool selected = false;    // Placed by a node selector (the pod is pinned with nodeName).
};

struct FlPlan {
  // Non-empty: the spec cannot work; nothing else below is meaningful.
  std::vector<kube::StatusCause> invalid;
  // Set (with `invalid` empty): a referenced Dataset or Model does not exist yet and the job waits
  // for it (model_resolver.h); nothing else below is meaningful.
  std::optional<MissingReference> missing;

  api::FederatedLearningJob job;  // The job as parsed (empty when it does not parse).

  job::JobSpec spec;  // runPolicy (cleanPodPolicy defaulted to None) + the tasks above.
  std::vector<FlTrainingTask> training;
  // trainingWorkers entries whose node selection matches no edge node right now.
  std::vector<size_t> unplaced_workers;
  std::string aggregation_node;  // The aggregation template's nodeName ("" = scheduler).
  std::string aggregation_model;
  std::string pretrained_model;  // "" when none.
  std::string spec_hash;         // fl::kSpecHashAnnotation value for pods of this plan.

  // Training pods in the plan (PARTICIPANTS_COUNT).
  int32_t TrainingPods() const { return static_cast<int32_t>(training.size()); }
  bool IsTrainingTask(std::string_view task) const;
  // The nodes that run training pods of this plan (known in advance), sorted.
  std::set<std::string> TrainingNodes() const;
  // What the LC of `node` is sent: the job's models and transmitter, and the training workers
  // placed on that node (other nodes' datasets are not its business).
  edge::v1::FederatedLearningJobSpec EdgeSpecFor(std::string_view node) const;
  std::string transmitter = "ws";
  // A Secret the pods need could not be read: nothing is created (not an invalid spec).
  std::optional<CredentialProblem> credential_problem;
};

// `job` is the FederatedLearningJob as the cache holds it.
FlPlan PlanFederatedLearningJob(const kube::Json& job, const FlPlanInputs& inputs);

// The task names for trainingWorkers[index] placed on `node` by a selector (see above); "" when
// even the hashed form does not fit.
std::string SelectorTrainTaskName(std::string_view job_name, size_t index, std::string_view node);

// Job success for a FederatedLearningJob: every training pod of the plan succeeded (the workers
// finished; the aggregation worker's own exit is not required — Sedna's aggregator exits on its
// own once its clients are done, and a still-running one is left to cleanPodPolicy).
bool FlTrainingSucceeded(const job::JobSpec& spec,
                         const std::map<std::string, job::ReplicaStatus>& counts);

}  // namespace nereid::gm
