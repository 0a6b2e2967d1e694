#pragma once

// The edge cluster the edge integration tests run on loopback (edge_e2e_test,
// lc_crash_test): a devapiserver with the sedna.io CRDs applied (kubectl), the `globalmanager`
// binary on a fixed port (so it can come back on it after a restart), and `localcontroller`
// binaries with the test node certificates (mTLS). Header-only; the tests link Catch2, httplib,
// nereid_test_support, nereid_test_devapiserver and nereid_test_certs.

#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "tests/common/net/test_certs.h"
#include "tests/integration/loopback_helpers.h"
#include "tests/support/devapiserver_process.h"
#include "tests/support/subprocess.h"

namespace nereid::testing {

inline constexpr absl::Duration kEdgePoll = absl::Milliseconds(100);
inline constexpr size_t kEdgeStderrTail = 6000;  // DumpOnFailure

struct EdgeBinaries {
  std::string devapiserver;
  std::string gm;
  std::string lc;
  std::string kubectl;
  std::string source_dir;  // deploy/crds
};

#ifdef NEREID_GM_BIN
// The binaries nereid_integration_test(... PROCESSES) hands this test.
inline EdgeBinaries BuiltEdgeBinaries() {
  return {NEREID_DEVAPISERVER_BIN, NEREID_GM_BIN, NEREID_LC_BIN, NEREID_KUBECTL,
          NEREID_SOURCE_DIR};
}
#endif

inline bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Appends "sample i" lines from..to (one write: the scanner sees all or none of them).
inline void AppendLines(const std::string& path, int from, int to) {
  std::string lines;
  for (int i = from; i <= to; ++i) absl::StrAppend(&lines, "sample ", i, "\n");
  std::ofstream out(path, std::ios::app);
  out.rdbuf()->pubsetbuf(nullptr, 0);
  out.write(lines.data(), static_cast<std::streamsize>(lines.size()));
  out.flush();
  REQUIRE(out.good());
}

// The value of the sample `series` (name with labels, exactly as printed) in a Prometheus text
// page; -1 when absent.
inline double MetricValue(const std::string& page, const std::string& series) {
  for (absl::string_view line : absl::StrSplit(page, '\n')) {
    if (!absl::StartsWith(line, series) || line.size() <= series.size() ||
        line[series.size()] != ' ') {
      continue;
    }
    double value = 0;
    if (absl::SimpleAtod(line.substr(series.size() + 1), &value)) return value;
  }
  return -1;
}

inline std::string DatasetYaml(const std::string& name, const std::string& node,
                               const std::string& url) {
  return absl::StrCat("apiVersion: sedna.io/v1alpha1\nkind: Dataset\nmetadata:\n  name: ", name,
                      "\n  namespace: default\nspec:\n  url: ", url,
                      "\n  format: txt\n  nodeName: ", node, "\n");
}

// A running localcontroller and its REST port.
struct Lc {
  using Json = nlohmann::json;

  Lc() = default;
  Lc(Lc&&) = default;
  Lc& operator=(Lc&&) = default;
  ~Lc() { DumpOnFailure("localcontroller", process.get(), kEdgeStderrTail); }

  std::unique_ptr<Subprocess> process;
  int port = 0;

  Json Get(const std::string& path) const {
    HttpReply reply = HttpGet(port, path);
    if (reply.status != 200) return Json();
    return Json::parse(reply.body, nullptr, false);
  }
  Json Status() const { return Get("/api/v1/status"); }
  bool Synced() const {
    Json s = Status();
    return s.is_object() && s["cloudLink"].value("synced", false);
  }
  // outboxDepth from /api/v1/status (-1 when unavailable).
  int64_t OutboxDepth() const {
    Json s = Status();
    if (!s.is_object() || !s["outboxDepth"].is_number()) return -1;
    return s["outboxDepth"].get<int64_t>();
  }
  // The LC's own count of a dataset it holds (-1 while none).
  int64_t LocalSamples(const std::string& name) const {
    Json d = Get("/api/v1/datasets/default/" + name);
    if (!d.is_object() || !d["status"]["numberOfSamples"].is_number()) return -1;
    return d["status"]["numberOfSamples"].get<int64_t>();
  }
  int64_t LinkCounter(const std::string& field) const {
    Json s = Status();
    if (!s.is_object() || !s["cloudLink"][field].is_number()) return -1;
    return s["cloudLink"][field].get<int64_t>();
  }
};

// A running globalmanager and its ports.
struct GmProcess {
  GmProcess() = default;
  GmProcess(GmProcess&&) = default;
  GmProcess& operator=(GmProcess&& other) {
    DumpOnFailure("globalmanager", process.get(), kEdgeStderrTail);
    process = std::move(other.process);
    port = other.port;
    http_port = other.http_port;
    return *this;
  }
  ~GmProcess() { DumpOnFailure("globalmanager", process.get(), kEdgeStderrTail); }

