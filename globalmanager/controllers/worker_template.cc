#include "globalmanager/controllers/worker_template.h"

#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/api/sedna_contract.h"
#include "common/api/validation.h"
#include "common/s3/s3_url.h"
#include "common/strings/absl_compat.h"

namespace nereid::gm {
namespace {

using kube::Json;

bool IsHostPath(std::string_view url) { return url.find("://") == std::string_view::npos; }

// The directory a host-path URL is mounted from: its parent, or itself for a directory.
std::string HostDir(std::string_view url, bool is_dir) {
  std::string path(url);
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  if (is_dir) return path;
  size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return "/";
  return path.substr(0, slash);
}

// "/home/data" + an absolute path (no doubled or trailing slash, like Go's filepath.Join).
std::string UnderPrefix(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  std::string out(api::paths::kHostDataPrefix);
  if (path != "/") absl::StrAppend(&out, ToAbsl(path));
  return out;
}

// Sedna's ConvertK8SValidName: a DNS-1123 label made from a host path.
std::string VolumeNameFor(std::string_view host_dir) {
  std::string name;
  for (char c : host_dir) {
    char l = absl::ascii_tolower(static_cast<unsigned char>(c));
    if (absl::ascii_isalnum(static_cast<unsigned char>(l))) {
      name.push_back(l);
    } else if (!name.empty() && name.back() != '-') {
      name.push_back('-');
    }
  }
  if (name.size() > 63) name.resize(63);
  while (!name.empty() && name.back() == '-') name.pop_back();
  return name.empty() ? "sedna-host-root" : name;
}

// Whether a container's env list sets `name` (by value or valueFrom).
std::set<std::string> EnvNames(const Json& container) {
  std::set<std::string> names;
  auto env = container.find("env");
  if (env == container.end() || !env->is_array()) return names;
  for (const Json& e : *env) {
    if (e.is_object() && e.contains("name") && e["name"].is_string()) {
      names.insert(e["name"].get<std::string>());
    }
  }
  return names;
}

Json* ContainersOf(Json* spec) {
  auto containers = spec->find("containers");
  if (containers == spec->end() || !containers->is_array()) return nullptr;
  return &*containers;
}

void AppendEnv(Json* spec, const std::vector<EnvVar>& env) {
  Json* containers = ContainersOf(spec);
  if (containers == nullptr) return;
  for (Json& container : *containers) {
    if (!container.is_object()) continue;
    std::set<std::string> present = EnvNames(container);
    Json& list = container["env"];
    if (!list.is_array()) list = Json::array();
    for (const EnvVar& var : env) {
      if (present.insert(var.name).second) {
        list.push_back({{"name", var.name}, {"value", var.value}});
      }
    }
    if (list.empty()) container.erase("env");
  }
}

// Adds a hostPath volume for `host_dir` (or reuses the user's / an earlier one for the same path)
// and returns its name.
std::string EnsureHostPathVolume(Json* spec, const std::string& host_dir, bool is_dir) {
  Json& volumes = (*spec)["volumes"];
  if (!volumes.is_array()) volumes = Json::array();
  std::set<std::string> taken;
  for (const Json& v : volumes) {
    if (!v.is_object()) continue;
    const std::string name = kube::StringAt(v, "name");
    if (kube::StringAt(v, "hostPath.path") == host_dir) return name;
    taken.insert(name);
  }
  const std::string base = VolumeNameFor(host_dir);
  std::string name = base;
  for (int i = 2; taken.count(name) > 0; ++i) name = absl::StrCat(base, "-", i);
  volumes.push_back({{"name", name},
                     {"hostPath",
                      {{"path", host_dir}, {"type", is_dir ? "DirectoryOrCreate" : "Directory"}}}});
  return name;
}

void MountInContainers(Json* spec, const std::string& volume, const std::string& mount_path,
                       bool read_only) {
  Json* containers = ContainersOf(spec);
  if (containers == nullptr) return;
  for (Json& container : *containers) {
    if (!container.is_object()) continue;
    Json& mounts = container["volumeMounts"];
    if (!mounts.is_array()) mounts = Json::array();
    bool present = false;
    for (const Json& m : mounts) {
      present = present || (m.is_object() && kube::StringAt(m, "mountPath") == mount_path);
    }
    if (present) continue;
    Json mount = {{"name", volume}, {"mountPath", mount_path}};
    if (read_only) mount["readOnly"] = true;
    mounts.push_back(std::move(mount));
  }
}

void SetIfUnset(Json* spec, const char* field, const Json& value) {
  auto it = spec->find(field);
  if (it == spec->end() || it->is_null()) (*spec)[field] = value;
}

std::map<std::string, std::string> AllSelectorLabels(const WorkerOwner& owner,
                                                     const WorkerParams& params) {
  std::map<std::string, std::string> labels = owner.WorkerLabels(params.worker_type);
  for (const auto& [k, v] : params.selector_labels) labels[k] = v;
  return labels;
}

void PutLabels(Json* metadata, const std::map<std::string, std::string>& labels, bool overwrite) {
  Json& target = (*metadata)["labels"];
  if (!target.is_object()) target = Json::object();
  for (const auto& [k, v] : labels) {
    if (overwrite || !target.contains(k)) target[k] = v;
  }
}

}  // namespace

WorkerOwner WorkerOwner::FromObject(std::string_view kind, const Json& object) {
  return WorkerOwner{std::string(kind), kube::Name(object), kube::Namespace(object),
                     kube::Uid(object)};
}

kube::OwnerReference WorkerOwner::ControllerRef() const {
  kube::OwnerReference ref;
  ref.api_version = std::string(api::kApiVersion);
  ref.kind = kind;
  ref.name = name;
  ref.uid = uid;
  ref.controller = true;
  ref.block_owner_deletion = true;
  return ref;
}

std::map<std::string, std::string> WorkerOwner::SelectorLabels() const {
  std::map<std::string, std::string> labels = api::SelectorLabels(kind, name, uid);
  for (auto& [k, v] : labels) v = LabelValue(v);
  return labels;
}

std::map<std::string, std::string> WorkerOwner::WorkerLabels(std::string_view worker_type) const {
  std::map<std::string, std::string> labels = api::WorkerLabels(kind, name, uid, worker_type);
  for (auto& [k, v] : labels) v = LabelValue(v);
  return labels;
}

std::string LabelValue(std::string_view value) {
  if (value.size() <= 63) return std::string(value);
  // A label value must end with an alphanumeric character; the hash does.
  return absl::StrFormat("%s-%08x", ToAbsl(value.substr(0, 54)), Fnv1a64(value) & 0xffffffffULL);
}

bool UsesS3(const WorkerParams& params) {
  for (const StorageMount& mount : params.mounts) {
    for (const std::string& url : mount.urls) {
      if (s3::IsS3Url(url) || mount.indirect) return true;
    }
  }
  return false;
}

std::string WorkerName(const WorkerOwner& owner, std::string_view worker_type) {
  // Sedna's utilrand alphabet (no vowels, no confusable digits).
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  const std::string type = absl::AsciiStrToLower(ToAbsl(worker_type));
  uint64_t hash = Fnv1a64(type, Fnv1a64(owner.uid, Fnv1a64(owner.ns)));
  std::string suffix;
  for (int i = 0; i < 5; ++i) {
    suffix.push_back(kAlphabet[hash % kAlphabet.size()]);
    hash /= kAlphabet.size();
  }
  return absl::StrCat(type, "worker-", suffix);
}

bool IsSednaService(std::string_view kind) {
  return kind == api::kinds::kJointInferenceService ||
         kind == api::kinds::kFeatureExtractionService ||
         kind == api::kinds::kObjectSearchService || kind == api::kinds::kObjectTrackingService;
}

std::vector<EnvVar> ReportEnv(const WorkerOwner& owner, std::string_view worker_name,
                              std::string_view lc_server) {
  std::vector<EnvVar> env = {{std::string(api::env::kNamespace), owner.ns}};
  if (IsSednaService(owner.kind)) {
    env.push_back({std::string(api::env::kServiceName), owner.name});
  }
  // Every kind: the SDK's ownerName is JOB_NAME, and without it "sedna" (SERVICE_NAME is read
  // only when JOB_NAME is set empty), so a service's reports would name another owner.
  env.push_back({std::string(api::env::kJobName), owner.name});
  if (!worker_name.empty()) {
    env.push_back({std::string(api::env::kWorkerName), std::string(worker_name)});
  }
  env.push_back({std::string(api::env::kLcServer), std::string(lc_server)});
  return env;
}

std::vector<EnvVar> BaseWorkerEnv(const WorkerOwner& owner, std::string_view worker_type,
                                  std::string_view lc_server) {
  return ReportEnv(owner, WorkerName(owner, worker_type), lc_server);
}

std::vector<kube::StatusCause> CheckWorkerTemplate(const WorkerOwner& owner,
                                                   const api::PodTemplate& user_template,
                                                   const WorkerParams& params,
                                                   std::string_view field) {
  std::vector<kube::StatusCause> causes;
  const std::string labels_field = absl::StrCat(ToAbsl(field), ".metadata.labels");
  if (const Json* labels = kube::FindPath(user_template, "metadata.labels");
      labels != nullptr && labels->is_object()) {
    for (const auto& [key, value] : AllSelectorLabels(owner, params)) {
      auto it = labels->find(key);
      if (it == labels->end()) continue;
      if (!it->is_string() || it->get<std::string>() != value) {
        api::AddInvalid(
            absl::StrCat(labels_field, "[", key, "]"),
            absl::StrCat("label ", key, " is set by Nereid to select the ",
                         ToAbsl(params.worker_type), " worker's children (", value,
                         "); remove it from the template"),
            &causes);
      }
    }
  }
  for (const StorageMount& mount : params.mounts) {
    for (const std::string& url : mount.urls) {
      api::ValidateLocation(url, mount.env_name, mount.what, {"s3", "http", "https"}, &causes);
    }
  }
  return causes;
}

absl::StatusOr<Json> BuildWorkerTemplate(const WorkerOwner& owner,
                                         const api::PodTemplate& user_template,
                                         const WorkerParams& params, std::string_view field) {
  if (!user_template.is_object()) {
    return api::InvalidObjectError(
        owner.kind, owner.name,
        {{std::string(api::cause_reasons::kRequired),
          absl::StrCat("the ", ToAbsl(params.worker_type), " worker's pod template is required"),
          std::string(field)}});
  }
  std::vector<kube::StatusCause> causes = CheckWorkerTemplate(owner, user_template, params, field);
  if (!causes.empty()) return api::InvalidObjectError(owner.kind, owner.name, std::move(causes));

  Json metadata = Json::object();
  if (auto m = user_template.find("metadata"); m != user_template.end() && m->is_object()) {
    for (const char* key : {"labels", "annotations"}) {
      if (auto it = m->find(key); it != m->end() && it->is_object()) metadata[key] = *it;
    }
  }
  PutLabels(&metadata, AllSelectorLabels(owner, params), /*overwrite=*/true);
  PutLabels(&metadata, params.labels, /*overwrite=*/false);

  Json spec = Json::object();
  if (auto s = user_template.find("spec"); s != user_template.end() && s->is_object()) spec = *s;

  std::vector<EnvVar> env = params.env;
  bool host_mount = false;
  std::vector<s3::ResolvedUrl> initializer_downloads;
  bool s3_in_workers = false;
  for (const StorageMount& mount : params.mounts) {
    std::vector<std::string> values;
    for (const std::string& url : mount.urls) {
      if (s3::IsS3Url(url) || mount.indirect) {
        s3::ResolvedUrl resolved = s3::ResolveMountUrl(
            {.url = url, .download_by_initializer = mount.download, .indirect = mount.indirect});
        if (!resolved.download_src.empty()) initializer_downloads.push_back(resolved);
        s3_in_workers = s3_in_workers || s3::NeedsCredentialInWorkers(resolved);
        values.push_back(resolved.container_path.empty() ? url : resolved.container_path);
        continue;
      }
      if (!IsHostPath(url)) {
        values.push_back(url);
        continue;
      }
      host_mount = true;
      const std::string dir = HostDir(url, mount.is_dir);
      const std::string volume = EnsureHostPathVolume(&spec, dir, mount.is_dir);
      MountInContainers(&spec, volume, UnderPrefix(dir), mount.read_only);
      values.push_back(UnderPrefix(url));
    }
    if (!mount.env_name.empty() && !values.empty()) {
      env.push_back({mount.env_name, absl::StrJoin(values, ";")});
    }
  }
  if (host_mount) {
    env.push_back({std::string(api::env::kDataPathPrefix), std::string(api::paths::kHostDataPrefix)});
  }
  AppendEnv(&spec, env);
  AddS3Storage(&spec, initializer_downloads, s3_in_workers, params.s3);

  if (params.host_network.has_value()) SetIfUnset(&spec, "hostNetwork", *params.host_network);
  if (!params.restart_policy.empty()) SetIfUnset(&spec, "restartPolicy", params.restart_policy);
  if (!params.dns_policy.empty()) SetIfUnset(&spec, "dnsPolicy", params.dns_policy);
  if (!params.node_name.empty()) spec["nodeName"] = params.node_name;

  return Json{{"metadata", std::move(metadata)}, {"spec", std::move(spec)}};
}

Json BuildWorkerPod(const WorkerOwner& owner, const Json& pod_template,
                    std::string_view worker_type) {
  Json metadata = pod_template.contains("metadata") && pod_template["metadata"].is_object()
                      ? pod_template["metadata"]
                      : Json::object();
  metadata["generateName"] = api::PodGenerateName(owner.name, worker_type);
  metadata["namespace"] = owner.ns;
  metadata["ownerReferences"] = Json::array({owner.ControllerRef().ToJson()});
  PutLabels(&metadata, owner.WorkerLabels(worker_type), /*overwrite=*/true);
  Json spec = pod_template.contains("spec") ? pod_template["spec"] : Json::object();
  return Json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", std::move(metadata)},
              {"spec", std::move(spec)}};
}

