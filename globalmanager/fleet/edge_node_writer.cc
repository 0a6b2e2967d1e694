#include "globalmanager/fleet/edge_node_writer.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/api/edge_node.h"
#include "common/kube/object.h"
#include "common/log/log.h"
#include "common/status/macros.h"

namespace nereid::gm {
namespace {

constexpr char kApiVersion[] = "sedna.io/v1alpha1";
constexpr char kKind[] = "EdgeNode";

bool OwnedByNode(const kube::Json& object) {
  for (const kube::OwnerReference& owner : kube::OwnerReferences(object)) {
    if (owner.kind == "Node" && owner.api_version == "v1") return true;
  }
  return false;
}

std::string LcDescription(const NodeRecord& record) {
  return absl::StrCat("LocalController ", record.lc_version.empty() ? "?" : record.lc_version,
                      " (commit ", record.lc_commit.empty() ? "?" : record.lc_commit, ")");
}

}  // namespace

EdgeNodeWriter::EdgeNodeWriter(Options options)
    : options_(std::move(options)),
      registry_(options_.registry != nullptr ? options_.registry
                                             : std::make_shared<prometheus::Registry>()),
      writes_(prometheus::BuildCounter()
                  .Name("nereid_gm_edgenode_writes_total")
                  .Help("EdgeNode status writes, by outcome (unchanged: the state changed and "
                        "changed back before its turn, nothing written)")
                  .Register(*registry_)),
      written_(writes_.Add({{"outcome", "written"}})),
      unchanged_(writes_.Add({{"outcome", "unchanged"}})),
      failed_(writes_.Add({{"outcome", "failed"}})),
      queue_depth_(prometheus::BuildGauge()
                       .Name("nereid_gm_edgenode_queue_depth")
                       .Help("Nodes whose EdgeNode status waits to be written")
                       .Register(*registry_)
                       .Add({})) {}

EdgeNodeWriter::~EdgeNodeWriter() { Stop(); }

absl::Status EdgeNodeWriter::Start() {
  absl::StatusOr<bool> served = options_.client->IsServed(api::EdgeNodesResource());
  if (served.ok() && !*served) {
    LOG(WARNING) << "edge nodes: the API server does not serve edgenodes.sedna.io (install "
                    "deploy/crds/sedna.io_edgenodes.yaml): `kubectl get en` stays empty";
    absl::MutexLock lock(&mu_);
    disabled_ = true;
    entries_.clear();
    queue_.clear();
    return absl::OkStatus();
  }
  if (!served.ok()) LOG(WARNING) << "edge nodes: API discovery: " << served.status();
  if (absl::Status adopted = Adopt(); !adopted.ok()) {
    LOG(WARNING) << "edge nodes: listing the EdgeNodes: " << adopted
                 << "; each node's object is read when it is first written";
  }
  absl::MutexLock lock(&mu_);
  if (stopping_ || thread_.joinable()) return absl::FailedPreconditionError("already started");
  thread_ = std::thread([this] { Run(); });
  return absl::OkStatus();
}

void EdgeNodeWriter::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

std::size_t EdgeNodeWriter::queued() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

void EdgeNodeWriter::OnNodeConnected(const NodeConnection& connection) {
  absl::MutexLock lock(&mu_);
  if (disabled_) return;
  const std::string node(connection.node);
  Entry& entry = entries_[node];
  NodeRecord& record = entry.record;
  if (connection.stream < record.stream) return;  // an older stream's news, late
  record.stream = connection.stream;
  record.connected = true;
  record.relayed = connection.relayed;
  record.since = connection.at;
  record.lc_version = connection.lc_version;
  record.lc_commit = connection.lc_commit;
  if (entry.gone) {  // its object went with the Node: made again if the Node is back
    entry.gone = false;
    entry.uid.clear();
  }
  EnqueueLocked(node, entry);
}

void EdgeNodeWriter::OnNodeDisconnected(std::string_view node, uint64_t stream, absl::Time at) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(std::string(node));
  if (it == entries_.end()) return;
  NodeRecord& record = it->second.record;
  if (stream != record.stream || !record.connected) return;
  record.connected = false;
  record.relayed = false;
  record.since = at;
  EnqueueLocked(it->first, it->second);
}

void EdgeNodeWriter::OnNodeSummary(std::string_view node, uint64_t stream,
                                   const edge::v1::NodeSummary& summary) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(std::string(node));
  if (it == entries_.end() || it->second.record.stream != stream) return;
  ApplySummary(it->second.record, summary, options_.clock->Now());
  EnqueueLocked(it->first, it->second);
}

void EdgeNodeWriter::EnqueueLocked(const std::string& node, Entry& entry) {
  if (entry.queued) return;
  entry.queued = true;
  queue_.push_back(node);
  queue_depth_.Set(static_cast<double>(queue_.size()));
}

