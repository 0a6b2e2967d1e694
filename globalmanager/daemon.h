#pragma once

// Daemon: the whole GlobalManager as a library object, so main.cc stays thin and tests run GMs
// in-process (against devapiserver or a fake client).
//
// Start order (each step's stop registered before the next, stopped in reverse):
//   Kubernetes client → EventRecorder → ReportRouter → EdgeHub (refusing node streams) +
//   EdgeHubServer on --listen (mTLS) → HealthServer on --http-listen → LeaderElector.
// Only the leader runs the controllers, on the elector's start thread:
//   informer factory + controllers (they register informers and report sinks) → factory starts →
//   caches synced → every controller PrimeEdge()s the hub registry → hub.MarkSynced() → report
//   workers and reconcile workers start → the EdgeNode writer starts (--edge-nodes) → the hub
//   accepts node streams → ready (/readyz 200).
// A replica that is not the leader keeps its /readyz at 503, so a Service routes to the leader;
// node streams that reach it anyway are relayed to the leader's hub (--edge-relay, the default)
// or refused with UNAVAILABLE and the leader's address.
//
// Losing the lease (renewals failed for the renew deadline) is fatal: the hub refuses streams at
// once, Wait() returns Aborted, and main exits non-zero so Kubernetes restarts the process with
// empty caches — client-go's and controller-runtime's choice: restarting controllers, informers
// and the synced gate in place would need every component to support a second start, and a fresh
// process is the one state known to be clean.
//
// Stop (SIGTERM/SIGINT, or Stop()): the hub refuses and finishes node streams (nodes reconnect to
// the next leader), controllers stop, queued reports are answered RETRY (the LC resends them to
// the next leader), informers stop, the Lease is released (the next leader takes over at its next
// retry instead of after the lease duration), then the servers and the event recorder stop.

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/kube/client.h"
#include "common/kube/event_recorder.h"
#include "common/kube/leader_election.h"
#include "common/kube/shared_informer_factory.h"
#include "globalmanager/config.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/controller_metrics.h"
#include "globalmanager/controllers/edge_dispatcher.h"
#include "globalmanager/controllers/gm_controller.h"
#include "globalmanager/controllers/registry.h"
#include "globalmanager/controllers/report_router.h"
#include "globalmanager/controllers/secret_cache.h"
#include "globalmanager/edge_shards.h"
#include "globalmanager/edgehub/edge_hub.h"
#include "globalmanager/edgehub/edge_hub_dispatcher.h"
#include "globalmanager/edgehub/server.h"
#include "globalmanager/fleet/edge_node_writer.h"
#include "globalmanager/health_server.h"
#include "globalmanager/kube_api_metrics.h"
#include "prometheus/registry.h"

namespace nereid::gm {

struct DaemonOptions {
  // Use this client instead of one built from the kubeconfig (tests). Must outlive the daemon.
  kube::KubeClient* client = nullptr;
  // The controllers to run; default DefaultRegistry().
  std::optional<ControllerRegistry> registry;
  absl::Duration cache_sync_timeout = absl::Minutes(2);
  absl::Duration shutdown_grace = absl::Seconds(5);
};

class Daemon {
 public:
  // Validates the configuration and builds the Kubernetes client; nothing listens yet.
  static absl::StatusOr<std::unique_ptr<Daemon>> Create(GmConfig config, DaemonOptions options = {});
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Binds the edge hub and health listeners and starts campaigning for the Lease. Fails with a
  // clear error on bad TLS files or busy addresses (nothing is left running then).
  absl::Status Start();
  // Blocks until RequestStop() (→ OK) or a fatal error: lost leadership (Aborted), controllers
  // failing to start (their error).
  absl::Status Wait();
  // Like Wait, for at most `timeout`; nullopt when neither happened.
  std::optional<absl::Status> WaitFor(absl::Duration timeout);
  // Makes Wait() return OK (safe from a signal-handling thread). Does not stop anything.
  void RequestStop();
  // The graceful stop described above. Idempotent.
  void Stop();

  int edge_port() const;
  int http_port() const;
  const std::string& identity() const { return config_.leader_election.identity; }
  // Leading and serving: controllers started, hub accepting node streams.
  bool ready() const;
  bool leading() const;
  EdgeHub* hub() { return hub_.get(); }
  ControllerMetrics& metrics() { return *metrics_; }

 private:
  Daemon(GmConfig config, DaemonOptions options);

  void OnStartedLeading();
  void OnStoppedLeading();
  // With --edge-shards, once this replica can serve nodes (it leads, or knows where to relay).
  void StartEdgeShards();
  // The leader's work (see the top of this file). Returns early when Stop() began.
  absl::Status StartLeaderWork();
  void StopLeaderWork();
  bool Stopping() const;
  // Stopping, or the elector no longer vouches for our leadership.
  bool ShouldAbandonLeaderWork() const;
  void Fail(absl::Status status);
  Probe Healthy() const;
  Probe Ready() const;

  GmConfig config_;
  DaemonOptions options_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<ControllerMetrics> metrics_;
  std::unique_ptr<KubeApiMetrics> kube_api_metrics_;  // the RestClient's observer
  std::unique_ptr<kube::KubeClient> owned_client_;
  kube::KubeClient* client_ = nullptr;
  std::string lease_namespace_;

  std::unique_ptr<kube::EventRecorder> recorder_;
  std::unique_ptr<ReportRouter> router_;
  std::unique_ptr<EdgeShards> shards_;  // before the relay and the hub, which ask it
  std::unique_ptr<EdgeRelay> relay_;    // before the hub, which uses it
  std::unique_ptr<EdgeNodeWriter> edge_nodes_;  // before the hub, which tells it; null when off
  std::unique_ptr<EdgeHub> hub_;
  std::unique_ptr<EdgeHubDispatcher> dispatcher_;
  std::unique_ptr<EdgeHubServer> hub_server_;
  std::unique_ptr<HealthServer> health_;
  std::unique_ptr<kube::LeaderElector> elector_;
  std::thread leader_thread_;  // without leader election: runs OnStartedLeading

  // The leader's work; created and destroyed under work_mu_ (the start thread and Stop()).
  absl::Mutex work_mu_;
  std::unique_ptr<kube::SharedInformerFactory> informers_ ABSL_GUARDED_BY(work_mu_);
  std::unique_ptr<SecretCache> secrets_ ABSL_GUARDED_BY(work_mu_);
  std::vector<std::unique_ptr<GmController>> controllers_ ABSL_GUARDED_BY(work_mu_);

  mutable absl::Mutex mu_ ABSL_ACQUIRED_AFTER(work_mu_);
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_requested_ ABSL_GUARDED_BY(mu_) = false;
  bool leading_ ABSL_GUARDED_BY(mu_) = false;
  bool ready_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<absl::Status> fatal_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nereid::gm
