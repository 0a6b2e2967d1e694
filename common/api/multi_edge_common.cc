#include "common/api/multi_edge_common.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "common/strings/absl_compat.h"

namespace nereid::api {

using kube::Json;

const std::vector<std::string_view>& InlineDeploymentExtraKeys() {
  static const std::vector<std::string_view> keys = {
      "selector", "strategy", "minReadySeconds", "revisionHistoryLimit",
      "progressDeadlineSeconds", "paused"};
  return keys;
}

void InlineDeploymentSpec::PutInto(Json* json) const {
  if (replicas.has_value()) (*json)["replicas"] = *replicas;
  if (!pod_template.is_null()) (*json)["template"] = pod_template;
  for (const auto& [key, value] : extra.items()) (*json)[key] = value;
}

InlineDeploymentSpec ReadInlineDeployment(const Json& obj, std::string_view path,
                                          FieldReader* reader) {
  InlineDeploymentSpec spec;
  std::optional<int64_t> replicas =
      reader->Int(obj, "replicas", path, std::numeric_limits<int32_t>::min(),
                  std::numeric_limits<int32_t>::max());
  if (replicas.has_value()) spec.replicas = static_cast<int32_t>(*replicas);
  spec.pod_template = ReadPodTemplate(obj, "template", path, reader);
  reader->Object(obj, "selector", path);  // Type check only.
  reader->Object(obj, "strategy", path);
  reader->Int(obj, "minReadySeconds", path, 0, std::numeric_limits<int32_t>::max());
  reader->Int(obj, "revisionHistoryLimit", path, 0, std::numeric_limits<int32_t>::max());
  reader->Int(obj, "progressDeadlineSeconds", path, 1, std::numeric_limits<int32_t>::max());
  reader->Bool(obj, "paused", path);
  for (std::string_view key : InlineDeploymentExtraKeys()) {
    if (const Json* value = FieldReader::Get(obj, key)) spec.extra[std::string(key)] = *value;
  }
  return spec;
}

void ValidateInlineDeployment(const InlineDeploymentSpec& spec, std::string_view path,
                              std::string_view worker, Causes* out) {
  if (spec.replicas.has_value() && *spec.replicas < 0) {
    AddInvalid(JoinPath(path, "replicas"),
               absl::StrCat("replicas must not be negative, got ", *spec.replicas), out);
  }
  const std::string template_field = JoinPath(path, "template");
  ValidatePodTemplate(spec.pod_template, template_field, worker, out);
  const Json* match_labels = kube::FindPath(spec.extra, "selector.matchLabels");
  if (match_labels == nullptr || !match_labels->is_object() || !spec.pod_template.is_object()) {
    return;
  }
  const Json* labels = kube::FindPath(spec.pod_template, "metadata.labels");
  for (const auto& [key, value] : match_labels->items()) {
    if (labels == nullptr || !labels->is_object() || !labels->contains(key) ||
        (*labels)[key] != value) {
      AddInvalid(JoinPath(path, "selector.matchLabels"),
                 absl::StrCat("selector.matchLabels ", key, "=", value.dump(),
                              " is not among the ", ToAbsl(worker),
                              " template's labels (a Deployment's selector must match its "
                              "template)"),
                 out);
    }
  }
}

Json TemplateWorker::ToJson() const {
  Json json = Json::object();
  if (!pod_template.is_null()) json["template"] = pod_template;
  return json;
}

TemplateWorker ReadTemplateWorker(const Json& obj, std::string_view path, FieldReader* reader) {
  TemplateWorker worker;
  worker.pod_template = ReadPodTemplate(obj, "template", path, reader);
  return worker;
}

std::vector<TemplateWorker> ReadTemplateWorkers(const Json& obj, std::string_view key,
                                                std::string_view parent, FieldReader* reader) {
  std::vector<TemplateWorker> out;
  const Json* list = reader->Array(obj, key, parent);
  if (list == nullptr) return out;
  const std::string path = JoinPath(parent, key);
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string item = IndexPath(path, i);
    if (!(*list)[i].is_object()) {
      reader->AddTypeError(item, "object", (*list)[i]);
      continue;
    }
    out.push_back(ReadTemplateWorker((*list)[i], item, reader));
  }
  return out;
}

void ValidateTemplateWorkers(const std::vector<TemplateWorker>& workers, std::string_view field,
                             std::string_view worker, Causes* out) {
  if (workers.empty()) {
    AddRequired(std::string(field), absl::StrCat("at least one ", ToAbsl(worker), " is required"),
                out);
    return;
  }
  for (size_t i = 0; i < workers.size(); ++i) {
    ValidatePodTemplate(workers[i].pod_template, JoinPath(IndexPath(field, i), "template"), worker,
                        out);
  }
}

}  // namespace nereid::api
