#include "globalmanager/controllers/worker_placements.h"

#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/api/sedna_contract.h"
#include "common/net/edge_protocol.h"
#include "globalmanager/controllers/edge_objects.h"

namespace nereid::gm {
namespace {

namespace v1 = edge::v1;

v1::ObjectRef Ref(std::string_view kind, const std::string& ns, const std::string& name,
                  const std::string& uid) {
  v1::ObjectRef ref;
  ref.set_kind(std::string(kind));
  ref.set_namespace_(ns);
  ref.set_name(name);
  ref.set_uid(uid);
  return ref;
}

}  // namespace

WorkerPlacements::WorkerPlacements(EdgeDispatcher* edge, std::string_view job_kind,
                                   OwnerSpecFn owner_spec)
    : job_kind_(job_kind),
      owner_spec_(std::move(owner_spec)),
      owners_(edge, api::LowerKind(job_kind)),
      workers_(edge, absl::StrCat(api::LowerKind(job_kind), " worker")) {}

std::string WorkerPlacements::WorkerKey(const std::string& key, const std::string& name) {
  return absl::StrCat(key, "/", name);  // Neither a key's name nor a worker name has a '/'.
}

absl::Status WorkerPlacements::Sync(const std::string& key, const kube::Json& object,
                                    const std::vector<EdgeWorker>& workers) {
  const std::string ns = kube::Namespace(object);
  const std::string uid = kube::Uid(object);
  const std::string version = EdgeVersion(object);
  std::map<std::string, std::map<std::string, v1::Resource>> wanted;  // name → node → resource
  std::map<std::string, v1::Resource> owners;                         // node → the service
  for (const EdgeWorker& w : workers) {
    v1::Resource& resource = wanted[w.name][w.node];
    *resource.mutable_ref() = Ref(net::kKindWorker, ns, w.name, uid);
    resource.set_version(version);
    v1::WorkerSpec* spec = resource.mutable_worker();
    spec->set_job_kind(job_kind_);
    spec->set_job_name(kube::Name(object));
    spec->set_worker_type(w.worker_type);
    spec->set_node_name(w.node);
    if (owner_spec_ != nullptr && !owners.contains(w.node)) {
      v1::Resource& owner = owners[w.node];
      *owner.mutable_ref() = Ref(job_kind_, ns, kube::Name(object), uid);
      owner.set_version(version);
      owner_spec_(w.node, &owner);
    }
  }
  absl::MutexLock lock(&mu_);
  std::set<std::string>& names = names_[key];
  absl::Status first;
  // Workers no longer listed first, then the service, then the workers (as a node learns them).
  for (auto it = names.begin(); it != names.end();) {
    if (wanted.contains(*it)) {
      ++it;
      continue;
    }
    first.Update(workers_.Forget(WorkerKey(key, *it)));
    it = workers_.Nodes(WorkerKey(key, *it)).empty() ? names.erase(it) : std::next(it);
  }
  if (owner_spec_ != nullptr) first.Update(owners_.Sync(key, owners));
  for (const auto& [name, resources] : wanted) {
    first.Update(workers_.Sync(WorkerKey(key, name), resources));
    names.insert(name);
  }
  if (names.empty()) names_.erase(key);
  return first;
}

absl::Status WorkerPlacements::Forget(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = names_.find(key);
  absl::Status first;
  if (owner_spec_ != nullptr) first.Update(owners_.Forget(key));
  if (it == names_.end()) return first;
  for (auto name = it->second.begin(); name != it->second.end();) {
    first.Update(workers_.Forget(WorkerKey(key, *name)));
    name = workers_.Nodes(WorkerKey(key, *name)).empty() ? it->second.erase(name)
                                                          : std::next(name);
  }
  if (it->second.empty()) names_.erase(it);
  return first;
}

std::vector<std::string> WorkerPlacements::Nodes(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = names_.find(key);
  if (it == names_.end()) return {};
  std::set<std::string> nodes;
  for (const std::string& name : it->second) nodes.merge(workers_.Nodes(WorkerKey(key, name)));
  return {nodes.begin(), nodes.end()};
}

}  // namespace nereid::gm
