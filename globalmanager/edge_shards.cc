#include "globalmanager/edge_shards.h"

#include <algorithm>
#include <utility>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/kube/errors.h"
#include "common/kube/resource.h"
#include "common/kube/thread_name.h"
#include "common/log/log.h"
#include "common/strings/dns_name.h"
#include "globalmanager/edgehub/rendezvous.h"

namespace nereid::gm {
namespace {

constexpr char kShardLabel[] = "nereid.io/edge-shard";

// `<group>-edge-<identity>`, with an identity that is no DNS name (the default hostname_random
// has an underscore) lower-cased, its other characters replaced by '-' and a hash of it appended,
// so two such identities still name two Leases.
std::string ShardLeaseName(const std::string& group, const std::string& identity) {
  std::string name = absl::StrCat(group, "-edge-");
  bool changed = false;
  for (char c : identity) {
    const char lower = absl::ascii_tolower(static_cast<unsigned char>(c));
    const bool valid = absl::ascii_isalnum(static_cast<unsigned char>(lower)) || lower == '-' ||
                       lower == '.';
    changed = changed || !valid || lower != c;
    name.push_back(valid ? lower : '-');
  }
  if (changed) {
    absl::StrAppend(&name, "-", absl::Hex(RendezvousWeight(identity, group) & 0xffffffffu,
                                          absl::kZeroPad8));
  }
  return name;
}

// This replica's shard Lease, held like the leader Lease.
kube::LeaderElectionConfig LeaseConfig(const EdgeShards::Options& options,
                                       const std::string& lease_name, const std::string& address) {
  kube::LeaderElectionConfig lease = options.lease;
  lease.lease_name = lease_name;
  lease.release_on_cancel = true;
  lease.labels[kShardLabel] = options.group;
  lease.holder_annotations[kEdgeAddressAnnotation] = address;
  return lease;
}

std::string StringAt(const kube::Json& object, std::string_view path) {
  const kube::Json* value = kube::FindPath(object, path);
  return value != nullptr && value->is_string() ? value->get<std::string>() : "";
}

}  // namespace

absl::StatusOr<std::unique_ptr<EdgeShards>> EdgeShards::Create(Options options) {
  if (options.client == nullptr) return absl::InvalidArgumentError("edge shards: no API client");
  // The group is the shard Leases' label value: at most 63 characters.
  if (options.group.size() > 63 || !IsDnsSubdomain(options.group)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "edge shards: the leader Lease's name \"", options.group,
        "\" must be a DNS name of at most 63 characters to label the shard Leases"));
  }
  std::string lease_name = ShardLeaseName(options.group, options.lease.identity);
  if (!IsDnsSubdomain(lease_name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "edge shards: \"", lease_name,
        "\" (the leader Lease's name, \"-edge-\", the replica's identity) is not a valid Lease "
        "name: use a DNS subdomain as --id"));
  }
  if (options.moves_per_second < 1) {
    return absl::InvalidArgumentError("edge shards: moves per second must be >= 1");
  }
  if (absl::Status lease = kube::ValidateLeaderElectionConfig(LeaseConfig(options, lease_name, ""));
      !lease.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("edge shards: ", lease.message()));
  }
  return std::unique_ptr<EdgeShards>(new EdgeShards(std::move(options), std::move(lease_name)));
}

EdgeShards::EdgeShards(Options options, std::string lease_name)
    : options_(std::move(options)),
      lease_name_(std::move(lease_name)),
      clock_(options_.clock != nullptr ? options_.clock : Clock::Real()),
      registry_(options_.registry != nullptr ? options_.registry
                                             : std::make_shared<prometheus::Registry>()) {
  prometheus::Registry& r = *registry_;
  moved_ = &prometheus::BuildCounter()
                .Name("nereid_gm_edge_nodes_moved_total")
                .Help("Node streams this replica ended with the address of the replica that owns "
                      "the node now (edge shards: a replica joined)")
                .Register(r)
                .Add({});
  collected_ = &prometheus::BuildCounter()
                    .Name("nereid_gm_edge_shard_leases_collected_total")
                    .Help("Edge shard Leases of replicas gone (released or expired) deleted")
                    .Register(r)
                    .Add({});
  replicas_ = &prometheus::BuildGauge()
                   .Name("nereid_gm_edge_shard_replicas")
                   .Help("Live GM replicas the nodes are sharded over, as this replica sees them")
                   .Register(r)
                   .Add({});
}

EdgeShards::~EdgeShards() { Stop(); }

