// GM fan-out benchmark: a real `globalmanager` process with mTLS, fed by a real
// `devapiserver`, serving N simulated edge nodes (bench/edge_simulator) from this process.
//
//   edge_fanout_bench --devapiserver BIN --globalmanager BIN --gen-certs scripts/gen-certs.sh
//       --crd deploy/crds [--nodes 1000] [--datasets-per-node 10]
//       [--create-threads 4] [--create-rate 0] [--leader-elect] [--baseline-writes 2000]
//       [--kubectl BIN --kubectl-objects 1000] [--restart] [--timeout 15m] [--dir DIR] [--enforce]
//       [--settle 10s]  (a pause after connect, create and report: time to snapshot the GM)
//       [--ignore-retry-after]  (nodes answered RETRY "Busy" use the LC's own backoff, 5 s
//                                doubling to 5 min, not the GM's estimate: LCs before it existed)
//       [--gm-arg=FLAG]...  (more GM flags, e.g. --gm-arg=--max-held-reports=1024)
//       [--relay]  (a second GM replica, a standby, takes the nodes' connections and relays their
//                   streams to the leader: every phase also prints the standby's memory and CPU)
//       [--shards]  (both replicas run --edge-shards and the nodes dial the leader, as a Service
//                    routing to the ready replica would send them: each node is served by the
//                    replica rendezvous hashing gives it, relayed when that is the standby)
//       [--spread]  (with --relay or --shards: the nodes dial the leader and the standby in turn,
//                    as a Service over both ready replicas would spread them:
//                    --ready-while-relaying)
//       [--churn K]  (after the reports, every Dataset's url changes K times, each change sent to
//                     its node: the long-lived connections' ring buffers wrap, as on a GM that
//                     has run for hours; the phase prints the GM's RSS growth per node)
//       [--shards-join]  (as --shards, but the second replica starts after the connect phase: a
//                         "join" phase measures how the leader hands it its share of the nodes,
//                         at the GM's --edge-moves-per-second)
//       [--edge-nodes on|off]  (the GM's EdgeNode objects, `kubectl get en`; default on, as the
//                               GM's default: after connect and restart, the time until every
//                               EdgeNode shows its node connected and the GM's requests for it;
//                               off: the GM runs with --edge-nodes=false)
//
// Phases, each timed, with the GM's VmHWM/RSS and CPU time read from /proc after each:
//   setup    gen-certs.sh makes the CA and the GM certificate; the N node certificates are issued
//            in process (NodeCertIssuer); devapiserver starts, the CRDs are created (--crd: a
//            file or a directory of *.yaml, as deploy/crds/ — the GM is ready only once the
//            informers of every kind it runs have synced, so it wants them all), the GM
//            starts (--leader-elect=false unless --leader-elect) and reports /readyz 200.
//   connect  the N nodes dial at once (Hello with an empty inventory) until each got ResyncDone.
//   create   N x M Datasets (spec.nodeName = node) are created through the API by
//            --create-threads RestClient threads (no client-side rate limit; --create-rate paces
//            them). Per object: the time the API answered the create → the time the Change
//            reached its node, which ACKs it at once. Checked: every node holds exactly its M.
//   report   every node sends one Dataset StatusReport per dataset (as an LC after counting),
//            at most 64 in flight per node; the GM ACCEPTs a report only after writing it to the
//            API (status subresource). Measured: reports answered per second end to end, the
//            GM's own report-handling time from its /metrics, and — checked — every dataset's
//            status.numberOfSamples in the API.
//   restart  (with --restart) the GM is stopped with every node connected and started again on the
//            same port; every node must resync (gm_restart_storm.h): resync time, resyncs per
//            second, the new GM's API requests meanwhile.
//   baseline the same number of status writes (--baseline-writes) sent straight to devapiserver
//            by this process: what the API server alone absorbs, to tell its limit from the GM's.
//   kubectl  (with --kubectl) `kubectl apply -f` of a multi-document file of --kubectl-objects
//            Datasets for a node that is not connected: the create rate kubectl reaches.
// Exit status 1 when something is wrong (a phase timed out, an object or report went missing, the
// GM did not exit cleanly); with --enforce also when a target is missed (create→ACK p99 ≤ 100 ms,
// GM VmHWM ≤ 300 MB).

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "bench/bench_setup.h"
#include "bench/edge_simulator/edge_simulator.h"
#include "bench/edge_simulator/node_certs.h"
#include "bench/edge_shards_phases.h"
#include "bench/fleet_convergence.h"
#include "bench/edge_simulator/proc_stats.h"
#include "bench/gm_restart_storm.h"
#include "common/api/sedna_contract.h"
#include "common/kube/config.h"
#include "common/kube/object.h"
#include "common/kube/resource.h"
#include "common/kube/rest_client.h"
#include "common/net/tls.h"
#include "common/status/macros.h"
#include "common/time/token_bucket.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "tests/support/subprocess.h"

