#include "bench/soak/soak_cluster.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/bench_setup.h"
#include "bench/edge_simulator/node_certs.h"
#include "common/api/sedna_contract.h"
#include "common/kube/config.h"
#include "common/net/tls.h"
#include "common/status/macros.h"

namespace nereid::bench {

using testing::Subprocess;

std::string SoakCluster::SimNodeName(int n) { return absl::StrFormat("sim-%04d", n); }

absl::StatusOr<std::unique_ptr<SoakCluster>> SoakCluster::Start(SoakClusterOptions options) {
  std::unique_ptr<SoakCluster> cluster(new SoakCluster(std::move(options)));
  RETURN_IF_ERROR(cluster->StartAll());
  return cluster;
}

SoakCluster::~SoakCluster() { Stop().IgnoreError(); }

absl::Status SoakCluster::StartAll() {
  std::vector<std::string> lc_nodes;
  for (int i = 0; i < options_.local_controllers; ++i) {
    lc_nodes.push_back(absl::StrCat("lc-", i));
  }
  std::vector<std::string> gen_certs = {options_.gen_certs, Path("certs")};
  gen_certs.insert(gen_certs.end(), lc_nodes.begin(), lc_nodes.end());
  ASSIGN_OR_RETURN(testing::CommandResult certs,
                   testing::RunCommand(gen_certs, absl::Seconds(120)));
  if (certs.exit_code != 0) return absl::InternalError(absl::StrCat("gen-certs.sh: ", certs.err));
  ASSIGN_OR_RETURN(std::string ca_pem, net::ReadPemFile(Path("certs/ca.crt")));
  ASSIGN_OR_RETURN(std::string ca_key_pem, net::ReadPemFile(Path("certs/ca.key")));
  ASSIGN_OR_RETURN(std::unique_ptr<NodeCertIssuer> issuer,
                   NodeCertIssuer::Create(ca_pem, ca_key_pem));
  std::vector<NodeIdentity> identities;
  for (int n = 0; n < options_.simulated_nodes; ++n) {
    ASSIGN_OR_RETURN(NodeIdentity identity, issuer->Issue(SimNodeName(n)));
    identities.push_back(std::move(identity));
  }

  ASSIGN_OR_RETURN(
      DevApiServer api,
      StartDevApiServer(options_.devapiserver, Path("kubeconfig"),
                        {"--watch-history", std::to_string(options_.api_watch_history),
                         "--event-ttl", options_.api_event_ttl}));
  api_ = std::move(api.process);
  ASSIGN_OR_RETURN(kube::KubeConfig kube_config, kube::LoadKubeConfigFile(Path("kubeconfig")));
  kube::RestClient::Options rest;
  rest.qps = 0;  // The workload paces itself.
  rest.user_agent = "nereid-soak";
  ASSIGN_OR_RETURN(client_, kube::RestClient::Create(kube_config, rest));
  RETURN_IF_ERROR(CreateCrds(*client_, options_.crds, api::resources::JointInferenceServices()));

  Subprocess::Options gm;
  gm.argv = GlobalManagerMtlsArgv(options_.globalmanager, Path("kubeconfig"), Path("certs"));
  gm.argv.insert(gm.argv.end(), {"--leader-elect=false", "--log-level", "warning"});
  gm.capture_stderr = true;  // Written to gm.log by Stop().
  ASSIGN_OR_RETURN(GlobalManager started, StartGlobalManager(std::move(gm)));
  gm_ = std::move(started.process);
  gm_edge_port_ = started.edge_port;
  gm_http_port_ = started.http_port;

  EdgeSimulator::Options sim;
  sim.gm_address = absl::StrCat("127.0.0.1:", gm_edge_port_);
  sim.ca_pem = ca_pem;
  ASSIGN_OR_RETURN(sim_, EdgeSimulator::Create(sim, std::move(identities)));
  sim_->Connect();
  const int64_t nodes = options_.simulated_nodes;
  if (!sim_->WaitFor([&](const SimTally& t) { return t.resyncs_done.load() >= nodes; },
                     absl::Seconds(120))) {
    return absl::DeadlineExceededError(absl::StrCat(
        "only ", sim_->tally().resyncs_done.load(), " of ", nodes, " simulated nodes resynced"));
  }
  for (const std::string& node : lc_nodes) RETURN_IF_ERROR(StartLc(node));
  return absl::OkStatus();
}

absl::Status SoakCluster::StartLc(const std::string& node) {
  SoakLc lc;
  lc.node = node;
  lc.host_root = Path(node + "/root");
  lc.db = Path(node + "/lc.db");
  std::error_code error;
  std::filesystem::create_directories(lc.host_root + "/data", error);
  if (error) return absl::InternalError(absl::StrCat(lc.host_root, ": ", error.message()));
  Subprocess::Options options;
  const std::string certs = Path("certs");
  options.argv = {options_.localcontroller, "--node", node, "--gm",
                  absl::StrCat("127.0.0.1:", gm_edge_port_), "--db", lc.db, "--host-root",
                  lc.host_root, "--listen", "127.0.0.1:0", "--tls-ca", certs + "/ca.crt",
                  "--tls-cert", certs + "/nodes/" + node + ".crt", "--tls-key",
                  certs + "/nodes/" + node + ".key", "--scan-period", options_.lc_scan_period,
                  "--log-level", "warning"};
  options.capture_stderr = true;
  ASSIGN_OR_RETURN(lc.process, Subprocess::Start(std::move(options)));
  ASSIGN_OR_RETURN(std::string line, lc.process->ReadLine(absl::Seconds(30)));
  const std::string url = testing::ListenUrl(line);
  if (url.empty() || std::sscanf(url.c_str(), "http://127.0.0.1:%d", &lc.http_port) != 1) {
    return absl::InternalError(absl::StrCat(node, " printed '", line, "'"));
  }
  const int port = lc.http_port;
  if (!testing::WaitFor(
          [&] {
            absl::StatusOr<std::string> metrics = FetchMetrics(port);
            return metrics.ok() && MetricValue(*metrics, "nereid_lc_cloud_link_synced") == 1;
          },
          absl::Seconds(60), absl::Milliseconds(100))) {
    return absl::DeadlineExceededError(absl::StrCat(node, " did not sync with the GM in 60 s: ",
                                                    lc.process->Stderr()));
  }
  lcs_.push_back(std::move(lc));
  return absl::OkStatus();
}

std::string SoakCluster::Exited() {
  if (api_ && !api_->Running()) return "devapiserver";
  if (gm_ && !gm_->Running()) return "globalmanager";
  for (SoakLc& lc : lcs_) {
    if (!lc.process->Running()) return lc.node;
  }
  return "";
}

absl::Status SoakCluster::Stop() {
  if (stopped_) return absl::OkStatus();
  stopped_ = true;
  std::vector<std::string> failures;
  auto stop = [&](const std::string& name, Subprocess* process) {
    if (process == nullptr) return;
    absl::StatusOr<int> exit = process->Stop(absl::Seconds(30));
    std::ofstream(Path(name + ".log")) << process->Stderr();
    if (!exit.ok() || *exit != 0) {
      failures.push_back(absl::StrCat(
          name, exit.ok() ? absl::StrCat(" exited with ", *exit) : " did not stop"));
    }
  };
  if (sim_) sim_->Stop();
  for (SoakLc& lc : lcs_) stop(lc.node, lc.process.get());
  stop("globalmanager", gm_.get());
  stop("devapiserver", api_.get());
  if (failures.empty()) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(absl::StrJoin(failures, "; "), " (logs in ",
                                          options_.work_dir, ")"));
}

}  // namespace nereid::bench
