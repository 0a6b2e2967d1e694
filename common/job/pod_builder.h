#pragma once

// What a job's children look like: pod and Service names, labels, the env that tells each pod
// where it is in the job, and the pods/Service/PodGroup built from a task's template.
//
// Names: pod "<job>-<task>-<index>" (training-operator/Volcano), one headless Service "<job>"
// per job (DI-orchestrator/Volcano "svc" plugin); each pod gets hostname = its name and subdomain =
// the Service, so "<pod>.<job>.<ns>.svc" resolves to it (publishNotReadyAddresses: peers resolve
// before they are ready).
//
// Labels on pods and the Service (values are the names as given):
//   sedna.io/job-kind   lower-case kind ("distributedjob")    } the Service selects these two
//   sedna.io/job-name   job name                              }
//   sedna.io/task-name  task name      sedna.io/task-type  learner|collector|evaluator|none
//   sedna.io/task-index replica index  (pods only)
// plus the caller's labels (e.g. Sedna's "<kind>.sedna.io/name|uid|worker-type").
//
// Env added to every container (a name the container already sets is left as the user wrote it):
//   NEREID_JOB_NAME, NEREID_JOB_NAMESPACE, NEREID_SERVICE (the headless Service name)
//   NEREID_TASK_NAME, NEREID_TASK_TYPE, NEREID_TASK_INDEX, NEREID_TASK_REPLICAS
//   NEREID_RANK        global rank: replicas of the tasks before this one + index
//   NEREID_WORLD_SIZE  Σ replicas
//   NEREID_TASKS       comma-separated task names, in spec order
//   NEREID_<TASK>_REPLICAS, NEREID_<TASK>_HOSTS   for every task: its replicas and the
//                      comma-separated "<pod>.<svc>.<ns>.svc" of its pods by index
//   NEREID_HOSTS       every pod's host, in rank order
// <TASK> is the task name upper-cased with '-' → '_' (task "collector-a" →
// NEREID_COLLECTOR_A_HOSTS).

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/job/job_spec.h"
#include "common/job/quantity.h"
#include "common/kube/object.h"
#include "common/kube/resource.h"

namespace nereid::job {

namespace labels {
inline constexpr std::string_view kJobKind = "sedna.io/job-kind";
inline constexpr std::string_view kJobName = "sedna.io/job-name";
inline constexpr std::string_view kTaskName = "sedna.io/task-name";
inline constexpr std::string_view kTaskType = "sedna.io/task-type";
inline constexpr std::string_view kTaskIndex = "sedna.io/task-index";
}  // namespace labels

namespace env_names {
inline constexpr std::string_view kJobName = "NEREID_JOB_NAME";
inline constexpr std::string_view kJobNamespace = "NEREID_JOB_NAMESPACE";
inline constexpr std::string_view kService = "NEREID_SERVICE";
inline constexpr std::string_view kTaskName = "NEREID_TASK_NAME";
inline constexpr std::string_view kTaskType = "NEREID_TASK_TYPE";
inline constexpr std::string_view kTaskIndex = "NEREID_TASK_INDEX";
inline constexpr std::string_view kTaskReplicas = "NEREID_TASK_REPLICAS";
inline constexpr std::string_view kRank = "NEREID_RANK";
inline constexpr std::string_view kWorldSize = "NEREID_WORLD_SIZE";
inline constexpr std::string_view kTasks = "NEREID_TASKS";
inline constexpr std::string_view kHosts = "NEREID_HOSTS";
}  // namespace env_names
// "NEREID_<TASK>_HOSTS" / "NEREID_<TASK>_REPLICAS".
std::string TaskHostsEnv(std::string_view task_name);
std::string TaskReplicasEnv(std::string_view task_name);

// Gang scheduling (Volcano).
inline constexpr std::string_view kVolcanoSchedulerName = "volcano";
inline constexpr std::string_view kGroupNameAnnotation = "scheduling.k8s.io/group-name";
inline constexpr std::string_view kTaskSpecAnnotation = "volcano.sh/task-spec";

// Who owns the children.
struct JobIdentity {
  std::string api_version;  // e.g. "sedna.io/v1alpha1"
  std::string kind;         // e.g. "DistributedJob"
  std::string name;
  std::string ns;
  std::string uid;

  static JobIdentity FromObject(const kube::Json& object, const kube::Resource& resource);
  std::string Key() const { return kube::MakeKey(ns, name); }
  // Controller ownerReference (controller=true, blockOwnerDeletion=true).
  kube::OwnerReference OwnerRef() const;
};

std::string PodName(std::string_view job, std::string_view task, int index);
std::string ServiceName(std::string_view job);
std::string PodHost(const JobIdentity& job, std::string_view task, int index);
// kJobKind + kJobName: what the Service selects.
std::map<std::string, std::string> JobSelectorLabels(const JobIdentity& job);

// Where a pod sits in the job, for decorators.
struct PodPlace {
  const Task* task = nullptr;
  int index = 0;
  int rank = 0;
};

struct PodBuildOptions {
  std::map<std::string, std::string> extra_labels;
  bool gang = false;  // Set schedulerName and the PodGroup annotations.
};

struct BuiltPod {
  kube::Json pod;
  // Template settings that were overridden, for Warning events (training-operator emits
  // SetPodTemplateRestartPolicy / SetPodTemplateSchedulerName).
  std::vector<std::string> warnings;
};

// The pod for `task` replica `index`: the template's metadata and spec, then Nereid's name,
// namespace, labels, ownerReference, hostname/subdomain, restartPolicy (ExitCode → Never) and env.
BuiltPod BuildPod(const JobIdentity& job, const JobSpec& spec, const Task& task, int index,
                  const PodBuildOptions& options);
// The headless Service of the job; ports are the union of the tasks' declared container ports.
kube::Json BuildService(const JobIdentity& job, const JobSpec& spec,
                        const std::map<std::string, std::string>& extra_labels);
// The Volcano PodGroup: minMember = minAvailable or Σ replicas, queue ("default" when unset),
// priorityClassName, and minResources = MinResources(spec, minMember) (omitted when no pod
// requests anything or a quantity is malformed), so Volcano admits the job into its queue only
// when the gang fits.
kube::Json BuildPodGroup(const JobIdentity& job, const JobSpec& spec);

// Σ of the requests (quantity.h PodRequests) of the first `min_member` pods in spec order (tasks
// in order, then indexes). training-operator orders by the tasks' PriorityClass values first; the
// tasks here share the job's priorityClass, so spec order is the order. nullopt when a quantity is
// malformed or the sum overflows.
std::optional<ResourceList> MinResources(const JobSpec& spec, int32_t min_member);

// The global rank of (task, index) in spec order.
int RankOf(const JobSpec& spec, std::string_view task, int index);

}  // namespace nereid::job
