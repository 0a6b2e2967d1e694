#include "globalmanager/daemon.h"

#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/kube/config.h"
#include "common/kube/rest_client.h"
#include "common/kube/thread_name.h"
#include "common/log/log.h"
#include "common/net/host_port.h"
#include "common/status/macros.h"
#include "common/version/build_info.h"
#include "common/version/version.h"
#include "globalmanager/controllers/cache_policy.h"

namespace nereid::gm {
namespace {

// Sedna's genResyncPeriod: a random period in [min, 2·min), so replicas and restarts do not
// resync in lockstep. 0 disables resync.
absl::Duration ResyncPeriod(int64_t min_seconds) {
  if (min_seconds <= 0) return absl::ZeroDuration();
  std::random_device random;
  std::uniform_real_distribution<double> factor(1.0, 2.0);
  return absl::Seconds(static_cast<double>(min_seconds) * factor(random));
}

// `configured` (HOST:PORT, validated by the config) with port 0 replaced by the port the hub got.
std::string AdvertisedEdgeAddress(const std::string& configured, int hub_port) {
  absl::StatusOr<net::HostPort> address = net::ParseHostPort(configured);
  if (!address.ok()) return configured;
  if (address->port == 0) address->port = hub_port;
  return address->ToString();
}

// The namespace, identity and timings of every Lease a replica holds (the leader Lease and, with
// edge shards, its own shard Lease).
kube::LeaderElectionConfig LeaseHolder(const LeaderElectionSettings& settings,
                                       const std::string& lease_namespace) {
  kube::LeaderElectionConfig lease;
  lease.lease_namespace = lease_namespace;
  lease.identity = settings.identity;
  lease.lease_duration = settings.lease_duration;
  lease.renew_deadline = settings.renew_deadline;
  lease.retry_period = settings.retry_period;
  lease.release_on_cancel = true;
  return lease;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Daemon>> Daemon::Create(GmConfig config, DaemonOptions options) {
  RETURN_IF_ERROR(ValidateConfig(config));
  std::unique_ptr<Daemon> daemon(new Daemon(std::move(config), std::move(options)));
  std::string kube_namespace = "default";
  if (daemon->options_.client != nullptr) {
    daemon->client_ = daemon->options_.client;
  } else {
    kube::LoadOptions load;
    load.kubeconfig_path = daemon->config_.kubeconfig;
    absl::StatusOr<kube::KubeConfig> kube_config = kube::LoadKubeConfig(load);
    if (!kube_config.ok()) {
      return absl::Status(kube_config.status().code(),
                          absl::StrCat("Kubernetes API configuration: ",
                                       kube_config.status().message()));
    }
    LOG(INFO) << "gm: Kubernetes API " << kube_config->DebugString();
    kube_namespace = kube_config->default_namespace;
    kube::RestClient::Options rest;
    rest.user_agent = "nereid-globalmanager";
    rest.qps = daemon->config_.kube_api_qps;
    rest.burst = daemon->config_.kube_api_burst;
    rest.observer = daemon->kube_api_metrics_.get();
    ASSIGN_OR_RETURN(std::unique_ptr<kube::RestClient> client,
                     kube::RestClient::Create(*kube_config, rest));
    daemon->owned_client_ = std::move(client);
    daemon->client_ = daemon->owned_client_.get();
  }
  daemon->lease_namespace_ = daemon->config_.leader_election.lease_namespace.empty()
                                 ? kube_namespace
                                 : daemon->config_.leader_election.lease_namespace;
  return daemon;
}

Daemon::Daemon(GmConfig config, DaemonOptions options)
    : config_(std::move(config)),
      options_(std::move(options)),
      registry_(std::make_shared<prometheus::Registry>()),
      metrics_(std::make_unique<ControllerMetrics>(registry_)),
      kube_api_metrics_(std::make_unique<KubeApiMetrics>(*registry_)) {
  version::RegisterBuildInfo(*registry_);
}

Daemon::~Daemon() { Stop(); }

absl::Status Daemon::Start() {
  {
    absl::MutexLock lock(&mu_);
    if (started_) return absl::FailedPreconditionError("the daemon was already started");
    started_ = true;
  }
  if (config_.tls.insecure) {
    LOG(WARNING) << "gm: --insecure: the edge link runs in PLAINTEXT and trusts the node name "
                    "each LocalController claims; use it for local experiments only";
  }
  LOG(INFO) << "gm: " << version::VersionLine("nereid-gm") << " starting as " << identity()
            << " (namespace "
            << (config_.ns.empty() ? std::string("<all>") : config_.ns) << ", leader election "
            << (config_.leader_election.enabled
                    ? absl::StrCat("on Lease ", lease_namespace_, "/",
                                   config_.leader_election.lease_name)
                    : std::string("off"))
            << ")";

  kube::EventRecorderOptions events;
  events.component = "nereid-gm";
  events.reporting_instance = identity();
  // A reconcile's events of one reason (three children created) become one Event, not three;
  // long enough for a reconcile throttled by a small --kube-api-qps (5 q/s: 1 s was not).
  events.coalesce_window = absl::Seconds(3);
  recorder_ = std::make_unique<kube::EventRecorder>(client_, events);
  recorder_->Start();

  ReportRouter::Options router;
  router.workers = config_.report_workers;
  router.metrics = metrics_.get();
  router_ = std::make_unique<ReportRouter>(router);

  EdgeHub::Options hub;
  hub.allow_unauthenticated = config_.tls.insecure;
  if (!config_.tls.insecure) {
    // Any replica may lead, and then trusts the others to relay for their nodes.
    absl::StatusOr<std::string> certificate = net::ReadPemFile(config_.tls.cert_file);
    if (!certificate.ok()) {
      Stop();
      return certificate.status();
    }
    hub.relay_certificate = *std::move(certificate);
  }
  if (config_.edge_shards) {
    EdgeShards::Options shards;
    shards.client = client_;
    shards.group = config_.leader_election.lease_name;
    shards.lease = LeaseHolder(config_.leader_election, lease_namespace_);
    shards.moves_per_second = static_cast<int>(config_.edge_moves_per_second);
    shards.registry = registry_;
    absl::StatusOr<std::unique_ptr<EdgeShards>> created = EdgeShards::Create(std::move(shards));
    if (!created.ok()) {
      Stop();
      return created.status();
    }
    shards_ = *std::move(created);
    hub.ownership = shards_.get();
  }
  if (config_.leader_election.enabled && config_.edge_relay) {
    EdgeRelay::Options relay;
    relay.ownership = shards_.get();
    relay.tls = config_.tls;
    relay.keepalive = config_.edge_keepalive;
    relay.registry = registry_;
    absl::StatusOr<std::unique_ptr<EdgeRelay>> created = EdgeRelay::Create(std::move(relay));
    if (!created.ok()) {
      Stop();
      return absl::Status(created.status().code(),
                          absl::StrCat("edge relay: ", created.status().message()));
    }
    relay_ = *std::move(created);
    hub.relay = relay_.get();
  }
  if (config_.edge_nodes) {
    EdgeNodeWriter::Options writer;
    writer.client = client_;
    writer.events = recorder_.get();
    writer.status.replica = identity();
    writer.registry = registry_;
    edge_nodes_ = std::make_unique<EdgeNodeWriter>(std::move(writer));
    hub.node_listener = edge_nodes_.get();
  }
  hub.accept_streams = false;  // Until this replica leads and its registry is complete.
  hub.gm_version = absl::StrCat("nereid-gm ", std::string(version::Release()), " (commit ",
                                std::string(version::Commit()), ", replica ", identity(), ")");
  hub.registry = registry_;
  hub.report_handler = router_.get();
  hub.max_held_reports = static_cast<std::size_t>(config_.max_held_reports);
  hub_ = std::make_unique<EdgeHub>(hub);
  dispatcher_ = std::make_unique<EdgeHubDispatcher>(hub_.get());

  EdgeHubServerOptions server;
  server.listen = config_.listen;
  server.tls = config_.tls;
  server.keepalive = config_.edge_keepalive;
  server.handshakes.max_pending = static_cast<std::size_t>(config_.edge_max_pending_handshakes);
  server.handshakes.max_wait = absl::Seconds(config_.edge_max_connection_wait_seconds);
  absl::StatusOr<std::unique_ptr<EdgeHubServer>> hub_server = EdgeHubServer::Start(hub_.get(), server);
  if (!hub_server.ok()) {
    Stop();
    return absl::Status(hub_server.status().code(),
                        absl::StrCat("--listen ", config_.listen, ": ",
                                     hub_server.status().message()));
  }
  hub_server_ = *std::move(hub_server);

  if (config_.leader_election.enabled) {
    kube::LeaderElectionConfig election = LeaseHolder(config_.leader_election, lease_namespace_);
    election.lease_name = config_.leader_election.lease_name;
    election.on_started_leading = [this] { OnStartedLeading(); };
    election.on_stopped_leading = [this] { OnStoppedLeading(); };
    if (!config_.edge_advertise_address.empty()) {
      election.holder_annotations[kEdgeAddressAnnotation] =
          AdvertisedEdgeAddress(config_.edge_advertise_address, hub_server_->port());
    }
    election.on_new_leader = [this](const std::string& leader) {
      if (leader == identity()) return;
      const std::string address = elector_->LeaderAnnotation(kEdgeAddressAnnotation);
      LOG(INFO) << "gm: the leader is " << (leader.empty() ? "<none>" : leader)
                << (address.empty() ? std::string() : absl::StrCat(", its edge hub at ", address));
      hub_->SetOwnerAddress(address);
      if (relay_ != nullptr) relay_->SetLeaderAddress(address);
      if (!address.empty()) StartEdgeShards();  // the relay can serve this replica's nodes
    };
    absl::StatusOr<std::unique_ptr<kube::LeaderElector>> elector =
        kube::LeaderElector::Create(client_, std::move(election));
    if (!elector.ok()) {
      Stop();
      return elector.status();
    }
    elector_ = *std::move(elector);
  }

  HealthServer::Handlers handlers;
  handlers.healthy = [this] { return Healthy(); };
  handlers.ready = [this] { return Ready(); };
  handlers.before_metrics = [this] {
    metrics_->SampleWorkQueues();
    metrics_->ready().Set(Ready().ok ? 1 : 0);
  };
  absl::StatusOr<std::unique_ptr<HealthServer>> health =
      HealthServer::Start(config_.http_listen, registry_, std::move(handlers));
  if (!health.ok()) {
    Stop();
    return health.status();
  }
  health_ = *std::move(health);

  if (elector_ == nullptr) {
    LOG(WARNING) << "gm: leader election is off: run exactly one GM replica";
    leader_thread_ = std::thread([this] {
      kube::SetCurrentThreadName("gm-leader");
      OnStartedLeading();
    });
  } else {
    elector_->Start();
  }
  return absl::OkStatus();
}

void Daemon::OnStartedLeading() {
  {
    absl::MutexLock lock(&mu_);
    // After a lost lease the process is on its way out (the elector may win again meanwhile): the
    // work starts only once per process.
    if (stopping_ || fatal_.has_value()) return;
    leading_ = true;
  }
  metrics_->leader().Set(1);
  if (relay_ != nullptr) {
    // The streams relayed so far go to the previous leader; the nodes redial and are served here.
    relay_->SetLeaderAddress("");
    relay_->EndAll("this GM replica leads now; reconnect");
  }
  LOG(INFO) << "gm: " << identity() << " leads; starting the controllers";
  absl::Status status = StartLeaderWork();
  if (!status.ok()) {
    if (Stopping()) {
      LOG(INFO) << "gm: start of the controllers abandoned: " << status;
    } else {
      Fail(status);
    }
  }
}

void Daemon::OnStoppedLeading() {
  metrics_->leader().Set(0);
  bool stopping;
  {
    absl::MutexLock lock(&mu_);
    stopping = stopping_;
    leading_ = false;
    ready_ = false;
  }
  if (stopping) return;  // Our own Stop(): it stops the work.
  // Someone else may lead within moments: stop taking node streams now; the process exits.
  if (hub_ != nullptr) hub_->SetAcceptingStreams(false);
  Fail(absl::AbortedError(absl::StrCat(
      "lost the leader Lease ", lease_namespace_, "/", config_.leader_election.lease_name,
      "; exiting so a restart begins clean")));
}

bool Daemon::Stopping() const {
  absl::MutexLock lock(&mu_);
  return stopping_;
}

bool Daemon::ShouldAbandonLeaderWork() const {
  if (Stopping()) return true;
  return elector_ != nullptr && !elector_->IsLeader();
}

absl::Status Daemon::StartLeaderWork() {
  absl::MutexLock work(&work_mu_);
  if (ShouldAbandonLeaderWork()) return absl::CancelledError("stopping");
  if (informers_ != nullptr) return absl::FailedPreconditionError("the controllers already ran");

  informers_ = std::make_unique<kube::SharedInformerFactory>(
      client_, Clock::Real(), ResyncPeriod(config_.min_resync_period_seconds), GmCachePolicy);
  ControllerContext context;
  context.client = client_;
  context.informers = informers_.get();
  context.events = recorder_.get();
  context.edge = dispatcher_.get();
  context.reports = router_.get();
  context.metrics = metrics_.get();
  context.clock = Clock::Real();
  context.settings.lc_server = config_.lc_server;
  context.settings.kb_server = config_.kb_server;
  context.settings.storage_initializer_image = config_.storage_initializer_image;
  context.settings.literal_s3_credentials = config_.literal_s3_credentials;
  context.settings.ns = config_.ns;
  secrets_ = std::make_unique<SecretCache>(
      client_, Clock::Real(),
      SecretCacheOptions{.ttl = absl::Seconds(config_.secret_cache_ttl_seconds)});
  context.secrets = secrets_.get();
  context.settings.workers = config_.controller_workers;
  const ControllerRegistry registry =
      options_.registry.has_value() ? *options_.registry : DefaultRegistry();
  ASSIGN_OR_RETURN(controllers_, registry.CreateAll(context));

  informers_->Start();
  std::vector<kube::SharedInformer*> informers;
  for (const auto& controller : controllers_) {
    for (kube::SharedInformer* informer : controller->informers()) informers.push_back(informer);
  }
  const absl::Time deadline = absl::Now() + options_.cache_sync_timeout;
  while (!kube::WaitForCacheSync(informers, absl::Now() + absl::Milliseconds(200))) {
    if (ShouldAbandonLeaderWork()) return absl::CancelledError("stopping");
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("informer caches did not sync within ",
                       absl::FormatDuration(options_.cache_sync_timeout),
                       " (is the API server reachable, are the sedna.io CRDs installed, does the "
                       "service account may list them?)"));
    }
  }
  LOG(INFO) << "gm: caches synced (" << informers.size() << " informers)";