void EdgeShards::Start(std::string address, EdgeHub* hub, EdgeRelay* relay) {
  absl::MutexLock lifecycle(&lifecycle_mu_);
  {
    absl::MutexLock lock(&mu_);
    if (started_ || stopped_) return;
    started_ = true;
    address_ = address;
  }
  hub_ = hub;
  relay_ = relay;

  absl::StatusOr<std::unique_ptr<kube::LeaderElector>> elector = kube::LeaderElector::Create(
      options_.client, LeaseConfig(options_, lease_name_, address), clock_);
  if (elector.ok()) {
    lease_ = *std::move(elector);
    lease_->Start();
  } else {
    // Validated by Create; without its Lease this replica still serves the nodes that reach it.
    LOG(ERROR) << "edge shards: " << elector.status();
  }

  kube::ReflectorOptions watch;
  watch.name = "edge-shard-leases";
  watch.ns = options_.lease.lease_namespace;
  watch.label_selector = absl::StrCat(kShardLabel, "=", options_.group);
  watch_ = std::make_unique<kube::Reflector>(options_.client, kube::resources::Leases(),
                                             static_cast<kube::ReflectorStore*>(this),
                                             clock_, std::move(watch));
  watch_->Start();
  thread_ = std::thread([this] {
    kube::SetCurrentThreadName("gm-edge-shards");
    Run();
  });
  LOG(INFO) << "edge shards: " << options_.lease.identity << " serves its share of the nodes at "
            << address << " (Lease " << options_.lease.lease_namespace << "/" << lease_name_
            << ")";
}

void EdgeShards::Stop() {
  absl::MutexLock lifecycle(&lifecycle_mu_);
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  if (thread_.joinable()) thread_.join();
  if (watch_ != nullptr) watch_->Stop();
  if (lease_ != nullptr) lease_->Stop();  // releases the Lease
}

// ---------------------------------------------------------------------------------------------
// Ownership

std::string EdgeShards::LiveSet::OwnerElsewhere(std::string_view node) const {
  if (identities.size() < 2) return "";
  const std::string_view owner = RendezvousOwner(node, identities);
  if (owner == self) return "";
  for (std::size_t i = 0; i < identities.size(); ++i) {
    if (identities[i] == owner) return addresses[i];
  }
  return "";
}

EdgeShards::LiveSet EdgeShards::LiveLocked(absl::Time now) const {
  LiveSet live;
  live.self = options_.lease.identity;
  if (!started_ || stopped_) return live;
  std::vector<std::pair<std::string, std::string>> members = {{options_.lease.identity, address_}};
  for (const auto& [name, peer] : peers_) {
    if (name == lease_name_ || peer.identity.empty() || peer.address.empty()) continue;
    if (peer.identity == options_.lease.identity) continue;  // a Lease of ours under another group?
    if (now >= peer.changed + peer.duration) continue;
    members.emplace_back(peer.identity, peer.address);
  }
  std::sort(members.begin(), members.end());
  for (auto& [identity, address] : members) {
    live.identities.push_back(std::move(identity));
    live.addresses.push_back(std::move(address));
  }
  return live;
}

EdgeShards::LiveSet EdgeShards::Live() const {
  const absl::Time now = clock_->Now();
  absl::ReaderMutexLock lock(&mu_);
  return LiveLocked(now);
}

std::string EdgeShards::OwnerElsewhere(std::string_view node) const {
  return Live().OwnerElsewhere(node);
}

std::vector<std::string> EdgeShards::Replicas() const { return Live().identities; }

bool EdgeShards::WatchSynced() const {
  absl::MutexLock lifecycle(&lifecycle_mu_);
  return watch_ != nullptr && watch_->HasSynced();
}

// ---------------------------------------------------------------------------------------------
// The Leases, from the watch

void EdgeShards::ObserveLocked(const kube::Json& lease, absl::Time now) {
  const std::string name = kube::Name(lease);
  const auto [it, first_seen] = peers_.try_emplace(name);
  Peer& peer = it->second;
  const std::string holder = StringAt(lease, "spec.holderIdentity");
  const kube::Json* seconds = kube::FindPath(lease, "spec.leaseDurationSeconds");
  peer.duration = absl::Seconds(seconds != nullptr && seconds->is_number_integer()
                                    ? seconds->get<int64_t>()
                                    : 0);
  std::string record = absl::StrCat(holder, "@", StringAt(lease, "spec.renewTime"));
  if (first_seen) {
    peer.record = std::move(record);
    peer.changed = now - peer.duration;
  } else if (record != peer.record) {
    peer.record = std::move(record);
    peer.changed = now;
  }
  peer.identity = holder;
  peer.address.clear();
  // Not a dotted path: the annotation's key holds dots.
  if (const kube::Json* annotations = kube::FindPath(lease, "metadata.annotations");
      annotations != nullptr && annotations->is_object()) {
    auto it = annotations->find(kEdgeAddressAnnotation);
    if (it != annotations->end() && it->is_string()) peer.address = it->get<std::string>();
  }
  peer.resource_version = kube::ResourceVersion(lease);
}

