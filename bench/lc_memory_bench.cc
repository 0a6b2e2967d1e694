// LocalController memory benchmark: the resident memory (VmHWM, the peak RSS the kernel records)
// of the real `localcontroller` binary
//   1. idle: started on an empty database, the GM unreachable (the cloud link keeps retrying);
//   2. N datasets, GM away: N Dataset objects already in its database (as a previous sync left
//      them), every one counted and its report queued in the outbox;
//   3. N datasets through a GM: an empty database, an in-process GM edge hub sends the N datasets,
//      the LC counts them, reports them and the GM acknowledges every report.
// Each LC runs in insecure mode (plaintext gRPC) so no certificates are needed.
//
//   lc_memory_bench --localcontroller PATH [--datasets N] [--dir DIR] [--settle SECONDS]
//                   [--enforce]
//
// Targets (issue 3 §6): idle <= 20 MB, 1,000 datasets tracked <= 40 MB. Exit status 1 when a count
// is wrong or an LC fails; with --enforce also when a target is missed.

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

struct Options {
  std::string localcontroller;
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
                                     db, "--host-root", host_root, "--listen", "127.0.0.1:0",
                                     "--insecure"};
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
};

void PrintMemory(const std::string& label, const Memory& m) {
  std::printf("  %-34s VmHWM %6.1f MiB  VmRSS %6.1f  RssAnon %5.1f  RssFile %5.1f  Pss %5.1f  "
              "threads %d\n",
              label.c_str(), m.hwm / 1024.0, m.rss / 1024.0, m.rss_anon / 1024.0,
              m.rss_file / 1024.0, m.pss / 1024.0, m.threads);
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
  std::this_thread::sleep_for(std::chrono::duration<double>(options.settle_seconds));
  row.memory = ReadMemory(lc->pid());
  row.target_mb = 20;
  row.ok = lc->Stop() == 0 && row.ok;
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
  std::this_thread::sleep_for(std::chrono::duration<double>(options.settle_seconds));
  row.memory = ReadMemory(lc->pid());
  row.target_mb = 40;
  row.ok = lc->Stop() == 0 && row.ok;
  return row;
}

std::optional<Row> RunThroughGm(const Options& options, const std::string& dir) {
  const std::string base = dir + "/gm";
  WriteDatasets(base + "/root", options.datasets);
  CountingHandler handler;
  nereid::gm::EdgeHub::Options hub_options;
  hub_options.allow_unauthenticated = true;
  hub_options.report_handler = &handler;
  nereid::gm::EdgeHub hub(hub_options);
  for (int i = 0; i < options.datasets; ++i) {
    if (absl::Status s = hub.Upsert(kNode, Dataset(i, "/data/ds-" + std::to_string(i) + ".txt"));
        !s.ok()) {
      std::cerr << s << "\n";
      return std::nullopt;
    }
  }
  hub.MarkSynced();
  nereid::gm::EdgeHubServerOptions server_options;
  server_options.listen = "127.0.0.1:0";
  server_options.tls.insecure = true;
  auto server = nereid::gm::EdgeHubServer::Start(&hub, server_options);
  if (!server.ok()) {
    std::cerr << server.status() << "\n";
    return std::nullopt;
  }
  const double start = Now();
  auto lc = Lc::Start(options, base + "/lc.db", base + "/root",
                      "127.0.0.1:" + std::to_string((*server)->port()), base + "/lc.log");
  if (!lc) return std::nullopt;
  Row row;
  row.scenario = std::to_string(options.datasets) + " datasets via the GM, acked";
  row.ok = WaitUntil(
      [&] {
        return handler.counts().size() == static_cast<size_t>(options.datasets) &&
               lc->OutboxDepth() == 0;
      },
      300);
  row.seconds = Now() - start;
  int wrong = 0;
  for (const auto& [name, count] : handler.counts()) {
    if (count != ExpectedCount(std::stoi(name.substr(3)))) ++wrong;
  }
  wrong += CheckCounts(*lc, options.datasets);
  if (wrong > 0) std::cerr << wrong << " wrong counts\n";
  row.ok = row.ok && wrong == 0;
  std::this_thread::sleep_for(std::chrono::duration<double>(options.settle_seconds));
  row.memory = ReadMemory(lc->pid());
  row.target_mb = 40;
  row.ok = lc->Stop() == 0 && row.ok;
  hub.Shutdown();
  (*server)->Stop(absl::Seconds(1));
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << arg << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--localcontroller") {
      options.localcontroller = value();
    } else if (arg == "--datasets") {
      options.datasets = std::stoi(value());
    } else if (arg == "--dir") {
      options.dir = value();
    } else if (arg == "--settle") {
      options.settle_seconds = std::stod(value());
    } else if (arg == "--enforce") {
      options.enforce = true;
    } else {
      std::cerr << "usage: lc_memory_bench --localcontroller PATH [--datasets N] [--dir DIR] "
                   "[--settle SECONDS] [--enforce]\n";
      return 2;
    }
  }
  if (options.localcontroller.empty()) {
    std::cerr << "--localcontroller PATH is required\n";
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

  double load[3] = {0, 0, 0};
  getloadavg(load, 3);
  std::printf("localcontroller memory (%s), %d datasets, settle %.0f s, load average %.1f\n",
              options.localcontroller.c_str(), options.datasets, options.settle_seconds, load[0]);

  std::vector<Row> rows;
  bool failed = false;
  for (auto run : {RunIdle, RunPrepopulated, RunThroughGm}) {
    std::optional<Row> row = run(options, dir);
    if (!row.has_value()) {
      failed = true;
      continue;
    }
    PrintMemory(row->scenario, row->memory);
    rows.push_back(*row);
  }

  std::printf("\n%-40s %9s %9s %9s %8s %8s  %s\n", "scenario", "VmHWM MiB", "Pss MiB",
              "anon MiB", "time s", "target", "result");
  bool missed = false;
  for (const Row& row : rows) {
    const double hwm_mb = row.memory.hwm / 1024.0;
    const bool within = hwm_mb <= row.target_mb;
    missed = missed || !within;
    failed = failed || !row.ok;
    std::printf("%-40s %9.1f %9.1f %9.1f %8.1f %8.0f  %s\n", row.scenario.c_str(), hwm_mb,
                row.memory.pss / 1024.0, row.memory.rss_anon / 1024.0, row.seconds, row.target_mb,
                !row.ok ? "FAILED" : within ? "ok" : "over target");
  }
  getloadavg(load, 3);
  std::printf("load average at the end %.1f\n", load[0]);

  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (failed) return 1;
  return options.enforce && missed ? 1 : 0;
}