Json BuildWorkerDeployment(const WorkerOwner& owner, const Json& pod_template,
                           std::string_view worker_type, const DeploymentOptions& options) {
  std::map<std::string, std::string> selector = owner.WorkerLabels(worker_type);
  selector[std::string(api::kAppLabelKey)] = LabelValue(api::AppLabelValue(owner.name, worker_type));
  for (const auto& [k, v] : options.selector_labels) selector[k] = v;

  Json tmpl = pod_template.is_object() ? pod_template : Json::object();
  Json& tmpl_meta = tmpl["metadata"];
  if (!tmpl_meta.is_object()) tmpl_meta = Json::object();
  PutLabels(&tmpl_meta, selector, /*overwrite=*/true);
  if (!tmpl.contains("spec")) tmpl["spec"] = Json::object();

  Json labels = Json::object();
  for (const auto& [k, v] : owner.WorkerLabels(worker_type)) labels[k] = v;
  Json metadata = {
      {"name", options.name.empty() ? api::DeploymentName(owner.name, worker_type) : options.name},
      {"namespace", owner.ns},
      {"labels", std::move(labels)},
      {"annotations", {{std::string(kTemplateHashAnnotation), ContentHash(tmpl)}}},
      {"ownerReferences", Json::array({owner.ControllerRef().ToJson()})}};
  Json spec = {{"selector", {{"matchLabels", selector}}}, {"template", std::move(tmpl)}};
  if (options.replicas.has_value()) spec["replicas"] = *options.replicas;
  return Json{{"apiVersion", "apps/v1"},
              {"kind", "Deployment"},
              {"metadata", std::move(metadata)},
              {"spec", std::move(spec)}};
}

