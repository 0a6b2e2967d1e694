#include "common/api/common_types.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/api/sedna_contract.h"
#include "common/strings/absl_compat.h"

namespace nereid::api {

using kube::Json;

Json KeyValue::ToJson() const { return Json{{"key", key}, {"value", value}}; }

Json NamedRef::ToJson() const { return Json{{"name", name}}; }

Json HardExampleMining::ToJson() const {
  Json json = {{"name", name}};
  if (!parameters.empty() || parameters_set) {
    Json params = Json::array();
    for (const ParaSpec& p : parameters) params.push_back(p.ToJson());
    json["parameters"] = std::move(params);
  }
  return json;
}

Json JobDataset::ToJson() const { return Json{{"name", name}, {"trainProb", train_prob}}; }

Json Timer::ToJson() const { return Json{{"start", start}, {"end", end}}; }

Json TriggerCondition::ToJson() const {
  return Json{{"operator", op}, {"threshold", threshold}, {"metric", metric}};
}

Json Trigger::ToJson() const {
  Json json = {{"condition", condition.ToJson()}};
  if (check_period_seconds.has_value()) json["checkPeriodSeconds"] = *check_period_seconds;
  if (timer.has_value()) json["timer"] = timer->ToJson();
  return json;
}

const std::vector<std::string_view>& TriggerOperators() {
  static const std::vector<std::string_view> ops = {
      ">", ">=", "=", "==", "!=", "<", "<=", "gt", "ge", "eq", "ne", "lt", "le"};
  return ops;
}

bool IsTriggerOperator(std::string_view op) {
  const auto& ops = TriggerOperators();
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

bool IsTimeOfDay(std::string_view t) {
  if (t == "24:00") return true;  // End of day; Sedna's own lifelong-learning example uses it.
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (t.size() != 5 || t[2] != ':') return false;
  if (!digit(t[0]) || !digit(t[1]) || !digit(t[3]) || !digit(t[4])) return false;
  int hours = (t[0] - '0') * 10 + (t[1] - '0');
  int minutes = (t[3] - '0') * 10 + (t[4] - '0');
  return hours <= 23 && minutes <= 59;
}

void PutTime(Json* json, std::string_view key, const std::optional<absl::Time>& time) {
  if (time.has_value()) (*json)[std::string(key)] = kube::FormatTimestamp(*time);
}

Condition Condition::Of(std::string_view type, std::string_view status, std::string_view reason,
                        std::string_view message) {
  Condition c;
  c.type = std::string(type);
  c.status = std::string(status);
  c.reason = std::string(reason);
  c.message = std::string(message);
  return c;
}

Json Condition::ToJson() const {
  Json json = {{"type", type}, {"status", status}};
  if (!stage.empty()) json["stage"] = stage;
  PutTime(&json, "lastHeartbeatTime", last_heartbeat_time);
  PutTime(&json, "lastTransitionTime", last_transition_time);
  PutTime(&json, "lastProbeTime", last_probe_time);
  PutTime(&json, "lastUpdateTime", last_update_time);
  if (!reason.empty()) json["reason"] = reason;
  if (!message.empty()) json["message"] = message;
  if (!data.empty()) json["data"] = data;
  return json;
}

bool AppendCondition(std::vector<Condition>* conditions, Condition condition, absl::Time now,
                     size_t max_conditions) {
  bool changed = false;
  Condition* last = conditions->empty() ? nullptr : &conditions->back();
  if (last != nullptr && last->type == condition.type && last->stage == condition.stage &&
      last->status == condition.status) {
    // Same state: only a changed reason/message/data is news; rewriting the heartbeat on every
    // reconcile would turn into a status write per resync.
    if (last->reason != condition.reason || last->message != condition.message ||
        last->data != condition.data) {
      last->reason = std::move(condition.reason);
      last->message = std::move(condition.message);
      last->data = std::move(condition.data);
      last->last_heartbeat_time = now;
      if (condition.last_probe_time.has_value()) last->last_probe_time = now;
      changed = true;
    }
  } else {
    condition.last_heartbeat_time = now;
    condition.last_transition_time = now;
    if (condition.last_probe_time.has_value()) condition.last_probe_time = now;
    conditions->push_back(std::move(condition));
    changed = true;
  }
  if (max_conditions == 0) max_conditions = 1;  // The latest condition is always kept.
  if (conditions->size() > max_conditions) {
    conditions->erase(
        conditions->begin(),
        conditions->begin() + static_cast<ptrdiff_t>(conditions->size() - max_conditions));
    changed = true;
  }
  return changed;
}

const Condition* LatestCondition(const std::vector<Condition>& conditions) {
  return conditions.empty() ? nullptr : &conditions.back();
}

std::vector<Condition> ReadOwnConditions(const Json& status) {
  if (!status.is_object()) return {};
  FieldReader lenient;
  std::vector<Condition> conditions = ReadConditions(status, "status", &lenient);
  std::erase_if(conditions, [](const Condition& c) { return c.type.empty(); });
  return conditions;
}

Json ConditionsToJson(const std::vector<Condition>& conditions) {
  Json list = Json::array();
  for (const Condition& c : conditions) list.push_back(c.ToJson());
  return list;
}

bool SetCondition(std::vector<Condition>* conditions, std::string_view type,
                  std::string_view status, std::string_view reason, std::string_view message,
                  absl::Time now) {
  auto it = std::find_if(conditions->begin(), conditions->end(),
                         [&](const Condition& c) { return c.type == type; });
  if (it == conditions->end() || it->status != status) {
    Condition condition = Condition::Of(type, status, reason, message);
    condition.last_transition_time = now;
    condition.last_heartbeat_time = now;
    if (it == conditions->end()) {
      conditions->push_back(std::move(condition));
    } else {
      *it = std::move(condition);
    }
  } else if (it->reason != reason || it->message != message) {
    it->reason = std::string(reason);
    it->message = std::string(message);
    it->last_heartbeat_time = now;
  } else {
    return false;
  }
  while (conditions->size() > kMaxConditions) conditions->erase(conditions->begin());
  return true;
}

const Condition* FindCondition(const std::vector<Condition>& conditions, std::string_view type) {
  for (const Condition& c : conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

std::string ObjectMeta::Key() const { return kube::MakeKey(ns, name); }

Json ObjectMeta::ToJson() const {
  Json json = Json::object();
  if (!name.empty()) json["name"] = name;
  if (!ns.empty()) json["namespace"] = ns;
  if (!uid.empty()) json["uid"] = uid;
  if (!resource_version.empty()) json["resourceVersion"] = resource_version;
  if (generation != 0) json["generation"] = generation;
  if (!labels.empty()) json["labels"] = labels;
  if (!annotations.empty()) json["annotations"] = annotations;
  PutTime(&json, "creationTimestamp", creation_timestamp);
  return json;
}

ObjectMeta ObjectMeta::FromJson(const Json& object) {
  ObjectMeta meta;
  meta.name = kube::Name(object);
  meta.ns = kube::Namespace(object);
  meta.uid = kube::Uid(object);
  meta.resource_version = kube::ResourceVersion(object);
  meta.generation = kube::Generation(object);
  meta.labels = kube::Labels(object);
  meta.annotations = kube::Annotations(object);
  meta.creation_timestamp = kube::CreationTimestamp(object);
  return meta;
}

void StagedJobStatus::ToJson(Json* status) const {
  if (!conditions.empty()) (*status)["conditions"] = ConditionsToJson(conditions);
  PutTime(status, "startTime", start_time);
  PutTime(status, "completionTime", completion_time);
  if (!stage.empty()) (*status)["stage"] = stage;
  if (!stage_state.empty()) (*status)["stageState"] = stage_state;
  if (rounds.has_value()) (*status)["rounds"] = *rounds;
  if (observed_generation.has_value()) (*status)["observedGeneration"] = *observed_generation;
}

void StagedJobStatus::ReadFrom(const Json& status, FieldReader* reader) {
  conditions = ReadConditions(status, "status", reader);
  start_time = reader->Time(status, "startTime", "status");
  completion_time = reader->Time(status, "completionTime", "status");
  stage = reader->String(status, "stage", "status").value_or("");
  stage_state = reader->String(status, "stageState", "status").value_or("");
  rounds = reader->Int(status, "rounds", "status", 0);
  observed_generation = reader->Int(status, "observedGeneration", "status", 0);
}

KeyValue ReadKeyValue(const Json& obj, std::string_view path, FieldReader* reader) {
  KeyValue kv;
  if (!obj.is_object()) {
    reader->AddTypeError(std::string(path), "an object with key and value", obj);
    return kv;
  }
  kv.key = reader->String(obj, "key", path).value_or("");
  kv.value = reader->String(obj, "value", path).value_or("");
  return kv;
}

std::vector<KeyValue> ReadKeyValues(const Json& obj, std::string_view key, std::string_view parent,
                                    FieldReader* reader) {
  std::vector<KeyValue> out;
  const Json* list = reader->Array(obj, key, parent);
  if (list == nullptr) return out;
  std::string path = JoinPath(parent, key);
  for (size_t i = 0; i < list->size(); ++i) {
    out.push_back(ReadKeyValue((*list)[i], IndexPath(path, i), reader));
  }
  return out;
}

NamedRef ReadNamedRef(const Json& obj, std::string_view path, FieldReader* reader) {
  NamedRef ref;
  ref.name = reader->String(obj, "name", path).value_or("");
  return ref;
}

std::optional<NamedRef> ReadOptionalRef(const Json& obj, std::string_view key,
                                        std::string_view parent, FieldReader* reader) {
  const Json* ref = reader->Object(obj, key, parent);
  if (ref == nullptr) return std::nullopt;
  return ReadNamedRef(*ref, JoinPath(parent, key), reader);
}

HardExampleMining ReadHardExampleMining(const Json& obj, std::string_view path,
                                        FieldReader* reader) {
  HardExampleMining hem;
  hem.name = reader->String(obj, "name", path).value_or("");
  hem.parameters = ReadKeyValues(obj, "parameters", path, reader);
  const Json* parameters = FieldReader::Get(obj, "parameters");
  hem.parameters_set = parameters != nullptr && parameters->is_array();
  return hem;
}

JobDataset ReadJobDataset(const Json& obj, std::string_view path, FieldReader* reader) {
  JobDataset dataset;
  dataset.name = reader->String(obj, "name", path).value_or("");
  dataset.train_prob = reader->Number(obj, "trainProb", path).value_or(0);
  return dataset;
}

Trigger ReadTrigger(const Json& obj, std::string_view path, FieldReader* reader) {
  Trigger trigger;
  trigger.check_period_seconds = reader->Int(obj, "checkPeriodSeconds", path);
  if (const Json* timer = reader->Object(obj, "timer", path)) {
    std::string timer_path = JoinPath(path, "timer");
    trigger.timer = Timer{reader->String(*timer, "start", timer_path).value_or(""),
                          reader->String(*timer, "end", timer_path).value_or("")};
  }
  if (const Json* cond = reader->Object(obj, "condition", path)) {
    std::string cond_path = JoinPath(path, "condition");
    trigger.condition.op = reader->String(*cond, "operator", cond_path).value_or("");
    trigger.condition.threshold = reader->Number(*cond, "threshold", cond_path).value_or(0);
    trigger.condition.metric = reader->String(*cond, "metric", cond_path).value_or("");
  }
  return trigger;
}

PodTemplate ReadPodTemplate(const Json& obj, std::string_view key, std::string_view parent,
                            FieldReader* reader) {
  const Json* value = reader->Object(obj, key, parent);
  return value == nullptr ? Json(nullptr) : *value;
}

std::vector<Condition> ReadConditions(const Json& status, std::string_view parent,
                                      FieldReader* reader) {
  std::vector<Condition> out;
  const Json* list = reader->Array(status, "conditions", parent);
  if (list == nullptr) return out;
  std::string path = JoinPath(parent, "conditions");
  for (size_t i = 0; i < list->size(); ++i) {
    const Json& item = (*list)[i];
    std::string item_path = IndexPath(path, i);
    if (!item.is_object()) {
      reader->AddTypeError(item_path, "an object", item);
      continue;
    }
    Condition c;
    c.type = reader->String(item, "type", item_path).value_or("");
    c.status = reader->String(item, "status", item_path).value_or("");
    c.stage = reader->String(item, "stage", item_path).value_or("");
    c.last_heartbeat_time = reader->Time(item, "lastHeartbeatTime", item_path);
    c.last_transition_time = reader->Time(item, "lastTransitionTime", item_path);
    c.last_probe_time = reader->Time(item, "lastProbeTime", item_path);
    c.last_update_time = reader->Time(item, "lastUpdateTime", item_path);
    c.reason = reader->String(item, "reason", item_path).value_or("");
    c.message = reader->String(item, "message", item_path).value_or("");
    c.data = reader->String(item, "data", item_path).value_or("");
    out.push_back(std::move(c));
  }
  return out;
}

void CheckTypeMeta(const Json& object, std::string_view kind, FieldReader* reader) {
  std::optional<std::string> api_version = reader->String(object, "apiVersion", "");
  if (api_version.has_value() && *api_version != kApiVersion) {
    reader->AddCause(
        "apiVersion", "FieldValueNotSupported",
        absl::StrCat("must be \"", ToAbsl(kApiVersion), "\", got \"", *api_version, "\""));
  }
  std::optional<std::string> actual_kind = reader->String(object, "kind", "");
  if (actual_kind.has_value() && *actual_kind != kind) {
    reader->AddCause("kind", "FieldValueNotSupported",
                     absl::StrCat("must be \"", ToAbsl(kind), "\", got \"", *actual_kind, "\""));
  }
}

Json ObjectEnvelope(std::string_view kind, const ObjectMeta& metadata) {
  return Json{{"apiVersion", std::string(kApiVersion)},
              {"kind", std::string(kind)},
              {"metadata", metadata.ToJson()}};
}

std::string TemplateNodeName(const PodTemplate& pod_template) {
  return kube::StringAt(pod_template, "spec.nodeName");
}

const kube::Json& TemplatePodSpec(const PodTemplate& pod_template) {
  static const kube::Json kEmpty = kube::Json::object();
  const kube::Json* spec =
      pod_template.is_object() ? kube::FindPath(pod_template, "spec") : nullptr;
  return spec != nullptr && spec->is_object() ? *spec : kEmpty;
}

}  // namespace nereid::api
