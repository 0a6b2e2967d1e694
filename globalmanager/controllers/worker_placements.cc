#include "globalmanager/controllers/worker_placements.h"

#include <utility>

#include "common/net/edge_protocol.h"
#include "common/status/macros.h"
#include "globalmanager/controllers/edge_objects.h"

namespace nereid::gm {
namespace {

namespace v1 = edge::v1;

v1::ObjectRef WorkerRef(const std::string& ns, const std::string& name, const std::string& uid) {
  v1::ObjectRef ref;
  ref.set_kind(std::string(net::kKindWorker));
  ref.set_namespace_(ns);
  ref.set_name(name);
  ref.set_uid(uid);
  return ref;
}

}  // namespace

WorkerPlacements::WorkerPlacements(EdgeDispatcher* edge, std::string_view job_kind,
                                   OwnerSpecFn owner_spec)
    : edge_(edge), job_kind_(job_kind), owner_spec_(std::move(owner_spec)) {}

v1::ObjectRef WorkerPlacements::OwnerRef(const std::string& key, const std::string& uid) const {
  std::string ns, name;
  kube::SplitKey(key, &ns, &name);
  v1::ObjectRef ref;
  ref.set_kind(job_kind_);
  ref.set_namespace_(ns);
  ref.set_name(name);
  ref.set_uid(uid);
  return ref;
}

absl::Status WorkerPlacements::Sync(const std::string& key, const kube::Json& object,
                                    const std::vector<EdgeWorker>& workers) {
  const std::string ns = kube::Namespace(object);
  const std::string uid = kube::Uid(object);
  const std::string version = EdgeVersion(object);
  std::map<std::string, std::map<std::string, const EdgeWorker*>> want;  // node → name → worker
  for (const EdgeWorker& w : workers) want[w.node][w.name] = &w;
  absl::MutexLock lock(&mu_);
  Placed& placed = placed_[key];
  const bool same_object = placed.uid == uid && placed.version == version;
  for (const auto& [node, names] : placed.workers) {
    auto n = want.find(node);
    for (const std::string& name : names) {
      if (n != want.end() && n->second.count(name) > 0 && placed.uid == uid) continue;
      RETURN_IF_ERROR(edge_->Remove(node, WorkerRef(placed.ns, name, placed.uid)));
    }
    if (owner_spec_ != nullptr && (n == want.end() || placed.uid != uid)) {
      RETURN_IF_ERROR(edge_->Remove(node, OwnerRef(key, placed.uid)));
    }
  }
  std::map<std::string, std::set<std::string>> now_placed;
  for (const auto& [node, names] : want) {
    if (owner_spec_ != nullptr && (!same_object || placed.workers.count(node) == 0)) {
      v1::Resource owner;
      *owner.mutable_ref() = OwnerRef(key, uid);
      owner.set_version(version);
      owner_spec_(node, &owner);
      RETURN_IF_ERROR(edge_->Upsert(node, owner));
    }
    for (const auto& [name, worker] : names) {
      now_placed[node].insert(name);
      auto held = placed.workers.find(node);
      if (same_object && held != placed.workers.end() && held->second.count(name) > 0) continue;
      v1::Resource resource;
      *resource.mutable_ref() = WorkerRef(ns, name, uid);
      resource.set_version(version);
      v1::WorkerSpec* spec = resource.mutable_worker();
      spec->set_job_kind(job_kind_);
      spec->set_job_name(kube::Name(object));
      spec->set_worker_type(worker->worker_type);
      spec->set_node_name(node);
      RETURN_IF_ERROR(edge_->Upsert(node, resource));
    }
  }
  placed.workers = std::move(now_placed);
  placed.ns = ns;
  placed.uid = uid;
  placed.version = version;
  if (placed.workers.empty()) placed_.erase(key);
  return absl::OkStatus();
}

absl::Status WorkerPlacements::Forget(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = placed_.find(key);
  if (it == placed_.end()) return absl::OkStatus();
  for (const auto& [node, names] : it->second.workers) {
    for (const std::string& name : names) {
      RETURN_IF_ERROR(edge_->Remove(node, WorkerRef(it->second.ns, name, it->second.uid)));
    }
    if (owner_spec_ != nullptr) RETURN_IF_ERROR(edge_->Remove(node, OwnerRef(key, it->second.uid)));
  }
  placed_.erase(it);
  return absl::OkStatus();
}

std::vector<std::string> WorkerPlacements::Nodes(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = placed_.find(key);
  if (it == placed_.end()) return {};
  std::vector<std::string> nodes;
  for (const auto& [node, names] : it->second.workers) nodes.push_back(node);
  return nodes;
}

bool WorkerPlacements::Holds(const std::string& key, std::string_view node,
                             std::string_view uid) const {
  absl::MutexLock lock(&mu_);
  auto it = placed_.find(key);
  if (it == placed_.end()) return false;
  if (!uid.empty() && it->second.uid != uid) return false;
  return it->second.workers.count(std::string(node)) > 0;
}

}  // namespace nereid::gm
