#pragma once

// The IncrementalLearningJob / LifelongLearningJob status as the staged controller reads and
// writes it: Sedna's stage history (status.conditions) and summary (stage, stageState), and
// Nereid's additions (staged_job.h: stagePods, stageNodes, jobConditions, ...). Pure functions,
// shared by the reconcile pass, the edge placement and the report handlers.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/api/common_types.h"
#include "common/job/job_status.h"
#include "common/kube/event_recorder.h"
#include "common/kube/object.h"
#include "globalmanager/controllers/spec_validity.h"
#include "globalmanager/controllers/staged_job.h"

namespace nereid::gm::staged_status {

// SpecValid lives in status.jobConditions: status.conditions is Sedna's stage history, whose
// schema allows only stage conditions.
inline constexpr SpecValidityOptions kSpecValidity{.conditions_field = kJobConditions};

std::string Lower(std::string_view s);

// The object's status (an object; {} when it has none).
kube::Json StatusOf(const kube::Json& object);
// The stage history (a malformed one is read as far as it goes).
std::vector<api::Condition> ConditionsOf(const kube::Json& status);
void PutConditions(const std::vector<api::Condition>& conditions, kube::Json* status);
// status.stage / status.stageState from the latest condition.
void SetSummary(const std::vector<api::Condition>& conditions, kube::Json* status);
// An integer field of `obj` (0 when missing or not an integer).
int64_t IntAt(const kube::Json& obj, const char* key);

// The current stage run, as kept in status.stagePods.
struct StageRun {
  std::string stage;
  int64_t run = 0;
  job::JobStatus status;

  static StageRun From(const kube::Json& status_json);
  kube::Json ToJson() const;
};

// status.stageNodes: lower-case stage → node.
std::map<std::string, std::string> RecordedStageNodes(const kube::Json& status);
// The key of a stage in status.stageNodes.
std::string StageNodeKey(std::string_view stage);
// The node a stage's pod is pinned to: the template's nodeName, else the dataset's node unless the
// template selects nodes itself (then the scheduler decides: "").
std::string PinnedNode(const api::PodTemplate& pod_template, const std::string& dataset_node);

std::string PodPhase(const kube::Json& pod);
// Succeeded or Failed.
bool Finished(const kube::Json& pod);

// The data of the condition the LC works from while `stage` waits: the previous stage's latest
// Completed condition (Eval needs the trained model, Deploy the eval metrics).
const api::Condition* PreviousStageData(const std::vector<api::Condition>& conditions,
                                        std::string_view stage);
// The url of the latest training output (LifelongLearningJob's CLOUD_KB_INDEX): from the history
// while it holds a completed training round, else what status.lastTrainedModel remembers.
std::string LastTrainOutput(const std::vector<api::Condition>& conditions,
                            const kube::Json& status);

// The Event of a stage transition: "<Stage><Type>", Warning for Failed.
kube::EventType EventTypeFor(std::string_view condition_type);
std::string EventReason(const api::Condition& c);

}  // namespace nereid::gm::staged_status