void EdgeShards::Replace(std::vector<kube::ObjectPtr> objects, const std::string&) {
  const absl::Time now = clock_->Now();
  absl::MutexLock lock(&mu_);
  absl::flat_hash_map<std::string, Peer> previous = std::move(peers_);
  peers_.clear();
  for (const kube::ObjectPtr& object : objects) {
    const std::string name = kube::Name(*object);
    if (auto it = previous.find(name); it != previous.end()) peers_[name] = std::move(it->second);
    ObserveLocked(*object, now);
  }
}

void EdgeShards::Add(kube::ObjectPtr object) {
  const absl::Time now = clock_->Now();
  absl::MutexLock lock(&mu_);
  ObserveLocked(*object, now);
}

void EdgeShards::Update(kube::ObjectPtr object) { Add(std::move(object)); }

void EdgeShards::Delete(kube::ObjectPtr object) {
  absl::MutexLock lock(&mu_);
  peers_.erase(kube::Name(*object));
}

// ---------------------------------------------------------------------------------------------
// Moving nodes and collecting Leases

void EdgeShards::Run() {
  const int budget = std::max<int>(
      1, static_cast<int>(options_.moves_per_second * absl::ToDoubleSeconds(options_.sweep_period)));
  int moved_in_burst = 0;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      clock_->AwaitFor(&mu_, absl::Condition(&stopped_), options_.sweep_period);
      if (stopped_) return;
    }
    if (const int moved = MoveNodes(budget); moved > 0) {
      LOG(INFO) << "edge shards: sent " << moved << " nodes to the replicas that own them now";
      moved_in_burst += moved;
    } else if (moved_in_burst > 0) {
      // The moved nodes' connections (TLS state and buffers, ~80 KiB each) were freed on gRPC's
      // threads, whose malloc arenas keep them: give them back once the burst is over.
      LOG(INFO) << "edge shards: " << moved_in_burst << " nodes moved; returning freed memory";
      moved_in_burst = 0;
#if defined(__GLIBC__)
      malloc_trim(0);
#endif
    }
    CollectLeases();
    replicas_->Set(static_cast<double>(Replicas().size()));
  }
}

int EdgeShards::MoveNodes(int budget) {
  const LiveSet live = Live();
  if (live.identities.size() < 2) return 0;
  int moved = 0;
  if (hub_ != nullptr) {
    for (const std::string& node : hub_->DirectNodes()) {
      if (moved >= budget) break;
      const std::string owner = live.OwnerElsewhere(node);
      if (!owner.empty() && hub_->MoveNode(node, owner)) ++moved;
    }
  }
  if (relay_ != nullptr && moved < budget) {
    absl::flat_hash_map<std::string, std::string> moves;
    for (std::string& node : relay_->Nodes()) {
      if (moved + static_cast<int>(moves.size()) >= budget) break;
      if (std::string owner = live.OwnerElsewhere(node); !owner.empty()) {
        moves.emplace(std::move(node), std::move(owner));
      }
    }
    moved += relay_->MoveNodes(moves);
  }
  moved_->Increment(moved);
  return moved;
}

void EdgeShards::CollectLeases() {
  std::vector<std::pair<std::string, std::string>> gone;  // name, resourceVersion
  {
    const absl::Time now = clock_->Now();
    absl::ReaderMutexLock lock(&mu_);
    for (const auto& [name, peer] : peers_) {
      if (name == lease_name_) continue;
      if (peer.identity.empty() || now >= peer.changed + options_.collect_after) {
        gone.emplace_back(name, peer.resource_version);
      }
    }
  }
  for (auto& [name, resource_version] : gone) {
    {
      absl::MutexLock lock(&mu_);
      if (stopped_) return;  // the API may be slow to answer; a stopping replica need not wait
    }
    kube::DeleteOptions delete_options;
    delete_options.precondition_resource_version = resource_version;
    absl::Status deleted = options_.client->Delete(kube::resources::Leases(),
                                                   options_.lease.lease_namespace, name, delete_options);
    if (deleted.ok()) {
      collected_->Increment();
      LOG(INFO) << "edge shards: deleted the Lease " << name << " of a replica gone";
    } else if (!absl::IsNotFound(deleted) && !kube::IsConflict(deleted)) {
      LOG(WARNING) << "edge shards: deleting the Lease " << name << ": " << deleted;
      continue;
    }
    absl::MutexLock lock(&mu_);
    if (auto it = peers_.find(name); it != peers_.end() && it->second.resource_version ==
                                                               resource_version) {
      peers_.erase(it);
    }
  }
}

}  // namespace nereid::gm
