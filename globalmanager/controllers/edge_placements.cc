#include "globalmanager/controllers/edge_placements.h"

#include <algorithm>
#include <utility>

#include "common/log/log.h"

namespace nereid::gm {

namespace v1 = edge::v1;

namespace {

// The first entry of a node-sorted `sent` whose node is not before `node`.
template <typename SentList>
auto LowerBound(SentList& sent, std::string_view node) {
  return std::lower_bound(sent.begin(), sent.end(), node,
                          [](const auto& entry, std::string_view n) { return entry.node < n; });
}

}  // namespace

EdgePlacements::EdgePlacements(EdgeDispatcher* edge, std::string what)
    : edge_(edge), what_(std::move(what)) {}

const EdgePlacements::Sent* EdgePlacements::Find(const Placed& placed, std::string_view node) {
  auto it = LowerBound(placed.sent, node);
  return it != placed.sent.end() && it->node == node ? &*it : nullptr;
}

void EdgePlacements::Record(Placed& placed, const std::string& node, SharedResource resource) {
  auto it = LowerBound(placed.sent, node);
  if (it != placed.sent.end() && it->node == node) {
    it->resource = std::move(resource);
  } else {
    placed.sent.insert(it, Sent{node, std::move(resource)});
  }
}

absl::Status EdgePlacements::RemoveLocked(const std::string& key, Placed& placed,
                                          absl::FunctionRef<bool(const std::string&)> keep,
                                          EdgeChange* change) {
  absl::Status first;
  for (auto it = placed.sent.begin(); it != placed.sent.end();) {
    if (keep(it->node)) {
      ++it;
      continue;
    }
    // Under the ref the node was sent, so a node that still holds an older uid drops that one.
    if (absl::Status s = edge_->Remove(it->node, it->resource->ref()); !s.ok()) {
      LOG(WARNING) << what_ << " " << key << ": removing from node " << it->node
                   << " failed: " << s;
      first.Update(s);
      ++it;
      continue;
    }
    LOG(DEBUG) << what_ << " " << key << ": removed from node " << it->node;
    if (change != nullptr) change->removed.push_back(it->node);
    it = placed.sent.erase(it);
  }
  return first;
}

absl::Status EdgePlacements::SendLocked(const std::string& key, Placed& placed,
                                        const std::string& node, const v1::Resource& resource,
                                        SharedResource& shared, EdgeChange* change) {
  // A re-created object (same name, another uid) is sent again: its generation starts over and
  // could equal the old object's version.
  const Sent* sent = Find(placed, node);
  if (sent != nullptr && sent->resource->version() == resource.version() &&
      sent->resource->ref().uid() == resource.ref().uid()) {
    return absl::OkStatus();
  }
  if (shared == nullptr) shared = std::make_shared<const v1::Resource>(resource);
  if (absl::Status s = edge_->Upsert(node, shared); !s.ok()) {
    LOG(WARNING) << what_ << " " << key << ": sending to node " << node << " failed: " << s;
    return s;
  }
  LOG(DEBUG) << what_ << " " << key << ": version " << resource.version() << " sent to node "
             << node;
  if (change != nullptr) (sent == nullptr ? change->added : change->updated).push_back(node);
  Record(placed, node, shared);
  return absl::OkStatus();
}

absl::Status EdgePlacements::Sync(const std::string& key,
                                  const std::map<std::string, v1::Resource>& resources,
                                  EdgeChange* change) {
  if (resources.empty()) return Forget(key, change);
  absl::MutexLock lock(&mu_);
  Placed& placed = placed_[key];
  // Nodes first drop what they no longer need (under the ref they were sent).
  absl::Status first = RemoveLocked(
      key, placed, [&](const std::string& node) { return resources.contains(node); }, change);
  placed.uid = resources.begin()->second.ref().uid();
  for (const auto& [node, resource] : resources) {
    SharedResource shared;  // Each node its own resource: copied only when it is sent.
    first.Update(SendLocked(key, placed, node, resource, shared, change));
  }
  if (placed.sent.empty()) placed_.erase(key);
  return first;
}

absl::Status EdgePlacements::Sync(const std::string& key, const v1::Resource& resource,
                                  const std::set<std::string>& nodes, EdgeChange* change) {
  if (nodes.empty()) return Forget(key, change);
  absl::MutexLock lock(&mu_);
  Placed& placed = placed_[key];
  absl::Status first = RemoveLocked(
      key, placed, [&](const std::string& node) { return nodes.contains(node); }, change);
  placed.uid = resource.ref().uid();
  SharedResource shared;  // One copy for every node it is sent to.
  for (const std::string& node : nodes) {
    first.Update(SendLocked(key, placed, node, resource, shared, change));
  }
  if (placed.sent.empty()) placed_.erase(key);
  return first;
}

absl::Status EdgePlacements::Forget(const std::string& key, EdgeChange* change) {
  absl::MutexLock lock(&mu_);
  auto it = placed_.find(key);
  if (it == placed_.end()) return absl::OkStatus();
  absl::Status s = RemoveLocked(
      key, it->second, [](const std::string&) { return false; }, change);
  if (it->second.sent.empty()) placed_.erase(it);
  return s;
}

std::set<std::string> EdgePlacements::Nodes(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  std::set<std::string> nodes;
  auto it = placed_.find(key);
  if (it == placed_.end()) return nodes;
  for (const Sent& sent : it->second.sent) nodes.insert(sent.node);
  return nodes;
}

bool EdgePlacements::Holds(const std::string& key, std::string_view node) const {
  absl::MutexLock lock(&mu_);
  auto it = placed_.find(key);
  return it != placed_.end() && Find(it->second, node) != nullptr;
}

std::string EdgePlacements::Uid(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = placed_.find(key);
  return it == placed_.end() ? std::string() : it->second.uid;
}

size_t EdgePlacements::size() const {
  absl::MutexLock lock(&mu_);
  return placed_.size();
}

}  // namespace nereid::gm