namespace nereid::bench {
namespace {

using kube::Json;
using testing::Subprocess;

constexpr double kTargetP99Ms = 100;
constexpr double kTargetHwmMb = 300;

struct Flags {
  std::string devapiserver;
  std::string globalmanager;
  std::string gen_certs;
  std::vector<std::string> crds;  // files or directories of *.yaml
  std::string kubectl;
  int nodes = 1000;
  int datasets_per_node = 10;
  int create_threads = 4;
  double create_rate = 0;  // objects/s over all threads; 0 = as fast as the API answers
  bool leader_elect = false;
  bool relay = false;  // the nodes dial a standby replica that relays them to the leader
  bool shards = false;  // both replicas shard the nodes; the nodes dial the leader
  bool shards_join = false;  // the second replica joins after the connect phase
  bool spread = false;  // the nodes dial the leader and the standby in turn
  int churn = 0;  // rounds of changing every Dataset after the reports
  int baseline_writes = 2000;
  int kubectl_objects = 1000;
  bool restart = false;
  bool edge_nodes = true;  // the GM keeps EdgeNode objects (fleet_convergence.h)
  bool ignore_retry_after = false;  // the nodes back off on RETRY as LCs before retry_after did
  std::vector<std::string> gm_args;  // --gm-arg: more flags for the GM
  double settle_seconds = 0;  // pause after connect, create and report (GM memory snapshots)
  double timeout_seconds = 900;
  std::string dir;
  std::string gm_log_level = "info";
  std::string ns = "default";
  bool enforce = false;
};

// Every flag, bound to the fields of `f` (whose values are the defaults --help shows).
config::OptionSet RegisterOptions(Flags& f) {
  config::OptionSet options(
      "edge_fanout_bench",
      "usage: edge_fanout_bench --devapiserver BIN --globalmanager BIN --gen-certs SCRIPT "
      "--crd CRD_FILE_OR_DIR... [flags]",
      "The flags are explained in the header of bench/edge_fanout_bench.cc.\n");
  options.Add("devapiserver", &f.devapiserver, "devapiserver binary (required)");
  options.Add("globalmanager", &f.globalmanager, "globalmanager binary (required)");
  options.Add("gen-certs", &f.gen_certs, "scripts/gen-certs.sh (required)");
  options.AddList("crd", &f.crds, "CRD file or directory (required)");
  options.Add("kubectl", &f.kubectl, "kubectl binary for the kubectl phase (empty: skipped)");
  options.Add("nodes", &f.nodes, "simulated nodes", 1);
  options.Add("datasets-per-node", &f.datasets_per_node, "Datasets per node", 1);
  options.Add("create-threads", &f.create_threads, "RestClient threads creating Datasets", 1);
  options.Add("create-rate", &f.create_rate, "objects/s over all threads, 0 = unpaced", 0);
  options.AddSwitch("leader-elect", &f.leader_elect, true, "the GM runs leader election");
  options.AddSwitch("relay", &f.relay, true, "a standby replica relays the nodes to the leader");
  options.AddSwitch("shards", &f.shards, true, "both replicas shard the nodes");
  options.AddSwitch("shards-join", &f.shards_join, true,
                    "as --shards, the second replica joins after the connect phase");
  options.AddSwitch("spread", &f.spread, true, "the nodes dial the leader and the standby in turn");
  options.Add("churn", &f.churn, "rounds of changing every Dataset after the reports", 0);
  options.Add("baseline-writes", &f.baseline_writes, "status writes of the baseline client", 0);
  options.Add("kubectl-objects", &f.kubectl_objects, "objects kubectl lists", 1);
  options.AddSwitch("restart", &f.restart, true, "restart the GM and measure the reconnect");
  options.AddSwitch("ignore-retry-after", &f.ignore_retry_after, true,
                    "nodes back off on RETRY as LCs did before retry_after");
  options.AddList("gm-arg", &f.gm_args, "a GM flag, e.g. --gm-arg=--max-held-reports=1024");
  options.AddSeconds("settle", &f.settle_seconds, "pause after connect, create and report",
                     absl::ZeroDuration());
  options.AddSeconds("timeout", &f.timeout_seconds, "limit of each phase", absl::ZeroDuration());
  options.Add("dir", &f.dir, "working directory (empty: a temporary one)");
  options.Add("gm-log-level", &f.gm_log_level, "the GM's --log-level");
  options.Add("namespace", &f.ns, "namespace of the Datasets");
  options.AddCustom("edge-nodes", "on|off", "on", "the GM keeps EdgeNode objects (--edge-nodes)",
                    [&f](std::string_view value, std::string*) -> absl::Status {
                      if (value != "on" && value != "off") {
                        return absl::InvalidArgumentError("needs on or off");
                      }
                      f.edge_nodes = value == "on";
                      return absl::OkStatus();
                    });
  options.AddSwitch("enforce", &f.enforce, true, "exit 1 when a target is missed");
  return options;
}

// The checks after reading: required flags, and the switches that imply others.
absl::Status Finish(Flags& flags) {
  if (flags.devapiserver.empty() || flags.globalmanager.empty() || flags.gen_certs.empty() ||
      flags.crds.empty()) {
    return absl::InvalidArgumentError(
        "--devapiserver, --globalmanager, --gen-certs and --crd are required");
  }
  flags.shards = flags.shards || flags.shards_join;
  flags.relay = flags.relay || flags.shards;
  flags.leader_elect = flags.leader_elect || flags.relay;  // a standby needs a Lease to follow
  if (flags.spread && (!flags.relay || flags.shards_join)) {
    return absl::InvalidArgumentError(
        "--spread needs both replicas from the start: --relay or --shards, not --shards-join");
  }
  return absl::OkStatus();
}

std::string NodeName(int n) { return absl::StrFormat("edge-%04d", n); }
std::string DatasetName(int n, int d) { return absl::StrFormat("edge-%04d-ds-%02d", n, d); }
// What node n reports for its dataset d (distinct per object, so a mixed-up status shows).
int64_t Samples(int n, int d) { return 1000LL * n + d + 1; }

double Ms(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }
double Seconds(absl::Duration d) { return absl::ToDoubleSeconds(d); }
double Mb(long kb) { return static_cast<double>(kb) / 1024.0; }

double SelfCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

struct PhaseStats {
  std::string name;
  double seconds = 0;
  ProcStats gm;         // after the phase
  double gm_cpu = 0;    // GM CPU seconds spent in the phase
  ProcStats standby;    // with --relay: the relaying replica after the phase
  double standby_cpu = 0;
  double api_cpu = 0;   // devapiserver CPU seconds in the phase
  double self_cpu = 0;  // this process (simulator + API clients)
};

class FanoutBench {
 public:
  explicit FanoutBench(Flags flags) : flags_(std::move(flags)) {}

  absl::Status Run();
  // Prints the result table; returns whether the targets were met.
  bool Report(std::ostream& out) const;

 private:
  absl::Status Setup();
  absl::Status ConnectNodes();
  absl::Status StartStandby();
  // --shards-join: the second replica starts; the phase ends when the leader has handed it its
  // share of the nodes and they have resynced there.
  absl::Status JoinStandby();
  absl::Status CreateDatasets();
  absl::Status ReportCounts();
  // --churn: every Dataset changes K times; the phase ends when every node holds the last.
  absl::Status ChurnDatasets();
  void Settle(const std::string& after) const;
  absl::Status RestartGm();
  // --edge-nodes on: waits until every EdgeNode shows its node connected since `since`.
  absl::StatusOr<FleetConvergence> AwaitFleet(absl::Time since,
                                              const ApiRequestCounts& requests_before);
  absl::Status BaselineWrites();
  absl::Status KubectlApply();
  absl::Status StopAll();

  absl::StatusOr<std::string> Metrics() const;
  ShardReplicas Shards() const { return {gm_http_port_, standby_http_port_}; }
  void BeginPhase(const std::string& name);
  void EndPhase();
  std::string Dir(const std::string& name) const { return work_dir_ + "/" + name; }

  const Flags flags_;
  std::optional<testing::TempDir> temp_dir_;
  std::string work_dir_;
  std::unique_ptr<Subprocess> api_;
  std::unique_ptr<Subprocess> gm_;
  Subprocess::Options gm_options_;  // how gm_ was started (for --restart)
  std::unique_ptr<Subprocess> standby_;  // with --relay: the replica the nodes dial
  int api_port_ = 0;
  int gm_http_port_ = 0;
  int gm_edge_port_ = 0;
  int standby_http_port_ = 0;
  int standby_edge_port_ = 0;
  std::string join_;  // --shards-join: how the handover went
  std::string create_to_ack_by_way_;  // --relay/--shards: create->ACK split by how nodes reach
  std::string shard_split_;  // --shards: the nodes' split after connecting
  std::unique_ptr<kube::RestClient> client_;
  std::unique_ptr<EdgeSimulator> sim_;

  // Phase bookkeeping.
  std::vector<PhaseStats> phases_;
  absl::Time phase_start_;
  ProcStats gm_before_, api_before_, standby_before_;
  double self_before_ = 0;

