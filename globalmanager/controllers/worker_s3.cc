#include "globalmanager/controllers/worker_s3.h"

#include <set>
#include <string>

namespace nereid::gm {
namespace {

using kube::Json;

// `list` as a JSON array (created when absent or malformed).
Json& ArrayAt(Json* object, const char* field) {
  Json& list = (*object)[field];
  if (!list.is_array()) list = Json::array();
  return list;
}

// Appends each entry of `entries` whose `key` value the list does not have yet.
void AppendMissing(Json* list, const Json& entries, const char* key) {
  std::set<std::string> present;
  for (const Json& e : *list) {
    if (e.is_object() && e.contains(key) && e[key].is_string()) {
      present.insert(e[key].get<std::string>());
    }
  }
  for (const Json& e : entries) {
    if (present.insert(e[key].get<std::string>()).second) list->push_back(e);
  }
}

}  // namespace

void AddS3Storage(Json* spec, const std::vector<s3::ResolvedUrl>& downloads,
                  bool workers_need_credential, const WorkerS3Options& options) {
  const Json credential_env =
      options.secret_name.empty()
          ? Json::array()
          : s3::CredentialEnv(
                {options.secret_name, options.credential, options.literal_credentials});
  Json& containers = ArrayAt(spec, "containers");
  if (!downloads.empty()) {
    Json volumes = Json::array({s3::DownloadsVolume()});
    for (const s3::ResolvedUrl& url : downloads) {
      if (url.indirect && !url.host_path.empty()) volumes.push_back(s3::HostPathVolume(url));
    }
    AppendMissing(&ArrayAt(spec, "volumes"), volumes, "name");
    const Json mount = Json::array({s3::WorkerDownloadsMount()});
    for (Json& container : containers) {
      if (container.is_object()) {
        AppendMissing(&ArrayAt(&container, "volumeMounts"), mount, "mountPath");
      }
    }
    s3::InitializerOptions initializer;
    initializer.image = options.initializer_image;
    AppendMissing(&ArrayAt(spec, "initContainers"),
                  Json::array({s3::InitializerContainer(downloads, credential_env, initializer)}),
                  "name");
  }
  if (workers_need_credential) {
    for (Json& container : containers) {
      if (container.is_object()) AppendMissing(&ArrayAt(&container, "env"), credential_env, "name");
    }
  }
}

}  // namespace nereid::gm
