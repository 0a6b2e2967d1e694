#include "common/job/pod_builder.h"

#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/strings/absl_compat.h"

namespace nereid::job {

using kube::Json;

namespace {

std::string EnvToken(std::string_view task_name) {
  std::string token = absl::AsciiStrToUpper(ToAbsl(task_name));
  for (char& c : token) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return token;
}

// Merges `labels` into obj.metadata[field].
void PutMap(Json* metadata, const char* field, const std::map<std::string, std::string>& values) {
  if (values.empty()) return;
  Json& target = (*metadata)[field];
  if (!target.is_object()) target = Json::object();
  for (const auto& [k, v] : values) target[k] = v;
}

// Adds `env` to every container of `spec`, skipping names a container already sets.
void InjectEnv(Json* spec, const std::vector<std::pair<std::string, std::string>>& env) {
  auto containers = spec->find("containers");
  if (containers == spec->end() || !containers->is_array()) return;
  for (Json& container : *containers) {
    if (!container.is_object()) continue;
    Json& list = container["env"];
    if (!list.is_array()) list = Json::array();
    std::set<std::string> present;
    for (const Json& e : list) {
      if (e.is_object() && e.contains("name") && e["name"].is_string()) {
        present.insert(e["name"].get<std::string>());
      }
    }
    for (const auto& [name, value] : env) {
      if (present.count(name) == 0) list.push_back({{"name", name}, {"value", value}});
    }
  }
}

}  // namespace

std::string TaskHostsEnv(std::string_view task_name) {
  return absl::StrCat("NEREID_", EnvToken(task_name), "_HOSTS");
}

std::string TaskReplicasEnv(std::string_view task_name) {
  return absl::StrCat("NEREID_", EnvToken(task_name), "_REPLICAS");
}

JobIdentity JobIdentity::FromObject(const Json& object, const kube::Resource& resource) {
  JobIdentity id;
  id.api_version = resource.ApiVersion();
  id.kind = resource.kind;
  id.name = kube::Name(object);
  id.ns = kube::Namespace(object);
  id.uid = kube::Uid(object);
  return id;
}

kube::OwnerReference JobIdentity::OwnerRef() const {
  kube::OwnerReference ref;
  ref.api_version = api_version;
  ref.kind = kind;
  ref.name = name;
  ref.uid = uid;
  ref.controller = true;
  ref.block_owner_deletion = true;
  return ref;
}

std::string PodName(std::string_view job, std::string_view task, int index) {
  return absl::StrCat(ToAbsl(job), "-", ToAbsl(task), "-", index);
}

std::string ServiceName(std::string_view job) { return std::string(job); }

std::string PodHost(const JobIdentity& job, std::string_view task, int index) {
  return absl::StrCat(PodName(job.name, task, index), ".", ServiceName(job.name), ".", job.ns,
                      ".svc");
}

std::map<std::string, std::string> JobSelectorLabels(const JobIdentity& job) {
  return {{std::string(labels::kJobKind), absl::AsciiStrToLower(job.kind)},
          {std::string(labels::kJobName), job.name}};
}

int RankOf(const JobSpec& spec, std::string_view task, int index) {
  int rank = 0;
  for (const Task& t : spec.tasks) {
    if (t.name == task) return rank + index;
    rank += t.Replicas();
  }
  return rank + index;
}

BuiltPod BuildPod(const JobIdentity& job, const JobSpec& spec, const Task& task, int index,
                  const PodBuildOptions& options) {
  BuiltPod out;
  const Json& tmpl = task.pod_template.is_object() ? task.pod_template : Json::object();
  Json metadata = Json::object();
  if (auto m = tmpl.find("metadata"); m != tmpl.end() && m->is_object()) {
    for (const char* field : {"labels", "annotations", "finalizers"}) {
      if (m->contains(field)) metadata[field] = (*m)[field];
    }
  }
  Json pod_spec = Json::object();
  if (auto s = tmpl.find("spec"); s != tmpl.end() && s->is_object()) pod_spec = *s;

  const std::string pod_name = PodName(job.name, task.name, index);
  metadata["name"] = pod_name;
  metadata["namespace"] = job.ns;
  std::map<std::string, std::string> pod_labels = options.extra_labels;
  for (const auto& [k, v] : JobSelectorLabels(job)) pod_labels[k] = v;
  pod_labels[std::string(labels::kTaskName)] = task.name;
  pod_labels[std::string(labels::kTaskType)] = std::string(TaskTypeName(task.type));
  pod_labels[std::string(labels::kTaskIndex)] = std::to_string(index);
  PutMap(&metadata, "labels", pod_labels);
  metadata["ownerReferences"] = Json::array({job.OwnerRef().ToJson()});

  // restartPolicy: the task's wins over the template's (ExitCode is ours: the pod gets Never).
  RestartPolicy policy = task.EffectiveRestartPolicy();
  std::string pod_policy =
      policy == RestartPolicy::kExitCode ? "Never" : std::string(RestartPolicyName(policy));
  if (auto current = pod_spec.find("restartPolicy");
      current != pod_spec.end() && current->is_string() && *current != pod_policy) {
    out.warnings.push_back(
        absl::StrCat("task \"", task.name, "\": the pod template's restartPolicy ",
                     current->get<std::string>(), " is replaced by ", pod_policy,
                     " (task restartPolicy ", ToAbsl(RestartPolicyName(policy)), ")"));
  }
  pod_spec["restartPolicy"] = pod_policy;
  pod_spec["hostname"] = pod_name;
  pod_spec["subdomain"] = ServiceName(job.name);

  if (options.gang) {
    auto scheduler = pod_spec.find("schedulerName");
    if (scheduler == pod_spec.end() || !scheduler->is_string() ||
        scheduler->get<std::string>().empty()) {
      pod_spec["schedulerName"] = std::string(kVolcanoSchedulerName);
    } else if (*scheduler != kVolcanoSchedulerName) {
      out.warnings.push_back(
          absl::StrCat("task \"", task.name, "\": schedulerName ", scheduler->get<std::string>(),
                       " is kept although gang scheduling needs ", ToAbsl(kVolcanoSchedulerName)));
    }
    PutMap(&metadata, "annotations",
           {{std::string(kGroupNameAnnotation), job.name},
            {std::string(kTaskSpecAnnotation), task.name}});
  }

  std::vector<std::pair<std::string, std::string>> env = {
      {std::string(env_names::kJobName), job.name},
      {std::string(env_names::kJobNamespace), job.ns},
      {std::string(env_names::kService), ServiceName(job.name)},
      {std::string(env_names::kTaskName), task.name},
      {std::string(env_names::kTaskType), std::string(TaskTypeName(task.type))},
      {std::string(env_names::kTaskIndex), std::to_string(index)},
      {std::string(env_names::kTaskReplicas), std::to_string(task.Replicas())},
      {std::string(env_names::kRank), std::to_string(RankOf(spec, task.name, index))},
      {std::string(env_names::kWorldSize), std::to_string(spec.TotalReplicas())},
  };
  std::vector<std::string> task_names;
  std::vector<std::string> all_hosts;
  for (const Task& t : spec.tasks) {
    task_names.push_back(t.name);
    std::vector<std::string> hosts;
    for (int i = 0; i < t.Replicas(); ++i) hosts.push_back(PodHost(job, t.name, i));
    env.emplace_back(TaskReplicasEnv(t.name), std::to_string(t.Replicas()));
    env.emplace_back(TaskHostsEnv(t.name), absl::StrJoin(hosts, ","));
    all_hosts.insert(all_hosts.end(), hosts.begin(), hosts.end());
  }
  env.emplace_back(std::string(env_names::kTasks), absl::StrJoin(task_names, ","));
  env.emplace_back(std::string(env_names::kHosts), absl::StrJoin(all_hosts, ","));
  InjectEnv(&pod_spec, env);

  out.pod = {{"apiVersion", "v1"},
             {"kind", "Pod"},
             {"metadata", std::move(metadata)},
             {"spec", std::move(pod_spec)}};
  return out;
}

Json BuildService(const JobIdentity& job, const JobSpec& spec,
                  const std::map<std::string, std::string>& extra_labels) {
  std::map<std::string, std::string> svc_labels = extra_labels;
  for (const auto& [k, v] : JobSelectorLabels(job)) svc_labels[k] = v;
  Json metadata = {{"name", ServiceName(job.name)},
                   {"namespace", job.ns},
                   {"ownerReferences", Json::array({job.OwnerRef().ToJson()})}};
  PutMap(&metadata, "labels", svc_labels);

  // Ports: the union of declared container ports (by number and protocol), so SRV records exist.
  Json ports = Json::array();
  std::set<std::pair<int64_t, std::string>> seen;
  std::set<std::string> names;
  for (const Task& task : spec.tasks) {
    const Json* containers = kube::FindPath(task.pod_template, "spec.containers");
    if (containers == nullptr || !containers->is_array()) continue;
    for (const Json& c : *containers) {
      auto cports = c.is_object() ? c.find("ports") : c.end();
      if (!c.is_object() || cports == c.end() || !cports->is_array()) continue;
      for (const Json& p : *cports) {
        if (!p.is_object() || !p.contains("containerPort") ||
            !p["containerPort"].is_number_integer()) {
          continue;
        }
        int64_t number = p["containerPort"].get<int64_t>();
        std::string protocol = p.value("protocol", std::string("TCP"));
        if (!seen.insert({number, protocol}).second) continue;
        std::string name = p.value("name", std::string());
        if (name.empty() || names.count(name) > 0) {
          name = absl::StrCat(absl::AsciiStrToLower(protocol), "-", number);
        }
        names.insert(name);
        ports.push_back(
            {{"name", name}, {"port", number}, {"targetPort", number}, {"protocol", protocol}});
      }
    }
  }
  Json svc_spec = {{"clusterIP", "None"},
                   {"selector", JobSelectorLabels(job)},
                   {"publishNotReadyAddresses", true}};
  if (!ports.empty()) svc_spec["ports"] = std::move(ports);
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", std::move(metadata)},
          {"spec", std::move(svc_spec)}};
}

