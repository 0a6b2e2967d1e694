#pragma once

// Types shared by several sedna.io kinds, with Sedna's JSON spellings: key/value parameters and
// metrics, {name} references, hard example mining, IL/LL triggers, conditions (with a bounded
// append: Sedna's condition lists grow forever), object metadata and the stage-machine status of
// incremental/lifelong learning jobs.
//
// Worker templates are the user's PodTemplateSpec kept as JSON (PodTemplate): Nereid never
// re-serializes them through a typed model, so every field a user writes reaches the pod unchanged.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "common/api/json_fields.h"
#include "common/kube/object.h"

namespace nereid::api {

// A worker's full PodTemplateSpec ({"metadata": ..., "spec": ...}) exactly as the user wrote it.
// null when the manifest has none (Validate() reports that).
using PodTemplate = kube::Json;

// {"key": ..., "value": ...}: Sedna's ParaSpec (hard-example-mining parameters) and Metric.
struct KeyValue {
  std::string key;
  std::string value;

  kube::Json ToJson() const;
  friend bool operator==(const KeyValue&, const KeyValue&) = default;
};
using ParaSpec = KeyValue;
using Metric = KeyValue;

// {"name": ...}: a reference to a Model or Dataset in the object's namespace.
struct NamedRef {
  std::string name;

  kube::Json ToJson() const;
  friend bool operator==(const NamedRef&, const NamedRef&) = default;
};

struct HardExampleMining {
  std::string name;  // Algorithm, e.g. "IBT", "CrossEntropy".
  std::vector<ParaSpec> parameters;
  // JSON "parameters" is present (an empty list too): Sedna's workers get "[]" then, "null" when
  // it is absent.
  bool parameters_set = false;

  kube::Json ToJson() const;
  friend bool operator==(const HardExampleMining&, const HardExampleMining&) = default;
};

// The dataset of an incremental/lifelong learning job: {name, trainProb}.
struct JobDataset {
  std::string name;
  double train_prob = 0;  // Fraction of new samples used for training, in [0, 1]; rest is eval.

  kube::Json ToJson() const;
  friend bool operator==(const JobDataset&, const JobDataset&) = default;
};

// ---- IL/LL triggers: fire when the timer window (if any) contains the current time AND the
// condition holds for the metric (e.g. num_of_samples > 500; precision_delta[0] >= 0.01).
inline constexpr int64_t kDefaultCheckPeriodSeconds = 60;

struct Timer {
  std::string start;  // "HH:MM", 00:00-23:59; a window with start > end wraps midnight.
  std::string end;

  kube::Json ToJson() const;
  friend bool operator==(const Timer&, const Timer&) = default;
};

struct TriggerCondition {
  std::string op;  // JSON "operator": one of TriggerOperators().
  double threshold = 0;
  std::string metric;  // "num_of_samples", "precision_delta", "precision_delta[0]", ...

  kube::Json ToJson() const;
  friend bool operator==(const TriggerCondition&, const TriggerCondition&) = default;
};

struct Trigger {
  std::optional<int64_t> check_period_seconds;  // Absent: kDefaultCheckPeriodSeconds.
  std::optional<Timer> timer;
  TriggerCondition condition;

  int64_t CheckPeriodSeconds() const {
    return check_period_seconds.value_or(kDefaultCheckPeriodSeconds);
  }
  kube::Json ToJson() const;
  friend bool operator==(const Trigger&, const Trigger&) = default;
};

// Sedna's operators (pkg/localcontroller/trigger/trigger.go): > >= = == != < <= and
// gt ge eq ne lt le; equality uses a 1e-6 tolerance.
const std::vector<std::string_view>& TriggerOperators();
bool IsTriggerOperator(std::string_view op);
// "HH:MM" with HH 00-23 and MM 00-59, or "24:00" (end of day) — two digits each, because Sedna
// compares them as strings.
bool IsTimeOfDay(std::string_view text);

// ---- Conditions. One struct for every kind, the common job library's included; fields a kind does
// not use stay empty and are not written. JI types: Pending|Running|Failed; FL: Training|Complete|
// Failed; IL/LL: Waiting|Ready|Starting|Running|Completed|Failed with a stage Train|Eval|Deploy;
// the job library (common/job): Created|Running|Restarting|Succeeded|Failed|Suspended.
struct Condition {
  std::string type;
  std::string status = "True";  // "True" | "False" | "Unknown".
  std::string stage;            // IL/LL only.
  std::optional<absl::Time> last_heartbeat_time;
  std::optional<absl::Time> last_transition_time;
  std::optional<absl::Time> last_probe_time;   // FL only.
  std::optional<absl::Time> last_update_time;  // The job library's (lastUpdateTime) only.
  std::string reason;
  std::string message;
  std::string data;  // IL/LL only: the JSON blob of a stage's input/output, as a string.