  for (const auto& controller : controllers_) {
    if (ShouldAbandonLeaderWork()) return absl::CancelledError("stopping");
    absl::Status primed = controller->PrimeEdge();
    if (!primed.ok()) {
      return absl::Status(primed.code(), absl::StrCat("controller ", controller->name(),
                                                      ": filling the edge registry: ",
                                                      primed.message()));
    }
  }
  hub_->MarkSynced();
  router_->Start();
  for (const auto& controller : controllers_) {
    absl::Status started = controller->Start();
    if (!started.ok()) {
      return absl::Status(started.code(), absl::StrCat("controller ", controller->name(), ": ",
                                                       started.message()));
    }
  }
  if (edge_nodes_ != nullptr) RETURN_IF_ERROR(edge_nodes_->Start());
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return absl::CancelledError("stopping");
    if (elector_ != nullptr && !elector_->IsLeader()) return absl::CancelledError("lost the lease");
    hub_->SetAcceptingStreams(true);
    ready_ = true;
  }
  LOG(INFO) << "gm: ready: " << controllers_.size() << " controllers running, edge hub serving";
  StartEdgeShards();
  return absl::OkStatus();
}

void Daemon::StopLeaderWork() {
  absl::MutexLock work(&work_mu_);
  for (auto& controller : controllers_) controller->Stop();
  if (router_ != nullptr) router_->Stop();
  if (informers_ != nullptr) informers_->Stop();
  controllers_.clear();
  secrets_.reset();  // After the controllers that read through it.
  informers_.reset();
}