  std::unique_ptr<Subprocess> process;
  int port = 0;       // edge hub
  int http_port = 0;  // /healthz, /readyz, /metrics

  // Leading, caches synced, hub serving.
  bool Ready() const { return process != nullptr && HttpGet(http_port, "/readyz").status == 200; }
  std::string Metrics() const { return HttpGet(http_port, "/metrics").body; }
  // nereid_gm_reports_total for Dataset reports with `outcome` (accepted, rejected, retry); 0
  // while the series does not exist yet.
  double DatasetReports(const std::string& outcome) const {
    const double v = MetricValue(
        Metrics(), absl::StrCat("nereid_gm_reports_total{kind=\"Dataset\",outcome=\"", outcome,
                                "\"}"));
    return v < 0 ? 0 : v;
  }
};

class EdgeCluster {
 public:
  using Json = nlohmann::json;

  // `gm_config_extra`: more lines for the GM's config file (e.g. edgeKeepalive);
  // `api_extra_args`: more devapiserver flags (e.g. --enable-debug-faults).
  EdgeCluster(EdgeBinaries bins, const std::string& temp_prefix,
              const std::string& gm_config_extra = "",
              const std::vector<std::string>& api_extra_args = {})
      : bins_(std::move(bins)),
        api_(ApiOptions(bins_, temp_prefix, api_extra_args)),
        gm_port_(FreePort()) {
    Kubectl({"apply", "-f", bins_.source_dir + "/deploy/crds/"});
    // Short lease: a restarted GM (same identity, the Lease released at SIGTERM) leads at once.
    gm_config_ = *dir().Write("gm.yaml",
                             "leaderElection: {leaseDuration: 3s, renewDeadline: 2s, "
                             "retryPeriod: 500ms}\n" +
                                 gm_config_extra);
  }


  const TempDir& dir() const { return api_.dir(); }
  std::string kubeconfig() const { return api_.kubeconfig(); }
  int gm_port() const { return gm_port_; }
  int api_port() const { return api_.port(); }
  int gm_http_port() const { return gm_.http_port; }
  const EdgeBinaries& bins() const { return bins_; }

  std::string Kubectl(const std::vector<std::string>& args, std::string_view stdin_data = "") {
    return api_.KubectlOk(args, stdin_data);
  }

  // status.numberOfSamples of Dataset `name` as kubectl shows it (-1 while it has none).
  int64_t Samples(const std::string& name) {
    Json d = Json::parse(Kubectl({"get", "dataset", name, "-o", "json"}), nullptr, false);
    if (!d.is_object() || !d.contains("status")) return -1;
    return d["status"].value("numberOfSamples", int64_t{-1});
  }

  bool WaitSamples(const std::string& name, int64_t want, absl::Duration timeout) {
    int64_t last = -2;
    const bool ok = WaitFor([&] { return (last = Samples(name)) == want; }, timeout, kEdgePoll);
    if (!ok) UNSCOPED_INFO("dataset " << name << ": numberOfSamples " << last << ", want " << want);
    return ok;
  }

  std::string GmMetrics() const { return gm_.Metrics(); }
  double GmDatasetReports(const std::string& outcome) const { return gm_.DatasetReports(outcome); }

  // `extra_args` come last, so they override (e.g. --kubeconfig through a fault proxy).
  void StartGm(const std::vector<std::string>& extra_args = {}) {
    gm_ = LaunchGm("gm-e2e", gm_port_, extra_args);
    // Leading, caches synced, hub serving.
    REQUIRE(WaitFor([&] { return gm_.Ready(); }, absl::Seconds(20), kEdgePoll));
  }