  // Results.
  double gen_certs_seconds_ = 0;
  double issue_seconds_ = 0;
  int total_ = 0;
  double create_seconds_ = 0;  // first create sent → last create answered
  int create_errors_ = 0;
  Summary create_call_ms_;    // how long one create took
  Summary create_to_ack_ms_;  // create answered → Change at the node
  Summary send_to_ack_ms_;    // create sent → Change at the node
  int acked_before_answer_ = 0;
  double last_ack_after_last_create_ms_ = 0;
  int reports_ = 0;
  double reports_seconds_ = 0;  // first report sent → last answered
  Summary report_ms_;
  int64_t report_retries_ = 0;
  int64_t report_retries_estimated_ = 0;  // RETRY answers with the GM's retry_after
  int64_t resend_rounds_ = 0;
  double gm_report_mean_ms_ = 0;  // GM's own report handling (queue wait included)
  // The GM's enqueue->ACK and its parts (nereid_edgehub_dispatch_*): mean and p99 in ms.
  struct DispatchTime {
    double mean_ms = 0;
    double p99_ms = 0;
  };
  DispatchTime gm_dispatch_, gm_queued_, gm_writing_, gm_at_node_;
  // The Dataset controller's in the create phase: queue wait and one reconcile.
  DispatchTime gm_queue_wait_, gm_reconcile_;
  int baseline_done_ = 0;
  double baseline_seconds_ = 0;
  std::optional<RestartStorm> restart_;
  std::optional<FleetConvergence> fleet_connect_, fleet_restart_;
  int kubectl_done_ = 0;
  double kubectl_seconds_ = 0;
  ProcStats gm_final_;
  int gm_exit_ = -1;
  std::string load_before_, load_after_;
};

void FanoutBench::BeginPhase(const std::string& name) {
  PhaseStats phase;
  phase.name = name;
  phases_.push_back(std::move(phase));
  phase_start_ = absl::Now();
  gm_before_ = gm_ ? ReadProcStats(gm_->pid()) : ProcStats();
  standby_before_ = standby_ ? ReadProcStats(standby_->pid()) : ProcStats();
  api_before_ = api_ ? ReadProcStats(api_->pid()) : ProcStats();
  self_before_ = SelfCpuSeconds();
  std::cerr << "edge_fanout_bench: " << name << " ..." << std::endl;
}

void FanoutBench::EndPhase() {
  PhaseStats& phase = phases_.back();
  phase.seconds = Seconds(absl::Now() - phase_start_);
  if (gm_) {
    phase.gm = ReadProcStats(gm_->pid());
    phase.gm_cpu = phase.gm.cpu_seconds - std::max(0.0, gm_before_.cpu_seconds);
  }
  if (api_)
    phase.api_cpu = ReadProcStats(api_->pid()).cpu_seconds - std::max(0.0, api_before_.cpu_seconds);
  phase.self_cpu = SelfCpuSeconds() - self_before_;
  if (standby_) {
    phase.standby = ReadProcStats(standby_->pid());
    phase.standby_cpu = phase.standby.cpu_seconds - std::max(0.0, standby_before_.cpu_seconds);
    std::cerr << absl::StrFormat(
                     "edge_fanout_bench: %s: relaying standby VmHWM %.1f MiB, RSS %.1f MiB, CPU "
                     "%.2f s",
                     phase.name, Mb(phase.standby.vm_hwm_kb), Mb(phase.standby.vm_rss_kb),
                     phase.standby_cpu)
              << std::endl;
  }
  std::cerr << absl::StrFormat(
                   "edge_fanout_bench: %s done in %.2f s (GM VmHWM %.1f MiB, RSS %.1f MiB, "
                   "CPU %.2f s; devapiserver CPU %.2f s; simulator+clients CPU %.2f s)",
                   phase.name, phase.seconds, Mb(phase.gm.vm_hwm_kb), Mb(phase.gm.vm_rss_kb),
                   phase.gm_cpu, phase.api_cpu, phase.self_cpu)
            << std::endl;
}

absl::StatusOr<std::string> FanoutBench::Metrics() const { return FetchMetrics(gm_http_port_); }

absl::Status FanoutBench::StartStandby() {
  ASSIGN_OR_RETURN(GlobalManager follower,
                   StartGlobalManager(gm_options_, GmReadiness::kStandby));
  standby_ = std::move(follower.process);
  standby_http_port_ = follower.http_port;
  standby_edge_port_ = follower.edge_port;
  return absl::OkStatus();
}

absl::Status FanoutBench::JoinStandby() {
  BeginPhase("join");
  const int64_t resyncs_before = sim_->tally().resyncs_done.load();
  const absl::Time start = absl::Now();
  RETURN_IF_ERROR(StartStandby());
  RETURN_IF_ERROR(AwaitShardReplicas(Shards(), 2));
  const double seen_after = Seconds(absl::Now() - start);
  ASSIGN_OR_RETURN(std::string moves, AwaitJoin(Shards(), *sim_, resyncs_before,
                                                absl::Seconds(flags_.timeout_seconds)));
  EndPhase();
  join_ = absl::StrFormat("join: the standby was seen %.1f s after it started; %s\n", seen_after,
                          moves);
  std::cerr << "edge_fanout_bench: " << join_;
  return absl::OkStatus();
}

absl::Status FanoutBench::Run() {
  load_before_ = LoadAverage();
  RETURN_IF_ERROR(Setup());
  RETURN_IF_ERROR(ConnectNodes());
  Settle("connect");
  if (flags_.shards_join) {
    RETURN_IF_ERROR(JoinStandby());
    shard_split_ = ShardSplit(Shards(), *sim_);
  }
  RETURN_IF_ERROR(CreateDatasets());
  Settle("create");
  RETURN_IF_ERROR(ReportCounts());
  Settle("report");
  if (flags_.churn > 0) RETURN_IF_ERROR(ChurnDatasets());
  if (flags_.restart) RETURN_IF_ERROR(RestartGm());
  if (flags_.baseline_writes > 0) RETURN_IF_ERROR(BaselineWrites());
  if (!flags_.kubectl.empty()) RETURN_IF_ERROR(KubectlApply());
  return StopAll();
}

// Outside every phase, so their timings do not include it.
void FanoutBench::Settle(const std::string& after) const {
  if (flags_.settle_seconds <= 0) return;
  std::cerr << "edge_fanout_bench: settling " << flags_.settle_seconds << " s after " << after
            << std::endl;
  absl::SleepFor(absl::Seconds(flags_.settle_seconds));
}

absl::Status FanoutBench::Setup() {
  BeginPhase("setup");
  if (flags_.dir.empty()) {
    ASSIGN_OR_RETURN(testing::TempDir dir, testing::TempDir::Create("edge-fanout-"));
    temp_dir_.emplace(std::move(dir));
    work_dir_ = temp_dir_->path();
  } else {
    work_dir_ = flags_.dir;
    std::error_code ignored;
    std::filesystem::create_directories(work_dir_, ignored);
  }

  // CA + GM certificate by the project's script; node certificates in process.
  const absl::Time certs_start = absl::Now();
  ASSIGN_OR_RETURN(testing::CommandResult certs,
                   testing::RunCommand({flags_.gen_certs, Dir("certs")}, absl::Seconds(60)));
  if (certs.exit_code != 0) {
    return absl::InternalError(absl::StrCat("gen-certs.sh failed: ", certs.err));
  }
  gen_certs_seconds_ = Seconds(absl::Now() - certs_start);
  ASSIGN_OR_RETURN(std::string ca_pem, net::ReadPemFile(Dir("certs/ca.crt")));
  ASSIGN_OR_RETURN(std::string ca_key_pem, net::ReadPemFile(Dir("certs/ca.key")));
  ASSIGN_OR_RETURN(std::unique_ptr<NodeCertIssuer> issuer,
                   NodeCertIssuer::Create(ca_pem, ca_key_pem));
  const absl::Time issue_start = absl::Now();
  std::vector<NodeIdentity> identities;
  identities.reserve(flags_.nodes);
  for (int n = 0; n < flags_.nodes; ++n) {
    ASSIGN_OR_RETURN(NodeIdentity identity, issuer->Issue(NodeName(n)));
    identities.push_back(std::move(identity));
  }
  issue_seconds_ = Seconds(absl::Now() - issue_start);

  // devapiserver (in memory) and the Dataset CRD.
  ASSIGN_OR_RETURN(DevApiServer api, StartDevApiServer(flags_.devapiserver, Dir("kubeconfig")));
  api_ = std::move(api.process);
  api_port_ = api.port;
  ASSIGN_OR_RETURN(kube::KubeConfig kube_config, kube::LoadKubeConfigFile(Dir("kubeconfig")));
  kube::RestClient::Options rest;
  rest.qps = 0;  // The benchmark measures the API server and the GM, not a client-side limit.
  rest.max_idle_connections = static_cast<std::size_t>(flags_.create_threads) + 4;
  rest.user_agent = "edge-fanout-bench";
  ASSIGN_OR_RETURN(client_, kube::RestClient::Create(kube_config, rest));
  RETURN_IF_ERROR(CreateCrds(*client_, flags_.crds, api::resources::Datasets()));

  // The GM: mTLS on an ephemeral port, metrics on another.
  Subprocess::Options gm;
  gm.argv = GlobalManagerMtlsArgv(flags_.globalmanager, Dir("kubeconfig"), Dir("certs"));
  gm.argv.insert(gm.argv.end(),
                 {absl::StrCat("--leader-elect=", flags_.leader_elect ? "true" : "false"),
                  "--log-level", flags_.gm_log_level});
  if (flags_.relay) gm.argv.insert(gm.argv.end(), {"--edge-advertise-address", "127.0.0.1"});
  if (flags_.shards) gm.argv.push_back("--edge-shards");
  if (!flags_.edge_nodes) gm.argv.push_back("--edge-nodes=false");
  gm.argv.insert(gm.argv.end(), flags_.gm_args.begin(), flags_.gm_args.end());
  gm.capture_stderr = true;  // Kept in memory and written to gm.log at the end.
  gm_options_ = gm;
  ASSIGN_OR_RETURN(GlobalManager started, StartGlobalManager(std::move(gm)));
  gm_ = std::move(started.process);
  gm_edge_port_ = started.edge_port;
  gm_http_port_ = started.http_port;
  int node_port = gm_edge_port_;
  if (flags_.relay && !flags_.shards_join) {
    RETURN_IF_ERROR(StartStandby());
    if (!flags_.shards) node_port = standby_edge_port_;
  }
  if (flags_.shards && !flags_.shards_join) RETURN_IF_ERROR(AwaitShardReplicas(Shards(), 2));

  EdgeSimulator::Options sim;
  sim.gm_address = absl::StrCat("127.0.0.1:", node_port);
  if (flags_.spread) {
    sim.gm_address = absl::StrCat("127.0.0.1:", gm_edge_port_);
    sim.second_address = absl::StrCat("127.0.0.1:", standby_edge_port_);
  }
  sim.ca_pem = ca_pem;
  sim.honor_retry_after = !flags_.ignore_retry_after;
  ASSIGN_OR_RETURN(sim_, EdgeSimulator::Create(sim, std::move(identities)));
  EndPhase();
  return absl::OkStatus();
}

absl::Status FanoutBench::ConnectNodes() {
  ApiRequestCounts requests_before;
  if (flags_.edge_nodes) {
    ASSIGN_OR_RETURN(requests_before, FetchApiRequestCounts(api_port_, kGmUserAgent));
  }
  const absl::Time dialed = absl::Now();
  BeginPhase("connect");
  sim_->Connect();
  const int64_t nodes = flags_.nodes;
  if (!sim_->WaitFor([&](const SimTally& t) { return t.resyncs_done.load() >= nodes; },
                     absl::Seconds(flags_.timeout_seconds))) {
    return absl::DeadlineExceededError(absl::StrCat("only ", sim_->tally().resyncs_done.load(),
                                                    " of ", nodes, " nodes finished their resync"));
  }
  EndPhase();
  if (flags_.shards && !flags_.shards_join) shard_split_ = ShardSplit(Shards(), *sim_);
  if (flags_.edge_nodes) {
    ASSIGN_OR_RETURN(fleet_connect_, AwaitFleet(dialed, requests_before));
  }
  return absl::OkStatus();
}

absl::StatusOr<FleetConvergence> FanoutBench::AwaitFleet(absl::Time since,
                                                         const ApiRequestCounts& requests_before) {
  absl::StatusOr<FleetConvergence> fleet =
      AwaitFleetConnected(*client_, api_port_, flags_.nodes, since, requests_before,
                          absl::Seconds(flags_.timeout_seconds));
  if (fleet.ok()) {
    std::cerr << absl::StrFormat("edge_fanout_bench: fleet: every EdgeNode connected %.2f s "
                                 "after the nodes dialed; GM: %s\n",
                                 fleet->seconds, DescribeRequests(fleet->gm_requests));
  }
  return fleet;
}

absl::Status FanoutBench::CreateDatasets() {
  BeginPhase("create");
  const int nodes = flags_.nodes;
  const int per_node = flags_.datasets_per_node;
  total_ = nodes * per_node;
  // Object j is dataset j / nodes of node j % nodes: consecutive creates go to different nodes,
  // as a fleet-wide rollout would.
  std::vector<absl::Time> sent(total_), answered(total_);
  std::vector<std::string> errors(total_);
  std::unique_ptr<TokenBucket> pace;
  if (flags_.create_rate > 0) {
    pace = std::make_unique<TokenBucket>(flags_.create_rate, 1, Clock::Real());
  }
  std::atomic<int> next{0};
  auto worker = [&] {
    for (int j = next.fetch_add(1); j < total_; j = next.fetch_add(1)) {
      if (pace) pace->Acquire();
      const int n = j % nodes;
      const int d = j / nodes;
      Json object = {{"apiVersion", "sedna.io/v1alpha1"},
                     {"kind", "Dataset"},
                     {"metadata", {{"name", DatasetName(n, d)}, {"namespace", flags_.ns}}},
                     {"spec",
                      {{"url", absl::StrFormat("/data/%s/train-%02d.txt", NodeName(n), d)},
                       {"format", "txt"},
                       {"nodeName", NodeName(n)}}}};
      sent[j] = absl::Now();
      absl::StatusOr<Json> created = client_->Create(api::resources::Datasets(), flags_.ns, object);
      answered[j] = absl::Now();
      if (!created.ok()) errors[j] = created.status().ToString();
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < flags_.create_threads; ++t) threads.emplace_back(worker);
  for (std::thread& thread : threads) thread.join();
  absl::Time first_sent = absl::InfiniteFuture(), last_answered = absl::InfinitePast();
  std::vector<double> call_ms;
  for (int j = 0; j < total_; ++j) {
    first_sent = std::min(first_sent, sent[j]);
    last_answered = std::max(last_answered, answered[j]);
    call_ms.push_back(Ms(answered[j] - sent[j]));
    if (!errors[j].empty()) {
      if (create_errors_++ < 5) std::cerr << "create " << j << ": " << errors[j] << "\n";
    }
  }
  create_seconds_ = Seconds(last_answered - first_sent);
  create_call_ms_ = Summarize(call_ms);
  if (create_errors_ > 0) {
    return absl::InternalError(absl::StrCat(create_errors_, " creates failed"));
  }

  const int64_t expected = total_;
  if (!sim_->WaitFor([&](const SimTally& t) { return t.upserts.load() >= expected; },
                     absl::Seconds(flags_.timeout_seconds))) {
    return absl::DeadlineExceededError(absl::StrCat("only ", sim_->tally().upserts.load(), " of ",
                                                    expected, " datasets reached their node"));
  }

  // Match every arrival with its create.
  absl::flat_hash_map<std::string, int> index;
  index.reserve(total_);
  for (int j = 0; j < total_; ++j) {
    index[absl::StrCat("Dataset/", flags_.ns, "/", DatasetName(j % nodes, j / nodes))] = j;
  }
  std::vector<double> create_to_ack, send_to_ack;
  std::vector<double> to_ack_by_way[2];  // [redirected]: the node's stream went to an owner
  const std::vector<bool> redirected = sim_->Redirected();
  std::vector<int> seen(total_, 0);
  absl::Time last_arrival = absl::InfinitePast();
  int misplaced = 0;
  for (const Arrival& arrival : sim_->Arrivals()) {
    auto it = index.find(arrival.key);
    if (arrival.removed || it == index.end()) continue;
    const int j = it->second;
    if (arrival.node != NodeName(j % nodes)) ++misplaced;
    if (seen[j]++ > 0) continue;  // The first arrival counts.
    create_to_ack.push_back(Ms(arrival.at - answered[j]));
    to_ack_by_way[redirected[j % nodes] ? 1 : 0].push_back(create_to_ack.back());
    send_to_ack.push_back(Ms(arrival.at - sent[j]));
    if (arrival.at < answered[j]) ++acked_before_answer_;
    last_arrival = std::max(last_arrival, arrival.at);
  }
  create_to_ack_ms_ = Summarize(create_to_ack);
  if (flags_.relay) {
    const Summary at_dialled = Summarize(to_ack_by_way[0]);
    const Summary sent_on = Summarize(to_ack_by_way[1]);
    create_to_ack_by_way_ = absl::StrFormat(
        "create answered -> ACK by the node's way in: at the address it dials p50 %.1f, p99 %.1f "
        "ms (%zu); sent on to an owner p50 %.1f, p99 %.1f ms (%zu)\n",
        at_dialled.p50, at_dialled.p99, to_ack_by_way[0].size(), sent_on.p50, sent_on.p99,
        to_ack_by_way[1].size());
  }
  send_to_ack_ms_ = Summarize(send_to_ack);
  last_ack_after_last_create_ms_ = Ms(last_arrival - last_answered);
  int missing = 0;
  for (int j = 0; j < total_; ++j) missing += seen[j] == 0;
  int wrong_holdings = 0;
  for (std::size_t held : sim_->Held())
    wrong_holdings += held != static_cast<std::size_t>(per_node);
  ASSIGN_OR_RETURN(std::string metrics, Metrics());
  auto dispatch_time = [&](const std::string& metric, const std::vector<std::string>& labels) {
    DispatchTime time;
    const double count = MetricValue(metrics, metric + "_count", labels);
    if (count > 0) time.mean_ms = 1000 * MetricValue(metrics, metric + "_sum", labels) / count;
    time.p99_ms = 1000 * HistogramQuantile(metrics, metric, 0.99, labels);
    return time;
  };
  gm_dispatch_ = dispatch_time("nereid_edgehub_dispatch_latency_seconds", {});
  const std::string phases = "nereid_edgehub_dispatch_phase_seconds";
  gm_queued_ = dispatch_time(phases, {"phase=\"queued\""});
  gm_writing_ = dispatch_time(phases, {"phase=\"writing\""});
  gm_at_node_ = dispatch_time(phases, {"phase=\"node\""});
  gm_queue_wait_ =
      dispatch_time("nereid_gm_workqueue_queue_duration_seconds", {"controller=\"dataset\""});
  gm_reconcile_ =
      dispatch_time("nereid_gm_reconcile_duration_seconds", {"controller=\"dataset\""});
  EndPhase();
  // Now, not only in the summary: the report phase of a large run takes minutes.
  std::cerr << absl::StrFormat(
      "edge_fanout_bench: create answered -> ACK p50 %.1f ms, p99 %.1f ms; Dataset queue wait "
      "%.1f / ~%.0f ms, hub enqueue -> ACK %.1f / ~%.0f ms (mean / p99); %.0f Dataset reconciles "
      "(more than the creates means a resync ran)\n",
      create_to_ack_ms_.p50, create_to_ack_ms_.p99, gm_queue_wait_.mean_ms, gm_queue_wait_.p99_ms,
      gm_dispatch_.mean_ms, gm_dispatch_.p99_ms,
      MetricValue(metrics, "nereid_gm_reconcile_duration_seconds_count",
                  {"controller=\"dataset\""}));
  if (missing > 0 || misplaced > 0 || wrong_holdings > 0) {
    return absl::InternalError(absl::StrCat(missing, " datasets never arrived, ", misplaced,
                                            " arrived at the wrong node, ", wrong_holdings,
                                            " nodes do not hold exactly ", per_node));
  }
  return absl::OkStatus();
}

absl::Status FanoutBench::ChurnDatasets() {
  BeginPhase("churn");
  const int64_t rss_before = ReadProcStats(gm_->pid()).vm_rss_kb;
  const int64_t upserts_before = sim_->tally().upserts.load();
  std::atomic<int> next{0};
  std::atomic<int> failed{0};
  auto worker = [&](int round) {
    for (int j = next.fetch_add(1); j < total_; j = next.fetch_add(1)) {
      const int n = j % flags_.nodes;
      const int d = j / flags_.nodes;
      const Json patch = {{"spec",
                           {{"url", absl::StrFormat("/data/%s/train-%02d-r%d.txt", NodeName(n),
                                                    d, round)}}}};
      if (!client_->Patch(api::resources::Datasets(), flags_.ns, DatasetName(n, d),
                          kube::PatchType::kMerge, patch)
               .ok()) {
        failed.fetch_add(1);
      }
    }
  };
  for (int round = 1; round <= flags_.churn; ++round) {
    next = 0;
    std::vector<std::thread> threads;
    for (int t = 0; t < flags_.create_threads; ++t) threads.emplace_back(worker, round);
    for (std::thread& thread : threads) thread.join();
    if (failed.load() > 0) {
      return absl::InternalError(absl::StrCat(failed.load(), " patches failed"));
    }
    // A node may skip a version the GM coalesced away: wait for the round's count, at most.
    const int64_t expected = upserts_before + int64_t{total_} * round;
    if (!sim_->WaitFor([&](const SimTally& t) { return t.upserts.load() >= expected; },
                       absl::Seconds(flags_.timeout_seconds))) {
      return absl::DeadlineExceededError(absl::StrCat(
          "churn round ", round, ": ", sim_->tally().upserts.load() - upserts_before, " of ",
          int64_t{total_} * round, " changes reached their node"));
    }
  }
  EndPhase();
  const int64_t rss_after = phases_.back().gm.vm_rss_kb;
  std::cerr << absl::StrFormat(
                   "edge_fanout_bench: churn: %d rounds of %d changes; GM RSS %.1f -> %.1f MiB "
                   "(%+.1f KiB per node)",
                   flags_.churn, total_, Mb(rss_before), Mb(rss_after),
                   static_cast<double>(rss_after - rss_before) / flags_.nodes)
            << std::endl;
  return absl::OkStatus();
}

absl::Status FanoutBench::ReportCounts() {
  BeginPhase("report");
  ASSIGN_OR_RETURN(std::string before, Metrics());
  reports_ = static_cast<int>(
      sim_->QueueDatasetReports([&](const std::string& node, const std::string& key) {
        // key = Dataset/<ns>/edge-NNNN-ds-DD
        const std::size_t at = key.rfind("-ds-");
        int n = 0, d = 0;
        if (at == std::string::npos || !absl::SimpleAtoi(node.substr(5), &n) ||
            !absl::SimpleAtoi(key.substr(at + 4), &d)) {
          return int64_t{-1};
        }
        return Samples(n, d);
      }));
  const int64_t expected = reports_;
  if (!sim_->WaitFor(
          [&](const SimTally& t) {
            return t.reports_accepted.load() + t.reports_rejected.load() >= expected;
          },
          absl::Seconds(flags_.timeout_seconds))) {
    return absl::DeadlineExceededError(absl::StrCat(
        "only ", sim_->tally().reports_accepted.load() + sim_->tally().reports_rejected.load(),
        " of ", expected, " reports were answered"));
  }
  absl::Time first = absl::InfiniteFuture(), last = absl::InfinitePast();
  std::vector<double> latencies;
  int rejected = 0;
  for (const ReportRecord& record : sim_->Reports()) {
    if (record.answered == absl::InfinitePast()) continue;
    first = std::min(first, record.first_sent);
    last = std::max(last, record.answered);
    latencies.push_back(Ms(record.answered - record.first_sent));
    if (record.result != edge::v1::REPORT_ACCEPTED) {
      if (rejected++ < 5) std::cerr << "report " << record.key << ": " << record.reason << "\n";
    }
  }
  reports_seconds_ = Seconds(last - first);
  report_ms_ = Summarize(latencies);
  report_retries_ = sim_->tally().reports_retry.load();
  report_retries_estimated_ = sim_->tally().reports_retry_estimated.load();
  resend_rounds_ = sim_->tally().resend_rounds.load();
  ASSIGN_OR_RETURN(std::string after, Metrics());
  const std::vector<std::string> dataset = {"kind=\"Dataset\""};
  const double count = MetricValue(after, "nereid_gm_report_duration_seconds_count", dataset) -
                       MetricValue(before, "nereid_gm_report_duration_seconds_count", dataset);
  if (count > 0) {
    gm_report_mean_ms_ = 1000 *
                         (MetricValue(after, "nereid_gm_report_duration_seconds_sum", dataset) -
                          MetricValue(before, "nereid_gm_report_duration_seconds_sum", dataset)) /
                         count;
  }

  // Every count must be in the API.
  kube::ListOptions list;
  list.limit = 500;
  ASSIGN_OR_RETURN(kube::ObjectList datasets,
                   kube::ListAll(*client_, api::resources::Datasets(), flags_.ns, list));
  int right = 0;
  for (const Json& object : datasets.items) {
    const std::string name = kube::Name(object);
    int n = 0, d = 0;
    if (std::sscanf(name.c_str(), "edge-%d-ds-%d", &n, &d) != 2) continue;
    const Json* samples = kube::FindPath(object, "status.numberOfSamples");
    if (samples != nullptr && samples->is_number_integer() &&
        samples->get<int64_t>() == Samples(n, d)) {
      ++right;
    }
  }
  EndPhase();
  if (rejected > 0 || right != total_) {
    return absl::InternalError(absl::StrCat(rejected, " reports rejected; ", right, " of ", total_,
                                            " datasets show the reported numberOfSamples"));
  }
  return absl::OkStatus();
}

absl::Status FanoutBench::RestartGm() {
  const absl::Time stopping = absl::Now();
  BeginPhase("restart");
  {
    std::ofstream log(Dir("gm-before-restart.log"));
    log << gm_->Stderr();
  }
  ASSIGN_OR_RETURN(RestartStorm storm,
                   RestartGmAndAwaitResync(gm_, gm_options_, gm_edge_port_, api_port_, *sim_,
                                           flags_.nodes, absl::Seconds(flags_.timeout_seconds)));
  gm_http_port_ = storm.http_port;
  restart_ = std::move(storm);
  gm_before_ = ProcStats();  // The phase's GM CPU is the new GM's.
  EndPhase();
  // The storm reset devapiserver's counts as the new GM started: all of them are the new GM's.
  if (flags_.edge_nodes) {
    ASSIGN_OR_RETURN(fleet_restart_, AwaitFleet(stopping, {}));
  }
  if (restart_->gm_exit != 0) {
    return absl::InternalError(absl::StrCat("the GM exited with ", restart_->gm_exit,
                                            " when stopped for the restart"));
  }
  return absl::OkStatus();
}

absl::Status FanoutBench::BaselineWrites() {
  BeginPhase("baseline");
  const int writes = std::min(flags_.baseline_writes, total_);
  const int nodes = flags_.nodes;
  std::atomic<int> next{0}, failed{0};
  auto worker = [&] {
    for (int j = next.fetch_add(1); j < writes; j = next.fetch_add(1)) {
      // A status-only merge patch: one write per dataset, like the GM's PUT of the status.
      Json patch = {{"status",
                     {{"numberOfSamples", Samples(j % nodes, j / nodes)},
                      {"updateTime", kube::FormatTimestamp(absl::Now())}}}};
      absl::StatusOr<Json> result =
          client_->Patch(api::resources::Datasets(), flags_.ns, DatasetName(j % nodes, j / nodes),
                         kube::PatchType::kMerge, patch, "status");
      if (!result.ok()) failed.fetch_add(1);
    }
  };
  const absl::Time start = absl::Now();
  std::vector<std::thread> threads;
  for (int t = 0; t < flags_.create_threads; ++t) threads.emplace_back(worker);
  for (std::thread& thread : threads) thread.join();
  baseline_seconds_ = Seconds(absl::Now() - start);
  baseline_done_ = writes - failed.load();
  EndPhase();
  if (failed.load() > 0)
    return absl::InternalError(absl::StrCat(failed.load(), " status patches failed"));
  return absl::OkStatus();
}

absl::Status FanoutBench::KubectlApply() {
  BeginPhase("kubectl");
  std::string yaml = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kubectl-probe\n";
  for (int i = 0; i < flags_.kubectl_objects; ++i) {
    absl::StrAppend(&yaml,
                    "---\napiVersion: sedna.io/v1alpha1\nkind: Dataset\nmetadata:\n  name: probe-",
                    i, "\n  namespace: kubectl-probe\nspec:\n  url: /data/probe-", i,
                    ".txt\n  format: txt\n  nodeName: not-connected\n");
  }
  {
    std::ofstream out(Dir("kubectl-probe.yaml"));
    out << yaml;
  }
  const absl::Time start = absl::Now();
  ASSIGN_OR_RETURN(testing::CommandResult applied,
                   testing::RunCommand({flags_.kubectl, "--kubeconfig", Dir("kubeconfig"), "apply",
                                        "-f", Dir("kubectl-probe.yaml")},
                                       absl::Seconds(flags_.timeout_seconds)));
  kubectl_seconds_ = Seconds(absl::Now() - start);
  if (applied.exit_code != 0) {
    return absl::InternalError(absl::StrCat("kubectl apply failed: ", applied.err));
  }
  kubectl_done_ = flags_.kubectl_objects;
  EndPhase();
  return absl::OkStatus();
}

absl::Status FanoutBench::StopAll() {
  load_after_ = LoadAverage();
  gm_final_ = ReadProcStats(gm_->pid());
  const std::vector<std::string> errors = sim_->StreamErrors();
  sim_->Stop();
  if (standby_) {
    ASSIGN_OR_RETURN(int standby_exit, standby_->Stop(absl::Seconds(30)));
    std::ofstream log(Dir("standby.log"));
    log << standby_->Stderr();
    if (standby_exit != 0) std::cerr << "the standby GM exited with " << standby_exit << "\n";
  }
  ASSIGN_OR_RETURN(gm_exit_, gm_->Stop(absl::Seconds(30)));
  {
    std::ofstream log(Dir("gm.log"));
    log << gm_->Stderr();
  }
  if (!api_->Stop(absl::Seconds(10)).ok()) std::cerr << "devapiserver did not stop\n";
  if (!errors.empty()) {
    std::cerr << errors.size() << " node streams ended during the run, e.g. " << errors.front()
              << "\n";
  }
  if (gm_exit_ != 0) {
    return absl::InternalError(
        absl::StrCat("the GM exited with ", gm_exit_, "; log in ", Dir("gm.log")));
  }
  return absl::OkStatus();
}

bool FanoutBench::Report(std::ostream& out) const {
  const double hwm_mb = Mb(gm_final_.vm_hwm_kb);
  const bool latency_ok = create_to_ack_ms_.p99 <= kTargetP99Ms;
  const bool memory_ok = hwm_mb <= kTargetHwmMb;
  double gm_cpu = 0;
  for (const PhaseStats& phase : phases_) gm_cpu += phase.gm_cpu;
  out << absl::StrFormat(
      "GM fan-out: %d nodes x %d datasets = %d (mTLS, leader election %s, %d create threads%s)\n",
      flags_.nodes, flags_.datasets_per_node, total_, flags_.leader_elect ? "on" : "off",
      flags_.create_threads,
      flags_.create_rate > 0 ? absl::StrFormat(", paced at %.0f/s", flags_.create_rate) : "");
  out << "load average (1 min): " << load_before_ << " at the start, " << load_after_
      << " at the end\n";
  out << absl::StrFormat(
      "certificates: gen-certs.sh (CA + GM) %.2f s; %d node certificates in process %.3f s (%.2f "
      "ms each)\n",
      gen_certs_seconds_, flags_.nodes, issue_seconds_, 1000 * issue_seconds_ / flags_.nodes);
  out << "phase       seconds   GM VmHWM MiB  GM RSS MiB  GM CPU s  API CPU s  sim+client CPU s\n";
  for (const PhaseStats& phase : phases_) {
    out << absl::StrFormat("%-10s %8.2f %14.1f %11.1f %9.2f %10.2f %17.2f\n", phase.name,
                           phase.seconds, Mb(phase.gm.vm_hwm_kb), Mb(phase.gm.vm_rss_kb),
                           phase.gm_cpu, phase.api_cpu, phase.self_cpu);
  }
  if (flags_.relay) {
    out << "relaying standby (the nodes' connections; GM above = the leader):\n"
           "phase      VmHWM MiB  RSS MiB  CPU s\n";
    for (const PhaseStats& phase : phases_) {
      out << absl::StrFormat("%-10s %9.1f %8.1f %6.2f\n", phase.name,
                             Mb(phase.standby.vm_hwm_kb), Mb(phase.standby.vm_rss_kb),
                             phase.standby_cpu);
    }
  }
  out << join_ << shard_split_ << create_to_ack_by_way_;
  out << absl::StrFormat(
      "create: %d Datasets in %.2f s = %.0f/s (one create call p50 %.1f ms, p99 %.1f ms)\n", total_,
      create_seconds_, total_ / std::max(create_seconds_, 1e-9), create_call_ms_.p50,
      create_call_ms_.p99);
  out << absl::StrFormat(
      "create answered -> ACK at node: p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms, mean "
      "%.1f ms (%d arrived before the create call returned)\n",
      create_to_ack_ms_.p50, create_to_ack_ms_.p90, create_to_ack_ms_.p99, create_to_ack_ms_.max,
      create_to_ack_ms_.mean, acked_before_answer_);
  out << absl::StrFormat(
      "create sent -> ACK at node:     p50 %.1f ms, p99 %.1f ms; last ACK %.1f ms after the last "
      "create\n",
      send_to_ack_ms_.p50, send_to_ack_ms_.p99, last_ack_after_last_create_ms_);
  out << absl::StrFormat(
      "GM hub enqueue -> ACK read: mean %.1f ms, p99 ~%.0f ms; of it queued in the GM %.1f / ~%.0f, "
      "gRPC write %.1f / ~%.0f, write done -> ACK read %.1f / ~%.0f (mean / p99 from buckets); "
      "so create answered -> hub enqueue ~%.1f ms mean, of it the Dataset controller's queue "
      "%.1f / ~%.0f and reconcile %.1f / ~%.0f\n",
      gm_dispatch_.mean_ms, gm_dispatch_.p99_ms, gm_queued_.mean_ms, gm_queued_.p99_ms,
      gm_writing_.mean_ms, gm_writing_.p99_ms, gm_at_node_.mean_ms, gm_at_node_.p99_ms,
      create_to_ack_ms_.mean - gm_dispatch_.mean_ms, gm_queue_wait_.mean_ms,
      gm_queue_wait_.p99_ms, gm_reconcile_.mean_ms, gm_reconcile_.p99_ms);
  out << absl::StrFormat(
      "reports: %d answered in %.2f s = %.1f reports/s end to end (sent -> ACCEPTED p50 %.0f ms, "
      "p99 %.0f ms, max %.0f ms; %lld RETRY answers, %lld with the GM's estimate%s, %lld resend "
      "rounds); GM report handling mean %.1f ms\n",
      reports_, reports_seconds_, reports_ / std::max(reports_seconds_, 1e-9), report_ms_.p50,
      report_ms_.p99, report_ms_.max, static_cast<long long>(report_retries_),
      static_cast<long long>(report_retries_estimated_),
      flags_.ignore_retry_after ? " (ignored)" : "", static_cast<long long>(resend_rounds_),
      gm_report_mean_ms_);
  if (baseline_done_ > 0) {
    out << absl::StrFormat(
        "baseline: %d status merge-patches straight to devapiserver in %.2f s = %.0f/s (%d "
        "threads)\n",
        baseline_done_, baseline_seconds_, baseline_done_ / std::max(baseline_seconds_, 1e-9),
        flags_.create_threads);
  }
  if (fleet_connect_) {
    out << absl::StrFormat("fleet: after connect, every EdgeNode connected in %.2f s; GM: %s\n",
                           fleet_connect_->seconds, DescribeRequests(fleet_connect_->gm_requests));
  }
  if (fleet_restart_) {
    out << absl::StrFormat(
        "fleet: after restart, every EdgeNode connected again %.2f s after the old GM was "
        "stopped; new GM from its start: %s\n",
        fleet_restart_->seconds, DescribeRequests(fleet_restart_->gm_requests));
  }
  if (restart_) {
    int64_t requests = 0;
    std::string by_kind;
    for (const auto& [key, count] : restart_->gm_requests) {
      requests += count;
      absl::StrAppend(&by_kind, by_kind.empty() ? "" : ", ", key, " ", count);
    }
    out << absl::StrFormat(
        "restart: old GM stopped in %.2f s (exit %d); new GM ready in %.2f s; all %d nodes "
        "resynced %.2f s after ready\n",
        restart_->stop_seconds, restart_->gm_exit, restart_->ready_seconds, flags_.nodes,
        restart_->resync_seconds);
    std::string curve;
    for (int64_t n : restart_->per_second) absl::StrAppend(&curve, curve.empty() ? "" : " ", n);
    out << "restart: resyncs per second after ready: " << curve << "\n";
    out << absl::StrFormat(
        "restart: the nodes opened %d streams, %d established; the new GM accepted %.0f "
        "connections and closed %.0f unhandshaken (%.0f hung up, %.0f waited too long, %.0f "
        "crowded out)\n",
        restart_->streams_opened, restart_->streams_established, restart_->connections_accepted,
        restart_->refused_peer_gone + restart_->refused_waited + restart_->refused_crowded,
        restart_->refused_peer_gone, restart_->refused_waited, restart_->refused_crowded);
    out << "restart: the new GM's API requests until the last resync: " << requests << " ("
        << by_kind << ")\n";
  }
  if (kubectl_done_ > 0) {
    out << absl::StrFormat("kubectl apply: %d Datasets in %.2f s = %.0f/s\n", kubectl_done_,
                           kubectl_seconds_, kubectl_done_ / std::max(kubectl_seconds_, 1e-9));
  }
  // Ratios against the baselines measured in this same run (the machine is shared, so absolute
  // figures move with its load; these move much less).
  const double reports_per_s = reports_ / std::max(reports_seconds_, 1e-9);
  if (baseline_done_ > 0) {
    const double baseline_per_s = baseline_done_ / std::max(baseline_seconds_, 1e-9);
    out << absl::StrFormat("ratio: GM reports/s end to end / direct status writes/s = %.3f\n",
                           reports_per_s / baseline_per_s);
  }
  if (create_call_ms_.p50 > 0 && create_call_ms_.p99 > 0) {
    out << absl::StrFormat(
        "ratio: create->ACK / one create call (the API write itself): p50 %.2f, p99 %.2f\n",
        create_to_ack_ms_.p50 / create_call_ms_.p50, create_to_ack_ms_.p99 / create_call_ms_.p99);
  }
  out << absl::StrFormat(
      "GM at the end: VmHWM %.1f MiB, RSS %.1f MiB, anon %.1f MiB, %d threads, CPU %.2f s in the "
      "phases (%.2f s since start); exit %d\n",
      hwm_mb, Mb(gm_final_.vm_rss_kb), Mb(gm_final_.rss_anon_kb), gm_final_.threads, gm_cpu,
      gm_final_.cpu_seconds, gm_exit_);
  out << absl::StrFormat(
      "targets: create->ACK p99 %.1f ms <= %.0f ms: %s; GM VmHWM %.1f MiB <= %.0f MB: %s\n",
      create_to_ack_ms_.p99, kTargetP99Ms, latency_ok ? "ok" : "MISSED", hwm_mb, kTargetHwmMb,
      memory_ok ? "ok" : "MISSED");
  out << absl::StrFormat("row: | %d | %d | %.0f | %.0f | %.0f | %.1f | %.0f | %.1f | %.1f |\n",
                         flags_.nodes, total_, create_to_ack_ms_.p50, create_to_ack_ms_.p99,
                         total_ / std::max(create_seconds_, 1e-9),
                         reports_ / std::max(reports_seconds_, 1e-9),
                         baseline_done_ / std::max(baseline_seconds_, 1e-9), hwm_mb, gm_cpu);
  return latency_ok && memory_ok;
}

}  // namespace
}  // namespace nereid::bench

int main(int argc, char** argv) {
  // The simulator holds a few mutexes per node; Debian's Abseil (built without NDEBUG) would run
  // its deadlock check over all of them on every lock, which made the simulator, not the GM, the
  // bottleneck of a 10,000-node reconnect (bench/RESULTS.md), as it was in the GM.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  nereid::bench::Flags flags;
  nereid::config::OptionSet options = nereid::bench::RegisterOptions(flags);
  if (std::optional<int> exit_code = nereid::bench::ReadFlags(
          options, argc, argv, [&] { return nereid::bench::Finish(flags); })) {
    return *exit_code;
  }
  const bool enforce = flags.enforce;
  nereid::bench::FanoutBench bench(std::move(flags));
  const absl::Status run = bench.Run();
  const bool targets_met = bench.Report(std::cout);
  if (!run.ok()) {
    std::cerr << "edge_fanout_bench: FAILED: " << run << "\n";
    return 1;
  }
  return enforce && !targets_met ? 1 : 0;
}