void Daemon::StartEdgeShards() {
  if (shards_ == nullptr || Stopping()) return;
  shards_->Start(AdvertisedEdgeAddress(config_.edge_advertise_address, hub_server_->port()),
                 hub_.get(), relay_.get());
}

void Daemon::Fail(absl::Status status) {
  LOG(ERROR) << "gm: fatal: " << status;
  absl::MutexLock lock(&mu_);
  if (!fatal_.has_value()) fatal_ = std::move(status);
}

absl::Status Daemon::Wait() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](Daemon* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
        return self->stop_requested_ || self->fatal_.has_value();
      },
      this));
  return fatal_.has_value() ? *fatal_ : absl::OkStatus();
}

std::optional<absl::Status> Daemon::WaitFor(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  const bool done = mu_.AwaitWithTimeout(
      absl::Condition(
          +[](Daemon* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
            return self->stop_requested_ || self->fatal_.has_value();
          },
          this),
      timeout);
  if (!done) return std::nullopt;
  return fatal_.has_value() ? *fatal_ : absl::OkStatus();
}

void Daemon::RequestStop() {
  absl::MutexLock lock(&mu_);
  stop_requested_ = true;
}

void Daemon::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
    stopping_ = true;
    stop_requested_ = true;
    ready_ = false;
  }
  LOG(INFO) << "gm: stopping";
  // The shard Lease goes first: the other replicas take this one's nodes as they redial.
  if (shards_ != nullptr) shards_->Stop();
  // Nodes first: they reconnect (to the next leader) and resend what the router leaves unacked.
  if (relay_ != nullptr) relay_->Close("this GM replica is stopping");
  if (hub_ != nullptr) hub_->SetAcceptingStreams(false);
  StopLeaderWork();
  if (leader_thread_.joinable()) leader_thread_.join();
  // Releases the Lease after the work stopped, so two leaders never overlap.
  if (elector_ != nullptr) elector_->Stop();
  StopLeaderWork();  // In case the elector's start thread created work after the first pass.
  metrics_->leader().Set(0);
  if (health_ != nullptr) health_->Stop();
  if (hub_server_ != nullptr) hub_server_->Stop(options_.shutdown_grace);
  // After the hub's last callback; before the recorder its Events go to.
  if (edge_nodes_ != nullptr) edge_nodes_->Stop();
  if (recorder_ != nullptr) {
    recorder_->Stop(absl::Seconds(config_.event_drain_timeout_seconds));
  }
  LOG(INFO) << "gm: stopped";
}

