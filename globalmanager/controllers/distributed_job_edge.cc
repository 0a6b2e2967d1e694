#include "globalmanager/controllers/distributed_job_edge.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/job/distributed_job.h"
#include "common/kube/errors.h"
#include "common/log/log.h"
#include "common/net/edge_protocol.h"
#include "common/strings/absl_compat.h"
#include "globalmanager/controllers/edge_objects.h"
#include "globalmanager/controllers/placement.h"
#include "globalmanager/controllers/status_writer.h"

namespace nereid::gm {
namespace {

using kube::Json;
namespace v1 = edge::v1;

constexpr std::string_view kKind = job::kDistributedJobKind;

v1::DistributedJobSpec::Task* TaskEntry(v1::DistributedJobSpec* spec, const job::Task& task) {
  for (v1::DistributedJobSpec::Task& t : *spec->mutable_tasks()) {
    if (t.name() == task.name) return &t;
  }
  v1::DistributedJobSpec::Task* t = spec->add_tasks();
  t->set_name(task.name);
  t->set_type(std::string(job::TaskTypeName(task.type)));
  t->set_replicas(task.Replicas());
  return t;
}

// The task whose pods are named like `worker` ("<job>-<task>-<index>"), or null.
const job::Task* TaskOfWorker(const job::JobSpec& spec, std::string_view job_name,
                              std::string_view worker) {
  for (const job::Task& task : spec.tasks) {
    const std::string prefix = absl::StrCat(ToAbsl(job_name), "-", task.name, "-");
    if (worker.size() <= prefix.size() || worker.substr(0, prefix.size()) != prefix) continue;
    std::string_view index = worker.substr(prefix.size());
    if (std::all_of(index.begin(), index.end(),
                    [](char c) { return absl::ascii_isdigit(static_cast<unsigned char>(c)); })) {
      return &task;
    }
  }
  return nullptr;
}

const Json* PodSpecOf(const job::Task& task) {
  const Json* spec = kube::FindPath(task.pod_template, "spec");
  return spec != nullptr && spec->is_object() ? spec : nullptr;
}

bool TemplateSelectsNodes(const job::Task& task) {
  const Json* spec = PodSpecOf(task);
  if (spec == nullptr) return false;
  return !kube::StringAt(*spec, "nodeName").empty() || SelectsNodes(*spec);
}

}  // namespace

DistributedJobEdge::DistributedJobEdge(Options options, kube::Lister jobs, kube::Lister nodes)
    : options_(std::move(options)),
      jobs_(std::move(jobs)),
      nodes_(std::move(nodes)),
      announced_(options_.edge, "distributedjob") {}

bool DistributedJobEdge::IsEdgeNode(const std::string& node) const {
  absl::StatusOr<kube::ObjectPtr> object = nodes_.GetByKey(node);
  return object.ok() && kube::Label(**object, kEdgeNodeRoleLabel).has_value();
}

std::map<std::string, v1::DistributedJobSpec> DistributedJobEdge::NodeSpecs(
    const JobPlacementView& view, std::string* selection_error) const {
  std::map<std::string, v1::DistributedJobSpec> specs;
  auto spec_for = [&](const std::string& node) -> v1::DistributedJobSpec& {
    v1::DistributedJobSpec& spec = specs[node];
    spec.set_node_name(node);
    return spec;
  };
  // Tasks in spec order, so each node's task list is in spec order too.
  for (const job::Task& task : view.spec->tasks) {
    if (!view.finished && TemplateSelectsNodes(task)) {
      absl::StatusOr<Placement> placement = PlacePodSpec(*PodSpecOf(task), nodes_);
      if (!placement.ok()) {
        if (selection_error->empty()) {
          *selection_error = absl::StrCat("task ", task.name, ": ", placement.status().message());
        }
      } else {
        for (const std::string& node : placement->nodes) TaskEntry(&spec_for(node), task);
      }
    }
    std::vector<const PlacedTaskPod*> pods;
    for (const PlacedTaskPod& pod : view.pods) {
      if (pod.task == task.name) pods.push_back(&pod);
    }
    std::sort(pods.begin(), pods.end(),
              [](const PlacedTaskPod* a, const PlacedTaskPod* b) { return a->pod < b->pod; });
    for (const PlacedTaskPod* pod : pods) {
      if (!TemplateSelectsNodes(task) && !IsEdgeNode(pod->node)) continue;
      TaskEntry(&spec_for(pod->node), task)->add_pods(pod->pod);
    }
  }
  return specs;
}

void DistributedJobEdge::JobPlaced(const JobPlacementView& view) {
  if (view.object == nullptr || view.spec == nullptr) return;
  const std::string key = view.job.Key();
  std::string selection_error;
  std::map<std::string, v1::DistributedJobSpec> specs = NodeSpecs(view, &selection_error);
  if (!selection_error.empty()) {
    const std::string generation = EdgeVersion(*view.object);
    absl::MutexLock lock(&mu_);
    if (bad_selection_logged_[key] != generation) {
      LOG(WARNING) << "distributedjob " << key << ": " << selection_error
                   << "; that task is announced only to the nodes its pods are bound to";
      bad_selection_logged_[key] = generation;
    }
  }
  const v1::ObjectRef ref = EdgeRef(kKind, *view.object);
  std::map<std::string, v1::Resource> resources;
  for (auto& [node, spec] : specs) {
    v1::Resource& resource = resources[node];
    *resource.mutable_ref() = ref;
    // The job's spec version plus what concerns this node (its tasks and their pods bound there),
    // so a pod bound elsewhere does not resend the object to this node.
    resource.set_version(EdgeVersion(*view.object, spec));
    *resource.mutable_distributed_job() = std::move(spec);
  }
  // A node that failed is retried on the job's next pass (logged by EdgePlacements).
  if (absl::Status s = announced_.Sync(key, resources); !s.ok()) {
    LOG(WARNING) << "distributedjob " << key << ": the edge registry is not up to date: " << s;
  }
}

void DistributedJobEdge::JobRemoved(const std::string& kind, const std::string& key) {
  if (kind != kKind) return;
  {
    absl::MutexLock lock(&mu_);
    bad_selection_logged_.erase(key);
  }
  if (absl::Status s = announced_.Forget(key); !s.ok()) {
    LOG(WARNING) << "distributedjob " << key << ": not removed from every node: " << s;
  }
}

std::vector<std::string> DistributedJobEdge::NodesOf(const std::string& key) const {
  std::set<std::string> nodes = announced_.Nodes(key);
  return {nodes.begin(), nodes.end()};
}

ReportOutcome DistributedJobEdge::HandleReport(std::string_view node,
                                               const v1::StatusReport& report) {
  const v1::ObjectRef& ref = report.ref();
  const std::string key = kube::MakeKey(ref.namespace_(), ref.name());
  if (ref.kind() != kKind || !report.has_worker()) {
    return RejectedPayload(report, "a worker report");
  }
  absl::StatusOr<kube::ObjectPtr> cached = jobs_.GetByKey(key);
  if (!cached.ok() || (!ref.uid().empty() && kube::Uid(**cached) != ref.uid())) {
    return ReportOutcome::Rejected(
        "ObjectGone", absl::StrCat("distributedjob ", key, " (uid ", ref.uid(), ") is gone"));
  }
  const Json& object = **cached;
  absl::StatusOr<job::DistributedJob> parsed = job::DistributedJob::FromJson(object);
  if (!parsed.ok()) {
    return ReportOutcome::Rejected("Invalid", absl::StrCat("distributedjob ", key, ": ",
                                                           parsed.status().message()));
  }
  const v1::WorkerReport& worker = report.worker();
  const job::Task* task = TaskOfWorker(parsed->spec, ref.name(), worker.worker_name());
  if (task == nullptr) {
    return ReportOutcome::Rejected(
        "UnknownWorker", absl::StrCat("worker ", worker.worker_name(), " is not a pod of a task of ",
                                      "distributedjob ", key));
  }

  Json entry = Json::object();
  entry["worker"] = worker.worker_name();
  entry["node"] = std::string(node);
  entry["kind"] = worker.worker_kind();
  entry["status"] = worker.status();
  const absl::Time at =
      net::FromProtoTime(worker.time()).value_or(options_.clock->Now());
  entry["time"] = kube::FormatTimestamp(at);
  if (!worker.results_json().empty()) {
    Json results = worker.results_json().size() > options_.max_results_bytes
                       ? Json(Json::value_t::discarded)
                       : Json::parse(worker.results_json(), nullptr, /*allow_exceptions=*/false);
    if (results.is_discarded()) {
      entry["resultsTruncated"] = true;
    } else {
      entry["results"] = std::move(results);
    }
  }

  // The same report again (a resend after a lost ACK): nothing to write, not even a GET.
  if (const Json* current = kube::FindPath(object, "status.workerReports");
      current != nullptr && current->is_object()) {
    auto it = current->find(task->name);
    if (it != current->end() && *it == entry) return ReportOutcome::Accepted();
  }

  // The task's entry is replaced whole (an older report's results go); the library's status
  // fields beside workerReports are left as they are.
  absl::StatusOr<StatusWrite> written = WriteStatus(
      *options_.client, job::DistributedJobs(), ref.namespace_(), ref.name(), ref.uid(),
      [&](const Json&, Json* status) -> absl::Status {
        Json& reports = (*status)["workerReports"];
        if (!reports.is_object()) reports = Json::object();
        reports[task->name] = entry;
        return absl::OkStatus();
      },
      *cached);
  if (!written.ok()) {
    return ReportWriteFailure("distributedjob", key, node, report, written.status());
  }
  LOG(DEBUG) << "distributedjob " << key << ": worker " << worker.worker_name() << " on node "
             << node << " reports " << worker.status();
  return ReportOutcome::Accepted();
}

}  // namespace nereid::gm