void EdgeNodeWriter::Run() {
  absl::Duration backoff = absl::ZeroDuration();
  while (true) {
    std::string node;
    absl::flat_hash_map<std::string, kube::Json> adopted;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !queue_.empty();
      };
      while (!ready() && options_.clock->Now() < adopt_deadline_) {
        options_.clock->AwaitWithDeadline(&mu_, absl::Condition(&ready), adopt_deadline_);
      }
      if (stopping_) return;
      if (options_.clock->Now() >= adopt_deadline_) {
        adopt_deadline_ = absl::InfiniteFuture();
        adopted = std::exchange(adopted_, {});
      } else {
        node = std::move(queue_.front());
        queue_.pop_front();
        queue_depth_.Set(static_cast<double>(queue_.size()));
      }
    }
    if (node.empty()) {
      EndAdoptedConnections(std::move(adopted));
      continue;
    }
    const absl::Status written = Write(node);
    if (written.ok()) {
      backoff = absl::ZeroDuration();
      continue;
    }
    failed_.Increment();
    backoff = std::min(options_.max_backoff, backoff == absl::ZeroDuration()
                                                 ? options_.initial_backoff
                                                 : backoff * 2);
    LOG(WARNING) << "edge nodes: writing EdgeNode " << node << ": " << written << "; retrying in "
                 << backoff;
    absl::MutexLock lock(&mu_);
    if (auto it = entries_.find(node); it != entries_.end()) EnqueueLocked(node, it->second);
    options_.clock->AwaitWithDeadline(&mu_, absl::Condition(&stopping_),
                                      options_.clock->Now() + backoff);
  }
}

absl::Status EdgeNodeWriter::Write(const std::string& node) {
  Snapshot snapshot;
  Entry before;
  {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(node);
    if (it == entries_.end()) return absl::OkStatus();
    Entry& entry = it->second;
    entry.queued = false;
    if (entry.gone) return absl::OkStatus();
    before = entry;
    snapshot = Snapshot{node, entry.record, entry.uid, entry.written, entry.fingerprint};
  }
  const kube::Json status = StatusOf(snapshot.record, options_.status).ToJson();
  const std::size_t fingerprint = std::hash<std::string>{}(kube::DumpCompact(status));
  if (snapshot.written && fingerprint == snapshot.fingerprint) {
    unchanged_.Increment();
    return absl::OkStatus();
  }

  bool owned_by_node = before.owned_by_node;
  std::string uid = snapshot.uid;
  absl::Status outcome;
  if (uid.empty()) {
    absl::StatusOr<std::string> ensured = EnsureObject(node, &owned_by_node);
    if (ensured.ok()) {
      uid = *std::move(ensured);
    } else {
      outcome = ensured.status();
    }
  }
  if (outcome.ok()) {
    outcome = options_.client
                  ->Patch(api::EdgeNodesResource(), "", node, kube::PatchType::kMerge,
                          kube::Json{{"status", status}}, "status")
                  .status();
  }

  absl::MutexLock lock(&mu_);
  Entry& entry = entries_[node];
  entry.owned_by_node = owned_by_node;
  if (absl::IsNotFound(outcome)) {
    entry.uid.clear();
    entry.written = false;
    if (owned_by_node) {
      // Collected with its Node (or the Node is gone): not made again for this stream.
      LOG(INFO) << "edge nodes: node " << node << " has no Node object any more; its EdgeNode "
                << "is not re-created until the node reconnects with its Node back";
      entry.gone = true;
    } else {
      EnqueueLocked(node, entry);  // deleted by someone: made again
    }
    return absl::OkStatus();
  }
  entry.uid = uid;  // made or read: not again after a failed patch
  if (!outcome.ok()) return outcome;
  entry.written = true;
  entry.fingerprint = fingerprint;
  entry.written_connected = snapshot.record.connected;
  entry.written_since = snapshot.record.since;
  written_.Increment();
  RecordTransition(snapshot, before, uid);
  return absl::OkStatus();
}

absl::StatusOr<std::string> EdgeNodeWriter::EnsureObject(const std::string& node,
                                                         bool* owned_by_node) {
  absl::StatusOr<kube::Json> existing = options_.client->Get(api::EdgeNodesResource(), "", node);
  if (existing.ok()) {
    *owned_by_node = OwnedByNode(*existing);
    return kube::Uid(*existing);
  }
  if (!absl::IsNotFound(existing.status())) return existing.status();

  kube::Json object = {{"apiVersion", kApiVersion},
                       {"kind", kKind},
                       {"metadata", {{"name", node}}}};
  absl::StatusOr<kube::Json> owner = options_.client->Get(kube::resources::Nodes(), "", node);
  if (owner.ok()) {
    kube::OwnerReference reference;
    reference.api_version = "v1";
    reference.kind = "Node";
    reference.name = node;
    reference.uid = kube::Uid(*owner);
    object["metadata"]["ownerReferences"] = kube::Json::array({reference.ToJson()});
    *owned_by_node = true;
  } else if (absl::IsNotFound(owner.status())) {
    if (*owned_by_node) return absl::NotFoundError(absl::StrCat("Node ", node, " was deleted"));
    LOG(INFO) << "edge nodes: no Node named " << node
              << ": its EdgeNode has no owner (not removed with a Node)";
  } else {
    return owner.status();
  }

  absl::StatusOr<kube::Json> created =
      options_.client->Create(api::EdgeNodesResource(), "", object);
  if (absl::IsAlreadyExists(created.status())) {
    created = options_.client->Get(api::EdgeNodesResource(), "", node);
  }
  if (!created.ok()) return created.status();
  LOG(INFO) << "edge nodes: created EdgeNode " << node;
  return kube::Uid(*created);
}

