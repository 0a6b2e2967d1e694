#include "globalmanager/controllers/edge_placements.h"

#include <utility>

#include "common/log/log.h"

namespace nereid::gm {

namespace v1 = edge::v1;

EdgePlacements::EdgePlacements(EdgeDispatcher* edge, std::string what)
    : edge_(edge), what_(std::move(what)) {}

absl::Status EdgePlacements::RemoveLocked(const std::string& key, Placed& placed,
                                          const std::map<std::string, v1::Resource>& keep,
                                          EdgeChange* change) {
  absl::Status first;
  for (auto it = placed.versions.begin(); it != placed.versions.end();) {
    if (keep.contains(it->first)) {
      ++it;
      continue;
    }
    if (absl::Status s = edge_->Remove(it->first, placed.ref); !s.ok()) {
      LOG(WARNING) << what_ << " " << key << ": removing from node " << it->first
                   << " failed: " << s;
      first.Update(s);
      ++it;
      continue;
    }
    LOG(DEBUG) << what_ << " " << key << ": removed from node " << it->first;
    if (change != nullptr) change->removed.push_back(it->first);
    it = placed.versions.erase(it);
  }
  return first;
}

absl::Status EdgePlacements::Sync(const std::string& key,
                                  const std::map<std::string, v1::Resource>& resources,
                                  EdgeChange* change) {
  if (resources.empty()) return Forget(key, change);
  absl::MutexLock lock(&mu_);
  Placed& placed = placed_[key];
  const v1::ObjectRef& ref = resources.begin()->second.ref();
  // Nodes first drop what they no longer need (under the ref they were sent).
  absl::Status first = RemoveLocked(key, placed, resources, change);
  // A re-created object (same name, another uid) is sent again everywhere: its generation
  // starts over and could equal the old object's version.
  const bool recreated = !placed.ref.uid().empty() && placed.ref.uid() != ref.uid();
  placed.ref = ref;
  for (const auto& [node, resource] : resources) {
    auto it = placed.versions.find(node);
    if (!recreated && it != placed.versions.end() && it->second == resource.version()) continue;
    if (absl::Status s = edge_->Upsert(node, resource); !s.ok()) {
      LOG(WARNING) << what_ << " " << key << ": sending to node " << node << " failed: " << s;
      first.Update(s);
      continue;
    }
    LOG(DEBUG) << what_ << " " << key << ": version " << resource.version() << " sent to node "
               << node;
    if (change != nullptr) {
      (it == placed.versions.end() ? change->added : change->updated).push_back(node);
    }
    placed.versions[node] = resource.version();
  }
  if (placed.versions.empty()) placed_.erase(key);
  return first;
}

absl::Status EdgePlacements::Sync(const std::string& key, const v1::Resource& resource,
                                  const std::set<std::string>& nodes, EdgeChange* change) {
  std::map<std::string, v1::Resource> resources;
  for (const std::string& node : nodes) resources.emplace(node, resource);
  return Sync(key, resources, change);
}

absl::Status EdgePlacements::Forget(const std::string& key, EdgeChange* change) {
  absl::MutexLock lock(&mu_);
  auto it = placed_.find(key);
  if (it == placed_.end()) return absl::OkStatus();
  absl::Status s = RemoveLocked(key, it->second, {}, change);
  if (it->second.versions.empty()) placed_.erase(it);
  return s;
}

std::set<std::string> EdgePlacements::Nodes(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  std::set<std::string> nodes;
  auto it = placed_.find(key);
  if (it == placed_.end()) return nodes;
  for (const auto& [node, version] : it->second.versions) nodes.insert(node);
  return nodes;
}

bool EdgePlacements::Holds(const std::string& key, std::string_view node) const {
  absl::MutexLock lock(&mu_);
  auto it = placed_.find(key);
  return it != placed_.end() && it->second.versions.contains(std::string(node));
}

std::string EdgePlacements::Uid(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = placed_.find(key);
  return it == placed_.end() ? std::string() : it->second.ref.uid();
}

size_t EdgePlacements::size() const {
  absl::MutexLock lock(&mu_);
  return placed_.size();
}

}  // namespace nereid::gm