Json BuildWorkerService(const WorkerOwner& owner, std::string_view worker_type,
                        const std::vector<ServicePort>& ports, std::string_view name) {
  Json labels = Json::object();
  for (const auto& [k, v] : owner.WorkerLabels(worker_type)) labels[k] = v;
  Json port_list = Json::array();
  for (size_t i = 0; i < ports.size(); ++i) {
    const ServicePort& p = ports[i];
    port_list.push_back({{"name", p.name.empty() ? absl::StrCat("tcp-", i) : p.name},
                         {"port", p.port},
                         {"targetPort", p.target_port == 0 ? p.port : p.target_port},
                         {"protocol", p.protocol}});
  }
  Json metadata = {
      {"name", name.empty() ? api::ServiceName(owner.name, worker_type) : std::string(name)},
      {"namespace", owner.ns},
      {"labels", labels},
      {"ownerReferences", Json::array({owner.ControllerRef().ToJson()})}};
  return Json{{"apiVersion", "v1"},
              {"kind", "Service"},
              {"metadata", std::move(metadata)},
              {"spec", {{"type", "ClusterIP"}, {"selector", labels}, {"ports", port_list}}}};
}

std::string ServiceHost(const WorkerOwner& owner, std::string_view service_name) {
  return absl::StrCat(ToAbsl(service_name), ".", owner.ns);
}

std::string TemplateHashOf(const Json& child) {
  return kube::Annotation(child, kTemplateHashAnnotation).value_or("");
}

bool IsControlledBy(const Json& child, const WorkerOwner& owner) {
  std::optional<kube::OwnerReference> ref = kube::ControllerOf(child);
  return ref.has_value() && ref->uid == owner.uid && ref->kind == owner.kind;
}

}  // namespace nereid::gm
