// LocalController memory benchmark: the resident memory (VmHWM, the peak RSS the kernel records)
// of the real `localcontroller` binary
//   1. idle, GM away: started on an empty database, the GM unreachable (the cloud link keeps
//      retrying);
//   2. idle, GM connected: an empty database, connected to an in-process GM edge hub that has
//      nothing for the node (the steady state of a node without datasets);
//   3. N datasets, GM away: N Dataset objects already in its database (as a previous sync left
//      them), every one counted and its report queued in the outbox;
//   4. N datasets through a GM: an empty database, an in-process GM edge hub sends the N datasets,
//      the LC counts them, reports them and the GM acknowledges every report.
// The link is mutual TLS as in production (certificates from scripts/gen-certs.sh); --insecure
// runs plaintext gRPC instead, for comparison.
//
//   lc_memory_bench --localcontroller PATH (--gen-certs SCRIPT | --insecure) [--datasets N]
//                   [--dir DIR] [--settle 5s] [--enforce]
//
// Targets (the LC's memory budget on small edge devices): idle <= 20 MB, 1,000 datasets tracked
// <= 40 MB. Exit status 1 when a count is wrong or an LC fails; with --enforce also when a target
// is missed.

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "bench/resident_by_mapping.h"
#include "common/config/option_set.h"
#include "globalmanager/edgehub/edge_hub.h"
#include "globalmanager/edgehub/server.h"
#include "httplib.h"
#include "localcontroller/cloudlink/lc_db_adapter.h"
#include "localcontroller/db/lc_database.h"
#include "nlohmann/json.hpp"

extern char** environ;

