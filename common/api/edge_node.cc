#include "common/api/edge_node.h"

namespace nereid::api {
namespace {

template <typename T>
kube::Json OrNull(const std::optional<T>& value) {
  return value.has_value() ? kube::Json(*value) : kube::Json(nullptr);
}

kube::Json OrNull(const std::string& value) {
  return value.empty() ? kube::Json(nullptr) : kube::Json(value);
}

}  // namespace

const kube::Resource& EdgeNodesResource() {
  static const kube::Resource resource{
      .group = "sedna.io",
      .version = "v1alpha1",
      .resource = "edgenodes",
      .kind = "EdgeNode",
      .namespaced = false,
  };
  return resource;
}

kube::Json EdgeNodeFailingObject::ToJson() const {
  kube::Json json = {{"kind", kind}, {"namespace", ns}, {"name", name}, {"reason", reason}};
  if (!message.empty()) json["message"] = message;
  return json;
}

kube::Json EdgeNodeStatus::ToJson() const {
  kube::Json json = {
      {"connected", connected},
      {"since", since.has_value() ? kube::Json(kube::FormatTimestamp(*since)) : kube::Json()},
      {"servedBy", OrNull(served_by)},
      {"relayed", relayed ? kube::Json(true) : kube::Json(nullptr)},
      {"lcVersion", OrNull(lc_version)},
      {"lcCommit", OrNull(lc_commit)},
      {"datasets", OrNull(datasets)},
      {"models", OrNull(models)},
      {"workers", OrNull(workers)},
      {"failing", OrNull(failing)},
      {"firstFailing", first_failing.has_value() ? first_failing->ToJson() : kube::Json()},
      {"outboxDepth", OrNull(outbox_depth)},
      {"databaseWritable", OrNull(database_writable)},
  };
  kube::Json conditions_json = kube::Json::array();
  for (const Condition& condition : conditions) conditions_json.push_back(condition.ToJson());
  json["conditions"] = std::move(conditions_json);
  return json;
}

}  // namespace nereid::api
