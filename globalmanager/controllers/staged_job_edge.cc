// StagedJobController: what the edge nodes hold of a job (staged_job_controller.h, step 6).
#include <algorithm>
#include <utility>

#include "common/log/log.h"
#include "common/status/macros.h"
#include "globalmanager/controllers/edge_objects.h"
#include "globalmanager/controllers/model_requirements.h"
#include "globalmanager/controllers/stage_data.h"
#include "globalmanager/controllers/stage_machine.h"
#include "globalmanager/controllers/staged_job_controller.h"
#include "globalmanager/controllers/staged_job_status.h"

namespace nereid::gm {
namespace {

using kube::Json;
using kube::ObjectPtr;
namespace v1 = edge::v1;
namespace st = staged_status;

}  // namespace

std::set<std::string> StagedJobController::PlacedNodes(const std::string& key) const {
  return placements_.Nodes(key);
}

std::map<std::string, v1::Resource> StagedJobController::EdgeResources(const Json& object,
                                                                       const StagedJob& job,
                                                                       const StagedRefs& refs,
                                                                       const Json& status) const {
  std::map<std::string, std::string> recorded = st::RecordedStageNodes(status);
  auto node_of = [&](std::string_view stage, const api::PodTemplate& tmpl) {
    std::string pinned = st::PinnedNode(tmpl, refs.dataset_node);
    if (!pinned.empty()) return pinned;
    auto it = recorded.find(st::StageNodeKey(stage));
    return it == recorded.end() ? std::string() : it->second;
  };
  v1::StageNodes nodes;
  nodes.set_train(node_of(stages::kTrain, job.train_template));
  nodes.set_eval(node_of(stages::kEval, job.eval_template));
  nodes.set_deploy(node_of(stages::kDeploy, job.deploy_template));

  const std::vector<api::Condition> conditions = st::ConditionsOf(status);
  v1::JobStage current;
  if (!conditions.empty()) {
    const api::Condition& latest = conditions.back();
    current.set_stage(latest.stage);
    current.set_type(latest.type);
    const api::Condition* source =
        latest.type == stages::kWaiting ? st::PreviousStageData(conditions, latest.stage) : &latest;
    if (source != nullptr) {
      const Json data = ParseStageData(source->data);
      if (data.contains("input")) InputToProto(data["input"], current.mutable_input());
      if (data.contains("output")) OutputToProto(data["output"], current.mutable_output());
    }
  }
  v1::Resource resource;
  *resource.mutable_ref() = EdgeRef(kind_->kind(), object);
  kind_->FillEdgeSpec(job, nodes, current, &resource);
  resource.set_version(EdgeVersion(object, resource));

  std::map<std::string, v1::Resource> out;
  for (const std::string& node : {refs.dataset_node, nodes.train(), nodes.eval(), nodes.deploy()}) {
    if (!node.empty()) out[node] = resource;
  }
  return out;
}

void StagedJobController::RequireModels(const std::string& key, const StagedJob& job,
                                        const StagedRefs& refs, const Json& status) {
  if (context().models == nullptr) return;
  std::map<std::string, std::string> recorded = st::RecordedStageNodes(status);
  auto node_of = [&](std::string_view stage, const api::PodTemplate& tmpl) {
    std::string pinned = st::PinnedNode(tmpl, refs.dataset_node);
    return pinned.empty() ? recorded[st::StageNodeKey(stage)] : pinned;
  };
  const std::string train = node_of(stages::kTrain, job.train_template);
  const std::string eval = node_of(stages::kEval, job.eval_template);
  const std::string deploy = node_of(stages::kDeploy, job.deploy_template);
  std::vector<ModelNeed> needs;
  auto need = [&](const std::string& model, std::initializer_list<std::string> nodes) {
    if (model.empty()) return;
    for (const std::string& node : nodes) {
      if (!node.empty()) needs.push_back({kube::MakeKey(job.meta.ns, model), node});
    }
  };
  need(job.initial_model, {refs.dataset_node, train});
  need(job.deploy_model, {refs.dataset_node, eval, deploy});
  need(job.initial_eval_model, {refs.dataset_node, eval});
  std::sort(needs.begin(), needs.end());
  needs.erase(std::unique(needs.begin(), needs.end()), needs.end());
  context().models->SetRequirements(Requester(key), needs);
}

absl::Status StagedJobController::PrimeEdge() {
  int placed = 0;
  for (const ObjectPtr& object : jobs_->GetLister().List()) {
    if (kube::IsBeingDeleted(*object)) continue;
    std::vector<kube::StatusCause> causes;
    StagedJob job = ParseAndCheck(*object, &causes);
    if (!causes.empty()) continue;
    StagedRefs refs;
    std::string reason;
    std::string message;
    if (!Resolve(job, &refs, &reason, &message)) continue;
    const Json status = st::StatusOf(*object);
    const std::string key = kube::Key(*object);
    RequireModels(key, job, refs, status);
    RETURN_IF_ERROR(placements_.Sync(key, EdgeResources(*object, job, refs, status)));
    ++placed;
  }
  LOG(INFO) << kind_->controller_name() << " controller: " << placed
            << " jobs in the edge registry";
  return absl::OkStatus();
}

}  // namespace nereid::gm
