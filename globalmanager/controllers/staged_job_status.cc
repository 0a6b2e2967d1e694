#include "globalmanager/controllers/staged_job_status.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/api/validation.h"
#include "common/strings/absl_compat.h"
#include "globalmanager/controllers/placement.h"
#include "globalmanager/controllers/stage_data.h"
#include "globalmanager/controllers/stage_machine.h"

namespace nereid::gm::staged_status {

using kube::Json;

std::string Lower(std::string_view s) { return absl::AsciiStrToLower(ToAbsl(s)); }

Json StatusOf(const Json& object) {
  const Json* status = kube::FindPath(object, "status");
  return status != nullptr && status->is_object() ? *status : Json::object();
}

std::vector<api::Condition> ConditionsOf(const Json& status) {
  api::FieldReader reader;  // A malformed history is read as far as it goes.
  return api::ReadConditions(status, "status", &reader);
}

void PutConditions(const std::vector<api::Condition>& conditions, Json* status) {
  Json list = Json::array();
  for (const api::Condition& c : conditions) list.push_back(c.ToJson());
  (*status)["conditions"] = std::move(list);
}

void SetSummary(const std::vector<api::Condition>& conditions, Json* status) {
  if (conditions.empty()) return;
  (*status)["stage"] = conditions.back().stage;
  (*status)["stageState"] = conditions.back().type;
}

int64_t IntAt(const Json& obj, const char* key) {
  if (!obj.is_object()) return 0;
  auto it = obj.find(key);
  return it != obj.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

StageRun StageRun::From(const Json& status_json) {
  StageRun r;
  const Json* pods = kube::FindPath(status_json, kStagePods);
  if (pods == nullptr || !pods->is_object()) return r;
  r.stage = kube::StringAt(*pods, "stage");
  r.run = IntAt(*pods, "run");
  api::FieldReader reader;
  r.status = job::ReadJobStatus(*pods, "status.stagePods", &reader);
  return r;
}

Json StageRun::ToJson() const {
  Json json = status.ToJson();
  if (!json.is_object()) json = Json::object();
  json["stage"] = stage;
  json["run"] = run;
  return json;
}

std::map<std::string, std::string> RecordedStageNodes(const Json& status) {
  std::map<std::string, std::string> recorded;
  if (const Json* nodes = kube::FindPath(status, kStageNodes); nodes && nodes->is_object()) {
    for (const auto& [stage, node] : nodes->items()) {
      if (node.is_string()) recorded[stage] = node.get<std::string>();
    }
  }
  return recorded;
}

std::string StageNodeKey(std::string_view stage) { return Lower(stage); }

std::string PinnedNode(const api::PodTemplate& pod_template, const std::string& dataset_node) {
  const std::string node = api::TemplateNodeName(pod_template);
  if (!node.empty()) return node;
  const Json* spec = kube::FindPath(pod_template, "spec");
  if (spec != nullptr && SelectsNodes(*spec)) return "";
  return dataset_node;
}

std::string PodPhase(const Json& pod) { return kube::StringAt(pod, "status.phase"); }

bool Finished(const Json& pod) {
  const std::string phase = PodPhase(pod);
  return phase == "Succeeded" || phase == "Failed";
}

const api::Condition* PreviousStageData(const std::vector<api::Condition>& conditions,
                                        std::string_view stage) {
  std::string_view prev = stage == stages::kEval     ? stages::kTrain
                          : stage == stages::kDeploy ? stages::kEval
                                                     : stages::kDeploy;
  for (auto it = conditions.rbegin(); it != conditions.rend(); ++it) {
    if (it->stage == prev && it->type == stages::kCompleted) return &*it;
    if (it->stage == stage && it->type != stages::kWaiting) break;  // An older round.
  }
  return nullptr;
}

std::string LastTrainOutput(const std::vector<api::Condition>& conditions, const Json& status) {
  for (auto it = conditions.rbegin(); it != conditions.rend(); ++it) {
    if (it->stage != stages::kTrain || it->type != stages::kCompleted) continue;
    std::vector<std::string> urls = ModelUrls(OutputModels(ParseStageData(it->data)));
    if (!urls.empty()) return urls.front();
  }
  return kube::StringAt(status, kLastTrainedModel);
}

kube::EventType EventTypeFor(std::string_view condition_type) {
  return condition_type == stages::kFailed ? kube::EventType::kWarning : kube::EventType::kNormal;
}

std::string EventReason(const api::Condition& c) { return absl::StrCat(c.stage, c.type); }

}  // namespace nereid::gm::staged_status