int Daemon::edge_port() const { return hub_server_ != nullptr ? hub_server_->port() : 0; }

int Daemon::http_port() const { return health_ != nullptr ? health_->port() : 0; }

bool Daemon::ready() const {
  absl::MutexLock lock(&mu_);
  return ready_;
}

bool Daemon::leading() const {
  absl::MutexLock lock(&mu_);
  return leading_;
}

Probe Daemon::Healthy() const {
  absl::MutexLock lock(&mu_);
  if (fatal_.has_value()) return {false, std::string(fatal_->message())};
  return {};
}

Probe Daemon::Ready() const {
  // The elector and the relay have their own locks; ask them before taking ours.
  const std::string leader = elector_ != nullptr ? elector_->GetLeader() : std::string();
  const bool relaying =
      config_.ready_while_relaying && relay_ != nullptr && relay_->relaying();
  absl::MutexLock lock(&mu_);
  if (ready_) return {};
  if (stopping_) return {false, "stopping"};
  if (fatal_.has_value()) return {false, std::string(fatal_->message())};
  if (!leading_) {
    if (relaying) return {};  // --ready-while-relaying: serving nodes through the leader
    return {false, absl::StrCat("not the leader (leader: ", leader.empty() ? "none" : leader, ")")};
  }
  return {false, "leading; caches syncing and controllers starting"};
}

}  // namespace nereid::gm
