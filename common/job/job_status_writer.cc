#include "common/job/job_status_writer.h"

#include <string>

#include "common/status/macros.h"

namespace nereid::job {

using kube::Json;

namespace {

// Applies the JSON patch `patch` to the object's status subresource and raises the status fence.
absl::Status PatchStatus(kube::KubeClient* client, const kube::Resource& resource,
                         const Json& object, const Json& patch, Expectations* expectations) {
  ASSIGN_OR_RETURN(Json written,
                   client->Patch(resource, kube::Namespace(object), kube::Name(object),
                                 kube::PatchType::kJson, patch, "status"));
  if (expectations != nullptr) {
    expectations->ExpectStatus(kube::Key(object), kube::ResourceVersion(written));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteJobStatus(kube::KubeClient* client, const kube::Resource& resource,
                            const Json& object, const Json& status_json,
                            Expectations* expectations) {
  return PatchStatus(client, resource, object,
                     Json::array({{{"op", "add"}, {"path", "/status"}, {"value", status_json}}}),
                     expectations);
}

bool IsJobStatusKey(std::string_view key) {
  for (std::string_view owned :
       {"phase", "conditions", "replicaStatuses", "taskStatus", "taskSummary", "restarts",
        "startTime", "completionTime", "lastReconcileTime"}) {
    if (key == owned) return true;
  }
  return false;
}

absl::Status WriteJobStatusFields(kube::KubeClient* client, const kube::Resource& resource,
                                  const Json& object, const Json& status_json,
                                  Expectations* expectations) {
  const Json* current = kube::FindPath(object, "status");
  if (current == nullptr || !current->is_object() || !status_json.is_object()) {
    return WriteJobStatus(client, resource, object, status_json, expectations);
  }
  // Keys are JSON-pointer escaped (none of ours needs it, a kind's might).
  auto pointer = [](const std::string& key) {
    std::string out = "/status/";
    for (char c : key) {
      if (c == '~') {
        out += "~0";
      } else if (c == '/') {
        out += "~1";
      } else {
        out += c;
      }
    }
    return out;
  };
  Json patch = Json::array();
  for (const auto& [key, value] : status_json.items()) {
    patch.push_back({{"op", "add"}, {"path", pointer(key)}, {"value", value}});
  }
  for (const auto& [key, value] : current->items()) {
    if (IsJobStatusKey(key) && !status_json.contains(key)) {
      patch.push_back({{"op", "remove"}, {"path", pointer(key)}});
    }
  }
  return PatchStatus(client, resource, object, patch, expectations);
}

}  // namespace nereid::job