std::optional<ResourceList> MinResources(const JobSpec& spec, int32_t min_member) {
  ResourceList total;
  int32_t counted = 0;
  for (const Task& task : spec.tasks) {
    if (counted >= min_member) break;
    const int32_t pods = std::min(task.Replicas(), min_member - counted);
    if (pods <= 0) continue;
    const Json* pod_spec = kube::FindPath(task.pod_template, "spec");
    if (pod_spec == nullptr || !pod_spec->is_object()) continue;
    absl::StatusOr<ResourceList> one = PodRequests(*pod_spec);
    if (!one.ok()) return std::nullopt;  // The pods cannot be created either; the API says why.
    for (int32_t i = 0; i < pods; ++i) {
      if (!AddResources(&total, *one)) return std::nullopt;
    }
    counted += pods;
  }
  return total;
}

Json BuildPodGroup(const JobIdentity& job, const JobSpec& spec) {
  int32_t min_member = spec.TotalReplicas();
  std::string queue = "default";
  std::string priority;
  if (const auto& sp = spec.run_policy.scheduling_policy; sp.has_value()) {
    if (sp->min_available.has_value()) min_member = *sp->min_available;
    if (!sp->queue.empty()) queue = sp->queue;
    priority = sp->priority_class;
  }
  Json pg_spec = {{"minMember", min_member}, {"queue", queue}};
  if (!priority.empty()) pg_spec["priorityClassName"] = priority;
  if (std::optional<ResourceList> min_resources = MinResources(spec, min_member);
      min_resources.has_value() && !min_resources->empty()) {
    pg_spec["minResources"] = ResourceListToJson(*min_resources);
  }
  Json metadata = {{"name", job.name},
                   {"namespace", job.ns},
                   {"labels", JobSelectorLabels(job)},
                   {"ownerReferences", Json::array({job.OwnerRef().ToJson()})}};
  return {{"apiVersion", "scheduling.volcano.sh/v1beta1"},
          {"kind", "PodGroup"},
          {"metadata", std::move(metadata)},
          {"spec", std::move(pg_spec)}};
}

}  // namespace nereid::job