  // A condition with these four fields and no times.
  static Condition Of(std::string_view type, std::string_view status, std::string_view reason,
                      std::string_view message);
  bool IsTrue() const { return status == "True"; }
  kube::Json ToJson() const;
  friend bool operator==(const Condition&, const Condition&) = default;
};

// status.conditions of a status its controller rewrites: malformed entries (and ones without a
// type) are skipped, never an error.
std::vector<Condition> ReadOwnConditions(const kube::Json& status);
// The JSON list of `conditions` (an array, empty or not).
kube::Json ConditionsToJson(const std::vector<Condition>& conditions);

// The CRDs cap conditions at this many items (maxItems), so a status write with more is rejected.
inline constexpr size_t kMaxConditions = 10;

// Records `condition` at `now`. If the latest condition has the same type, stage and status, it is
// updated in place when its reason, message or data differ (and lastHeartbeatTime set to `now`;
// lastTransitionTime kept), and left alone when nothing differs, so a level-triggered reconcile
// does not write status on every pass. Otherwise `condition` is appended with both times set to
// `now`. Then the oldest entries are dropped so at most `max_conditions` remain. Returns true when
// anything changed (i.e. the status needs writing).
bool AppendCondition(std::vector<Condition>* conditions, Condition condition, absl::Time now,
                     size_t max_conditions = kMaxConditions);
// The most recent condition (the last one), or nullptr.
const Condition* LatestCondition(const std::vector<Condition>& conditions);

// One condition per type (Kubernetes style) instead of a history: sets the condition of `type`:
//   absent                            → appended, lastTransitionTime = lastHeartbeatTime = now
//   other status                      → replaced, lastTransitionTime = lastHeartbeatTime = now
//   same status, other reason/message → updated in place, lastHeartbeatTime = now
//   nothing differs                   → untouched (a level-triggered pass writes nothing)
// After a change the oldest entries are dropped beyond kMaxConditions. Returns whether anything
// changed. (The job library's conditions follow its own algebra: common/job/conditions.h.)
bool SetCondition(std::vector<Condition>* conditions, std::string_view type,
                  std::string_view status, std::string_view reason, std::string_view message,
                  absl::Time now);
// The condition of `type`, or nullptr.
const Condition* FindCondition(const std::vector<Condition>& conditions, std::string_view type);

// ---- Metadata of a parsed object (what controllers need; the API server owns the rest).
struct ObjectMeta {
  std::string name;
  std::string ns;  // JSON "namespace".
  std::string uid;
  std::string resource_version;
  int64_t generation = 0;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::optional<absl::Time> creation_timestamp;

  // "namespace/name".
  std::string Key() const;
  kube::Json ToJson() const;
  static ObjectMeta FromJson(const kube::Json& object);
};

// ---- IL/LL stage machine (Train -> Eval -> Deploy -> Train ...).
namespace stages {
inline constexpr std::string_view kTrain = "Train";
inline constexpr std::string_view kEval = "Eval";
inline constexpr std::string_view kDeploy = "Deploy";
}  // namespace stages
namespace stage_states {
inline constexpr std::string_view kWaiting = "Waiting";
inline constexpr std::string_view kReady = "Ready";
inline constexpr std::string_view kStarting = "Starting";
inline constexpr std::string_view kRunning = "Running";
inline constexpr std::string_view kCompleted = "Completed";
inline constexpr std::string_view kFailed = "Failed";
}  // namespace stage_states

// Status of IncrementalLearningJob and LifelongLearningJob. `conditions`, `startTime` and
// `completionTime` are Sedna's; `stage`, `stageState`, `rounds` and `observedGeneration` are
// Nereid's bounded summary (additive), so `kubectl get il` answers "where is it?" without reading a
// condition list:
//   stage       the current stage: Train | Eval | Deploy.
//   stageState  the state of that stage: Waiting | Ready | Starting | Running | Completed | Failed
//               (the type of the latest condition).
//   rounds      completed training rounds (incremented when a Train stage completes).
struct StagedJobStatus {
  std::vector<Condition> conditions;
  std::optional<absl::Time> start_time;
  std::optional<absl::Time> completion_time;
  std::string stage;
  std::string stage_state;
  std::optional<int64_t> rounds;
  std::optional<int64_t> observed_generation;

  // Writes the fields above into `status` (an object).
  void ToJson(kube::Json* status) const;
  // Reads them from `status` (the status object, located at "status").
  void ReadFrom(const kube::Json& status, FieldReader* reader);
  friend bool operator==(const StagedJobStatus&, const StagedJobStatus&) = default;
};

// ---- Parsing helpers shared by the kinds (they record type errors in `reader`).
KeyValue ReadKeyValue(const kube::Json& obj, std::string_view path, FieldReader* reader);
std::vector<KeyValue> ReadKeyValues(const kube::Json& obj, std::string_view key,
                                    std::string_view parent, FieldReader* reader);
NamedRef ReadNamedRef(const kube::Json& obj, std::string_view path, FieldReader* reader);
// The {name} object at obj[key], or nullopt when absent.
std::optional<NamedRef> ReadOptionalRef(const kube::Json& obj, std::string_view key,
                                        std::string_view parent, FieldReader* reader);
HardExampleMining ReadHardExampleMining(const kube::Json& obj, std::string_view path,
                                        FieldReader* reader);
JobDataset ReadJobDataset(const kube::Json& obj, std::string_view path, FieldReader* reader);
Trigger ReadTrigger(const kube::Json& obj, std::string_view path, FieldReader* reader);
// obj[key] as the user's PodTemplateSpec (must be an object when present); null when absent.
PodTemplate ReadPodTemplate(const kube::Json& obj, std::string_view key, std::string_view parent,
                            FieldReader* reader);
std::vector<Condition> ReadConditions(const kube::Json& status, std::string_view parent,
                                      FieldReader* reader);
// Checks apiVersion/kind when present; records a cause when they name something else.
void CheckTypeMeta(const kube::Json& object, std::string_view kind, FieldReader* reader);
// The whole-object envelope: apiVersion, kind, metadata.
kube::Json ObjectEnvelope(std::string_view kind, const ObjectMeta& metadata);
// Writes `time` as RFC 3339 into json[key] when set.
void PutTime(kube::Json* json, std::string_view key, const std::optional<absl::Time>& time);

// The node a worker template pins its pod to (template.spec.nodeName), or "".
std::string TemplateNodeName(const PodTemplate& pod_template);
// The PodSpec of a worker template (template.spec), or an empty object when it has none.
const kube::Json& TemplatePodSpec(const PodTemplate& pod_template);

}  // namespace nereid::api
