#pragma once

// The processes of the soak (bench/soak/soak.cc), started and stopped together:
//   certificates  scripts/gen-certs.sh makes the CA, the GM's certificate and one per real LC;
//                 the simulated nodes' certificates are issued in process (NodeCertIssuer);
//   devapiserver  in memory on 127.0.0.1:0, every CRD of deploy/crds created, its watch history
//                 (kept for resuming watches; it grows until full) cut to `api_watch_history`
//                 events so that it fills in the first seconds of the churn, not over the run,
//                 and its Events expiring after `api_event_ttl` (kube-apiserver's --event-ttl is
//                 1 h) so that the Events the churn records level off within the run;
//   globalmanager mTLS edge hub and /metrics on 127.0.0.1:0, leader election off;
//   simulator     N simulated nodes (sim-NNNN) connected and resynced, in this process;
//   LCs           real `localcontroller` processes (lc-0, lc-1, ...), each with its own database
//                 and host root under the work directory, connected and synced.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bench/edge_simulator/edge_simulator.h"
#include "common/kube/rest_client.h"
#include "tests/support/subprocess.h"

namespace nereid::bench {

struct SoakClusterOptions {
  std::string devapiserver;
  std::string globalmanager;
  std::string localcontroller;
  std::string gen_certs;
  std::vector<std::string> crds;
  std::string work_dir;
  int simulated_nodes = 50;
  int local_controllers = 2;
  std::string lc_scan_period = "5s";
  int api_watch_history = 1000;
  std::string api_event_ttl = "10m";
};

struct SoakLc {
  std::string node;
  std::unique_ptr<testing::Subprocess> process;
  int http_port = 0;
  std::string db;         // its SQLite file (-wal beside it)
  std::string host_root;  // dataset URLs resolve under it
};

class SoakCluster {
 public:
  static absl::StatusOr<std::unique_ptr<SoakCluster>> Start(SoakClusterOptions options);
  ~SoakCluster();  // Stop()
  SoakCluster(const SoakCluster&) = delete;
  SoakCluster& operator=(const SoakCluster&) = delete;

  kube::RestClient& client() { return *client_; }
  EdgeSimulator& simulator() { return *sim_; }
  testing::Subprocess& gm() { return *gm_; }
  testing::Subprocess& api() { return *api_; }
  int gm_http_port() const { return gm_http_port_; }
  std::vector<SoakLc>& lcs() { return lcs_; }
  static std::string SimNodeName(int n);

  // "" when every process still runs, else which one exited.
  std::string Exited();
  // Stops the simulator, the LCs, the GM and devapiserver (in that order) and writes their logs
  // to the work directory; an error names each process that did not exit with 0.
  absl::Status Stop();

 private:
  explicit SoakCluster(SoakClusterOptions options) : options_(std::move(options)) {}
  absl::Status StartAll();
  absl::Status StartLc(const std::string& node);
  std::string Path(const std::string& name) const { return options_.work_dir + "/" + name; }

  const SoakClusterOptions options_;
  std::unique_ptr<testing::Subprocess> api_;
  std::unique_ptr<testing::Subprocess> gm_;
  int gm_edge_port_ = 0;
  int gm_http_port_ = 0;
  std::unique_ptr<kube::RestClient> client_;
  std::unique_ptr<EdgeSimulator> sim_;
  std::vector<SoakLc> lcs_;
  bool stopped_ = false;
};

}  // namespace nereid::bench