void EdgeNodeWriter::RecordTransition(const Snapshot& snapshot, const Entry& before,
                                      const std::string& uid) {
  if (options_.events == nullptr) return;
  kube::ObjectReference ref;
  ref.api_version = kApiVersion;
  ref.kind = kKind;
  ref.name = snapshot.node;
  ref.uid = uid;
  const NodeRecord& record = snapshot.record;
  if (record.connected && !before.written_connected) {
    options_.events->Record(ref, kube::EventType::kNormal, "Connected",
                            absl::StrCat(LcDescription(record), " connected to GM replica ",
                                         options_.status.replica));
  } else if (record.connected && record.since != before.written_since) {
    // Only a session that replaced one this replica wrote is the node's own reconnect; the first
    // session of a node listed connected from the previous leader follows that leader's end (a GM
    // restart with 10,000 nodes made 10,000 "Reconnected" Events; bench/RESULTS.md).
    if (before.written) {
      options_.events->Record(ref, kube::EventType::kNormal, "Reconnected",
                              absl::StrCat(LcDescription(record), " reconnected to GM replica ",
                                           options_.status.replica));
    }
  } else if (!record.connected && before.written_connected) {
    options_.events->Record(ref, kube::EventType::kWarning, "Disconnected",
                            "the LocalController's stream ended");
  }
}

absl::Status EdgeNodeWriter::Adopt() {
  ASSIGN_OR_RETURN(kube::ObjectList list,
                   kube::ListAll(*options_.client, api::EdgeNodesResource(), "", {}));
  absl::MutexLock lock(&mu_);
  started_at_ = options_.clock->Now();
  for (kube::Json& object : list.items) {
    Entry& entry = entries_[kube::Name(object)];
    entry.uid = kube::Uid(object);
    entry.owned_by_node = OwnedByNode(object);
    const kube::Json* connected = kube::FindPath(object, "status.connected");
    entry.written_connected =
        connected != nullptr && connected->is_boolean() && connected->get<bool>();
    entry.written_since = kube::ParseTimestamp(kube::StringAt(object, "status.since"))
                              .value_or(absl::InfinitePast());
    if (entry.written_connected && entry.record.stream == 0) {
      adopted_[kube::Name(object)] = std::move(object["status"]);
    }
  }
  if (!adopted_.empty()) adopt_deadline_ = started_at_ + options_.adopt_grace;
  LOG(INFO) << "edge nodes: " << list.items.size() << " EdgeNodes exist, " << adopted_.size()
            << " shown connected";
  return absl::OkStatus();
}

void EdgeNodeWriter::EndAdoptedConnections(absl::flat_hash_map<std::string, kube::Json> adopted) {
  absl::Time since;
  {
    absl::MutexLock lock(&mu_);
    since = started_at_;
  }
  NodeRecord disconnected;
  disconnected.since = since;
  const kube::Json condition = StatusOf(disconnected, options_.status).conditions.front().ToJson();
  for (auto& [node, status] : adopted) {
    {
      absl::MutexLock lock(&mu_);
      auto it = entries_.find(node);
      if (it == entries_.end() || it->second.record.stream != 0) continue;  // it came back
    }
    status["connected"] = false;
    status["since"] = kube::FormatTimestamp(since);
    status["servedBy"] = nullptr;
    status["relayed"] = nullptr;
    if (status.contains("conditions") && status["conditions"].is_array()) {
      for (kube::Json& existing : status["conditions"]) {
        if (existing.is_object() && existing.value("type", "") == api::kEdgeNodeConnected) {
          existing = condition;
        }
      }
    }
    const absl::Status patched =
        options_.client
            ->Patch(api::EdgeNodesResource(), "", node, kube::PatchType::kMerge,
                    kube::Json{{"status", status}}, "status")
            .status();
    if (!patched.ok()) {
      LOG(WARNING) << "edge nodes: marking " << node << " disconnected: " << patched;
      continue;
    }
    std::string uid;
    {
      absl::MutexLock lock(&mu_);
      Entry& entry = entries_[node];
      entry.written_connected = false;
      entry.written_since = since;
      uid = entry.uid;
    }
    if (options_.events != nullptr) {
      kube::ObjectReference ref;
      ref.api_version = kApiVersion;
      ref.kind = kKind;
      ref.name = node;
      ref.uid = uid;
      options_.events->Record(
          ref, kube::EventType::kWarning, "Disconnected",
          absl::StrCat("the LocalController did not connect to GM replica ",
                       options_.status.replica, " within ",
                       absl::FormatDuration(options_.adopt_grace), " of its leading"));
    }
  }
}

}  // namespace nereid::gm