namespace {

namespace v1 = nereid::edge::v1;
using Json = nlohmann::json;

constexpr char kNode[] = "bench-node";
constexpr char kConnectedIdle[] = "idle (empty DB, GM connected)";

struct Options {
  std::string localcontroller;
  std::string floor_client;  // grpc_floor_client; empty: no baseline rows
  std::string gen_certs;  // scripts/gen-certs.sh; empty with --insecure
  bool insecure = false;
  std::string certs;  // where gen-certs.sh wrote the certificates
  int datasets = 1000;
  std::string dir;
  double settle_seconds = 5;
  bool enforce = false;
};

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool WaitUntil(const std::function<bool()>& pred, double timeout_seconds) {
  const double deadline = Now() + timeout_seconds;
  while (!pred()) {
    if (Now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

// The memory figures of a process, in KiB.
struct Memory {
  long hwm = 0;
  long rss = 0;
  long rss_anon = 0;
  long rss_file = 0;
  long pss = 0;
  int threads = 0;
};

long FieldKb(const std::string& text, const std::string& field) {
  const size_t at = text.find("\n" + field + ":");
  if (at == std::string::npos) return -1;
  return std::strtol(text.c_str() + at + field.size() + 2, nullptr, 10);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return "\n" + s.str();
}

Memory ReadMemory(pid_t pid) {
  const std::string status = ReadFile("/proc/" + std::to_string(pid) + "/status");
  const std::string rollup = ReadFile("/proc/" + std::to_string(pid) + "/smaps_rollup");
  Memory m;
  m.hwm = FieldKb(status, "VmHWM");
  m.rss = FieldKb(status, "VmRSS");
  m.rss_anon = FieldKb(status, "RssAnon");
  m.rss_file = FieldKb(status, "RssFile");
  m.threads = static_cast<int>(FieldKb(status, "Threads"));
  m.pss = FieldKb(rollup, "Pss");
  return m;
}

// The link flags both the LC and the baseline client take.
std::vector<std::string> LinkArgs(const Options& options) {
  if (options.insecure) return {"--insecure"};
  const std::string node = options.certs + "/nodes/" + kNode;
  return {"--tls-ca", options.certs + "/ca.crt", "--tls-cert", node + ".crt", "--tls-key",
          node + ".key"};
}

// A localcontroller process; stdout is read for the "listening on URL" line, stderr goes to a log.
class Lc {
 public:
  static std::unique_ptr<Lc> Start(const Options& options, const std::string& db,
                                   const std::string& host_root, const std::string& gm,
                                   const std::string& log) {
    int out[2];
    if (pipe(out) != 0) return nullptr;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<std::string> args = {options.localcontroller, "--node", kNode, "--gm", gm, "--db",
                                     db, "--host-root", host_root, "--listen", "127.0.0.1:0"};
    for (std::string& arg : LinkArgs(options)) args.push_back(std::move(arg));
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    auto lc = std::unique_ptr<Lc>(new Lc);
    const int rc = posix_spawn(&lc->pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    if (rc != 0) {
      close(out[0]);
      std::cerr << "cannot start " << options.localcontroller << ": " << std::strerror(rc) << "\n";
      return nullptr;
    }
    lc->out_ = fdopen(out[0], "r");
    char line[512];
    if (lc->out_ == nullptr || fgets(line, sizeof line, lc->out_) == nullptr) {
      std::cerr << "localcontroller exited before listening; see " << log << "\n";
      return nullptr;
    }
    std::string text(line);
    const std::string prefix = "listening on http://";
    if (text.rfind(prefix, 0) != 0) {
      std::cerr << "unexpected first line: " << text;
      return nullptr;
    }
    text = text.substr(prefix.size());
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    const size_t colon = text.rfind(':');
    lc->client_ = std::make_unique<httplib::Client>(text.substr(0, colon),
                                                    std::stoi(text.substr(colon + 1)));
    lc->client_->set_read_timeout(30, 0);
    return lc;
  }

  ~Lc() {
    if (pid_ > 0) Stop();
    if (out_ != nullptr) fclose(out_);
  }

  std::optional<Json> Get(const std::string& path) {
    httplib::Result result = client_->Get(path.c_str());
    if (!result || result->status != 200) return std::nullopt;
    Json j = Json::parse(result->body, nullptr, false);
    if (j.is_discarded()) return std::nullopt;
    return j;
  }
  int64_t OutboxDepth() {
    std::optional<Json> status = Get("/api/v1/status");
    return status.has_value() ? status->value("outboxDepth", int64_t{-1}) : -1;
  }
  // SIGTERM; returns the exit code.
  int Stop() {
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  pid_t pid() const { return pid_; }

 private:
  Lc() = default;
  pid_t pid_ = -1;
  FILE* out_ = nullptr;
  std::unique_ptr<httplib::Client> client_;
};

v1::Resource Dataset(int i, const std::string& url) {
  v1::Resource r;
  r.mutable_ref()->set_kind("Dataset");
  r.mutable_ref()->set_namespace_("bench");
  r.mutable_ref()->set_name("ds-" + std::to_string(i));
  r.mutable_ref()->set_uid("uid-" + std::to_string(i));
  r.set_version("1");
  r.mutable_dataset()->set_url(url);
  r.mutable_dataset()->set_format("txt");
  r.mutable_dataset()->set_node_name(kNode);
  return r;
}

int ExpectedCount(int i) { return i % 50 + 1; }

// Writes the dataset files: data/ds-<i>.txt with ExpectedCount(i) lines each.
void WriteDatasets(const std::string& root, int n) {
  std::filesystem::create_directories(root + "/data");
  for (int i = 0; i < n; ++i) {
    std::ofstream out(root + "/data/ds-" + std::to_string(i) + ".txt");
    for (int line = 0; line < ExpectedCount(i); ++line) out << "images/" << line << ".jpg 1\n";
  }
}

// Checks every dataset's count on the operator API; returns the number of wrong ones.
int CheckCounts(Lc& lc, int n) {
  std::optional<Json> list = lc.Get("/api/v1/datasets");
  if (!list.has_value() || (*list)["items"].size() != static_cast<size_t>(n)) {
    std::cerr << "operator API does not list " << n << " datasets\n";
    return n;
  }
  int wrong = 0;
  for (const Json& item : (*list)["items"]) {
    const int i = std::stoi(item["name"].get<std::string>().substr(3));
    if (item["status"]["numberOfSamples"] != ExpectedCount(i)) ++wrong;
  }
  return wrong;
}

// An address where nothing listens: a port the kernel handed out and that was closed again.
std::string ClosedAddress() {
  httplib::Server probe;
  const int port = probe.bind_to_any_port("127.0.0.1");
  return "127.0.0.1:" + std::to_string(port);
}

class CountingHandler final : public nereid::gm::ReportHandler {
 public:
  void HandleReport(std::string_view, std::shared_ptr<const v1::StatusReport> report,
                    nereid::gm::ReportCompletion done) override {
    {
      absl::MutexLock lock(&mu_);
      if (report->has_dataset()) counts_[report->ref().name()] = report->dataset().number_of_samples();
    }
    done(nereid::gm::ReportOutcome::Accepted());
  }
  std::map<std::string, int64_t> counts() {
    absl::MutexLock lock(&mu_);
    return counts_;
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, int64_t> counts_ ABSL_GUARDED_BY(mu_);
};

struct Row {
  std::string scenario;
  Memory memory;
  double seconds = 0;  // from start until ready (idle) / everything counted (and acked)
  double target_mb = 0;
  bool ok = true;  // counts right, process fine
  std::vector<nereid::bench::MappingResidency> mappings;  // where the resident memory is
};

void PrintMemory(const std::string& label, const Memory& m) {
  std::printf("  %-34s VmHWM %6.1f MiB  VmRSS %6.1f  RssAnon %5.1f  RssFile %5.1f  Pss %5.1f  "
              "threads %d\n",
              label.c_str(), m.hwm / 1024.0, m.rss / 1024.0, m.rss_anon / 1024.0,
              m.rss_file / 1024.0, m.pss / 1024.0, m.threads);
}

// After the settle time: the LC's memory into `row`, then SIGTERM (a non-zero exit fails the row).
void SettleMeasureAndStop(const Options& options, Lc& lc, double target_mb, Row* row) {
  std::this_thread::sleep_for(std::chrono::duration<double>(options.settle_seconds));
  row->memory = ReadMemory(lc.pid());
  row->mappings = nereid::bench::ResidentByMapping(lc.pid());
  row->target_mb = target_mb;
  row->ok = lc.Stop() == 0 && row->ok;
}

std::optional<Row> RunIdle(const Options& options, const std::string& dir) {
  std::filesystem::create_directories(dir + "/idle/root");
  auto lc = Lc::Start(options, dir + "/idle/lc.db", dir + "/idle/root", ClosedAddress(),
                      dir + "/idle/lc.log");
  if (!lc) return std::nullopt;
  const double start = Now();
  Row row;
  row.scenario = "idle (empty DB, GM away)";
  row.ok = WaitUntil([&] { return lc->Get("/readyz").has_value(); }, 30);
  row.seconds = Now() - start;  // until ready
  SettleMeasureAndStop(options, *lc, 20, &row);
  return row;
}

std::optional<Row> RunPrepopulated(const Options& options, const std::string& dir) {
  const std::string base = dir + "/db";
  WriteDatasets(base + "/root", options.datasets);
  {
    nereid::lc::db::LcDatabase::Options db_options;
    db_options.path = base + "/lc.db";
    db_options.node_name = kNode;
    auto db = nereid::lc::db::LcDatabase::Open(db_options);
    if (!db.ok()) {
      std::cerr << db.status() << "\n";
      return std::nullopt;
    }
    nereid::lc::LcDbDesiredStateStore store(db->get());
    for (int i = 0; i < options.datasets; ++i) {
      if (absl::Status s = store.Upsert(Dataset(i, "/data/ds-" + std::to_string(i) + ".txt"));
          !s.ok()) {
        std::cerr << s << "\n";
        return std::nullopt;
      }
    }
  }
  const double start = Now();
  auto lc = Lc::Start(options, base + "/lc.db", base + "/root", ClosedAddress(), base + "/lc.log");
  if (!lc) return std::nullopt;
  Row row;
  row.scenario = std::to_string(options.datasets) + " datasets from the DB, GM away";
  row.ok = WaitUntil([&] { return lc->OutboxDepth() == options.datasets; }, 300);
  row.seconds = Now() - start;
  const int wrong = CheckCounts(*lc, options.datasets);
  if (wrong > 0) std::cerr << wrong << " wrong counts\n";
  row.ok = row.ok && wrong == 0;
  SettleMeasureAndStop(options, *lc, 40, &row);
  return row;
}

// An in-process GM edge hub serving the node over the bench's link (mTLS or plaintext), holding
// `datasets` Dataset objects for it and accepting every report.
class BenchGm {
 public:
  static std::unique_ptr<BenchGm> Start(const Options& options, int datasets) {
    auto gm = std::unique_ptr<BenchGm>(new BenchGm(options));
    for (int i = 0; i < datasets; ++i) {
      if (absl::Status s = gm->hub_.Upsert(kNode, Dataset(i, "/data/ds-" + std::to_string(i) + ".txt"));
          !s.ok()) {
        std::cerr << s << "\n";
        return nullptr;
      }
    }
    gm->hub_.MarkSynced();
    nereid::gm::EdgeHubServerOptions server_options;
    server_options.listen = "127.0.0.1:0";
    if (options.insecure) {
      server_options.tls.insecure = true;
    } else {
      server_options.tls.ca_file = options.certs + "/ca.crt";
      server_options.tls.cert_file = options.certs + "/globalmanager.crt";
      server_options.tls.key_file = options.certs + "/globalmanager.key";
    }
    auto server = nereid::gm::EdgeHubServer::Start(&gm->hub_, server_options);
    if (!server.ok()) {
      std::cerr << server.status() << "\n";
      return nullptr;
    }
    gm->server_ = *std::move(server);
    return gm;
  }
  ~BenchGm() {
    hub_.Shutdown();
    server_->Stop(absl::Seconds(1));
  }

  std::string address() const { return "127.0.0.1:" + std::to_string(server_->port()); }
  std::map<std::string, int64_t> counts() { return handler_.counts(); }
  bool NodeConnected() const {
    for (const auto& node : hub_.Nodes()) {
      if (node.node == kNode && node.connected) return true;
    }
    return false;
  }

 private:
  static nereid::gm::EdgeHub::Options HubOptions(const Options& options, CountingHandler* handler) {
    nereid::gm::EdgeHub::Options hub_options;
    hub_options.allow_unauthenticated = options.insecure;
    hub_options.report_handler = handler;
    return hub_options;
  }
  explicit BenchGm(const Options& options) : hub_(HubOptions(options, &handler_)) {}

  CountingHandler handler_;
  nereid::gm::EdgeHub hub_;
  std::unique_ptr<nereid::gm::EdgeHubServer> server_;
};

std::optional<Row> RunConnectedIdle(const Options& options, const std::string& dir) {
  std::filesystem::create_directories(dir + "/connected/root");
  auto gm = BenchGm::Start(options, 0);
  if (!gm) return std::nullopt;
  const double start = Now();
  auto lc = Lc::Start(options, dir + "/connected/lc.db", dir + "/connected/root", gm->address(),
                      dir + "/connected/lc.log");
  if (!lc) return std::nullopt;
  Row row;
  row.scenario = kConnectedIdle;
  row.ok = WaitUntil(
      [&] {
        std::optional<Json> status = lc->Get("/api/v1/status");
        return status.has_value() && (*status)["cloudLink"].value("synced", false);
      },
      30);
  row.seconds = Now() - start;  // until synced
  SettleMeasureAndStop(options, *lc, 20, &row);
  return row;
}

std::optional<Row> RunThroughGm(const Options& options, const std::string& dir) {
  const std::string base = dir + "/gm";
  WriteDatasets(base + "/root", options.datasets);
  auto gm = BenchGm::Start(options, options.datasets);
  if (!gm) return std::nullopt;
  const double start = Now();
  auto lc = Lc::Start(options, base + "/lc.db", base + "/root", gm->address(), base + "/lc.log");
  if (!lc) return std::nullopt;
  Row row;
  row.scenario = std::to_string(options.datasets) + " datasets via the GM, acked";
  row.ok = WaitUntil(
      [&] {
        return gm->counts().size() == static_cast<size_t>(options.datasets) &&
               lc->OutboxDepth() == 0;
      },
      300);
  row.seconds = Now() - start;
  int wrong = 0;
  for (const auto& [name, count] : gm->counts()) {
    if (count != ExpectedCount(std::stoi(name.substr(3)))) ++wrong;
  }
  wrong += CheckCounts(*lc, options.datasets);
  if (wrong > 0) std::cerr << wrong << " wrong counts\n";
  row.ok = row.ok && wrong == 0;
  SettleMeasureAndStop(options, *lc, 40, &row);
  return row;
}

// The baseline: grpc_floor_client (the same shared libraries and the same Sync stream, nothing
// else) against a closed port, or connected to a GM. What the LC needs above it is its own cost.
std::optional<Row> RunFloor(const Options& options, const std::string& dir, bool connected) {
  const std::string base = dir + (connected ? "/floor-connected" : "/floor-away");
  std::filesystem::create_directories(base);
  std::unique_ptr<BenchGm> gm;
  if (connected && !(gm = BenchGm::Start(options, 0))) return std::nullopt;
  std::vector<std::string> args = {options.floor_client, "--node", kNode, "--gm",
                                   connected ? gm->address() : ClosedAddress()};
  for (std::string& arg : LinkArgs(options)) args.push_back(std::move(arg));
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string log = base + "/client.log";
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    std::cerr << "cannot start " << options.floor_client << ": " << std::strerror(rc) << "\n";
    return std::nullopt;
  }
  Row row;
  row.scenario = connected ? "baseline: gRPC client, GM connected" : "baseline: gRPC client, GM away";
  const double start = Now();
  row.ok = !connected || WaitUntil([&] { return gm->NodeConnected(); }, 30);
  row.seconds = Now() - start;
  std::this_thread::sleep_for(std::chrono::duration<double>(options.settle_seconds));
  row.memory = ReadMemory(pid);
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  row.ok = row.ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return row;
}

std::optional<Row> RunFloorAway(const Options& options, const std::string& dir) {
  return RunFloor(options, dir, false);
}
std::optional<Row> RunFloorConnected(const Options& options, const std::string& dir) {
  return RunFloor(options, dir, true);
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  nereid::config::OptionSet flags(
      "lc_memory_bench",
      "usage: lc_memory_bench --localcontroller PATH (--gen-certs SCRIPT | --insecure) [flags]",
      "");
  flags.Add("localcontroller", &options.localcontroller, "the localcontroller binary (required)");
  flags.Add("baseline-client", &options.floor_client,
            "grpc_floor_client (empty: no baseline rows)");
  flags.Add("gen-certs", &options.gen_certs, "scripts/gen-certs.sh (or --insecure)");
  flags.AddSwitch("insecure", &options.insecure, true, "plaintext link, no certificates");
  flags.Add("datasets", &options.datasets, "datasets of the loaded run", 1);
  flags.Add("dir", &options.dir, "working directory (empty: under $TMPDIR or /tmp)");
  flags.AddSeconds("settle", &options.settle_seconds, "pause before each memory reading",
                   absl::ZeroDuration());
  flags.AddSwitch("enforce", &options.enforce, true, "exit 1 when a target is missed");
  absl::StatusOr<nereid::config::OptionSet::Loaded> loaded =
      flags.Load(std::vector<std::string>(argv + 1, argv + argc), nereid::config::NoEnv());
  if (!loaded.ok()) {
    std::cerr << "lc_memory_bench: " << loaded.status().message() << "\n" << flags.Help();
    return 2;
  }
  if (loaded->help || loaded->version) {
    std::cout << flags.Help();
    return 0;
  }
  if (options.localcontroller.empty() || options.gen_certs.empty() == !options.insecure) {
    std::cerr << "--localcontroller PATH and one of --gen-certs SCRIPT or --insecure are required\n";
    return 2;
  }
  std::string base = options.dir;
  if (base.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    base = tmp != nullptr && *tmp ? tmp : "/tmp";
  }
  std::string pattern = base + "/lc-memory-bench-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    std::cerr << "mkdtemp in " << base << ": " << std::strerror(errno) << "\n";
    return 1;
  }
  const std::string dir = pattern;
  if (!options.insecure) {
    options.certs = dir + "/certs";
    const std::string command = options.gen_certs + " " + options.certs + " " + kNode + " >" +
                                dir + "/gen-certs.log 2>&1";
    if (std::system(command.c_str()) != 0) {
      std::cerr << "gen-certs failed: see " << dir << "/gen-certs.log\n";
      return 1;
    }
  }

  double load[3] = {0, 0, 0};
  getloadavg(load, 3);
  std::printf("localcontroller memory (%s), %s link, %d datasets, settle %.0f s, load average %.1f\n",
              options.localcontroller.c_str(), options.insecure ? "plaintext" : "mTLS",
              options.datasets, options.settle_seconds, load[0]);

  std::vector<Row> rows;
  bool failed = false;
  using Scenario = std::optional<Row> (*)(const Options&, const std::string&);
  std::vector<Scenario> scenarios = {RunIdle, RunConnectedIdle};
  if (!options.floor_client.empty()) scenarios.insert(scenarios.end(), {RunFloorAway, RunFloorConnected});
  scenarios.insert(scenarios.end(), {RunPrepopulated, RunThroughGm});
  for (Scenario run : scenarios) {
    std::optional<Row> row = run(options, dir);
    if (!row.has_value()) {
      failed = true;
      continue;
    }
    PrintMemory(row->scenario, row->memory);
    rows.push_back(*row);
  }

  // The targets are in MB (10^6 bytes); VmHWM is shown in both units.
  std::printf("\n%-40s %9s %8s %8s %9s %8s %9s  %s\n", "scenario", "VmHWM MiB", "MB", "Pss MiB",
              "anon MiB", "time s", "target MB", "result");
  bool missed = false;
  std::map<std::string, double> hwm_mib;
  for (const Row& row : rows) {
    const double mib = row.memory.hwm / 1024.0;
    const double mb = row.memory.hwm * 1024.0 / 1e6;
    hwm_mib[row.scenario] = mib;
    failed = failed || !row.ok;
    const bool baseline = row.target_mb == 0;
    const bool within = baseline || mb <= row.target_mb;
    missed = missed || !within;
    const std::string target = baseline ? "-" : std::to_string(static_cast<int>(row.target_mb));
    std::printf("%-40s %9.1f %8.1f %8.1f %9.1f %8.1f %9s  %s\n", row.scenario.c_str(), mib, mb,
                row.memory.pss / 1024.0, row.memory.rss_anon / 1024.0, row.seconds,
                target.c_str(),
                !row.ok ? "FAILED" : baseline ? "baseline" : within ? "ok" : "over target");
  }
  for (const auto& [lc, floor] : {std::pair{"idle (empty DB, GM away)", "baseline: gRPC client, GM away"},
                                  std::pair{kConnectedIdle,
                                            "baseline: gRPC client, GM connected"}}) {
    if (hwm_mib.count(lc) != 0 && hwm_mib.count(floor) != 0) {
      std::printf("LC above the gRPC client baseline, %s: %+.1f MiB\n", lc,
                  hwm_mib[lc] - hwm_mib[floor]);
    }
  }
  // The account of the idle target, from this run: what each MB of the connected idle LC is.
  for (const Row& row : rows) {
    if (row.scenario != kConnectedIdle) continue;
    std::printf("where the connected idle LC's resident memory is, by mapping:\n%s",
                nereid::bench::DescribeResidentByMapping(row.mappings, 24).c_str());
  }
  getloadavg(load, 3);
  std::printf("load average at the end %.1f\n", load[0]);

  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (failed) return 1;
  return options.enforce && missed ? 1 : 0;
}