  // A GM replica with identity `id` and its edge hub on `port`, sharing the cluster's Lease and
  // configuration; returns once it listens (a standby is not ready until it leads).
  GmProcess LaunchGm(const std::string& id, int port,
                     const std::vector<std::string>& extra_args = {}) {
    const CertSet& certs = TestCerts();
    Subprocess::Options options;
    options.argv = {bins_.gm,
                    "--kubeconfig",
                    kubeconfig(),
                    "--listen",
                    absl::StrCat("127.0.0.1:", port),
                    "--http-listen",
                    "127.0.0.1:0",
                    "--tls-ca",
                    certs.ca,
                    "--tls-cert",
                    certs.gm_cert,
                    "--tls-key",
                    certs.gm_key,
                    "--lease-namespace",
                    "default",
                    "--id",
                    id,
                    "--config",
                    gm_config_};
    options.argv.insert(options.argv.end(), extra_args.begin(), extra_args.end());
    options.capture_stderr = true;
    auto started = Subprocess::Start(std::move(options));
    REQUIRE(started.ok());
    GmProcess gm;
    gm.process = *std::move(started);
    gm.port = port;
    auto line = gm.process->ReadLine(absl::Seconds(20));
    INFO(line.status().ToString() << "\nGM stderr:\n" << gm.process->Stderr());
    REQUIRE(line.ok());
    // "globalmanager: edge hub on port N, http on port M"
    std::vector<std::string> words = absl::StrSplit(*line, ' ');
    REQUIRE(words.size() == 10);
    REQUIRE(words[5] == absl::StrCat(port, ","));
    REQUIRE(absl::SimpleAtoi(words[9], &gm.http_port));
    return gm;
  }

  void StopGm() {
    auto code = gm_.process->Stop(absl::Seconds(15));
    REQUIRE(code.ok());
    INFO("GM stderr:\n" << gm_.process->Stderr());
    CHECK(*code == 0);
    gm_ = GmProcess();
  }

  std::string GmStderr() const { return gm_.process == nullptr ? "" : gm_.process->Stderr(); }

  // An LC for `node` with the given certificate and key; `state_name` picks its database and host
  // root (default: the node's), so a restart finds the same state; `env` is added to its
  // environment (e.g. NEREID_FAILPOINTS); `extra_args` come last, so they override (e.g. --gm
  // through a fault proxy).
  Lc StartLc(const std::string& node, const std::string& cert, const std::string& key,
             const std::string& state_name = "",
             const std::map<std::string, std::string>& env = {},
             const std::vector<std::string>& extra_args = {}) {
    const std::string state = state_name.empty() ? node : state_name;
    std::filesystem::create_directories(dir().File("root-" + state));
    Subprocess::Options options;
    options.argv = {bins_.lc,
                    "--node",
                    node,
                    "--gm",
                    absl::StrCat("127.0.0.1:", gm_port_),
                    "--db",
                    dir().File(state + ".db"),
                    "--host-root",
                    dir().File("root-" + state),
                    "--listen",
                    "127.0.0.1:0",
                    "--tls-ca",
                    TestCerts().ca,
                    "--tls-cert",
                    cert,
                    "--tls-key",
                    key,
                    "--scan-period",
                    "1s"};
    options.argv.insert(options.argv.end(), extra_args.begin(), extra_args.end());
    options.env = env;
    options.capture_stderr = true;
    auto started = Subprocess::Start(std::move(options));
    REQUIRE(started.ok());
    Lc lc;
    lc.process = *std::move(started);
    auto line = lc.process->ReadLine(absl::Seconds(20));
    INFO(line.status().ToString() << "\nLC stderr:\n" << lc.process->Stderr());
    REQUIRE(line.ok());
    const std::string url = ListenUrl(*line);
    REQUIRE_FALSE(url.empty());
    REQUIRE(absl::SimpleAtoi(url.substr(url.rfind(':') + 1), &lc.port));
    return lc;
  }
  Lc StartNodeLc(const std::string& node, const std::map<std::string, std::string>& env = {}) {
    const CertSet& certs = TestCerts();
    return StartLc(node, certs.NodeCert(node), certs.NodeKey(node), "", env);
  }

 private:
  static DevApiServerProcess::Options ApiOptions(const EdgeBinaries& bins,
                                                 const std::string& temp_prefix,
                                                 const std::vector<std::string>& extra_args) {
    DevApiServerProcess::Options options;
    options.devapiserver = bins.devapiserver;
    options.kubectl = bins.kubectl;
    options.source_dir = bins.source_dir;
    options.temp_prefix = temp_prefix;
    options.extra_args = extra_args;
    return options;
  }

  const EdgeBinaries bins_;
  DevApiServerProcess api_;
  const int gm_port_;
  std::string gm_config_;
  GmProcess gm_;  // the one StartGm starts
};

}  // namespace nereid::testing
