// Soak: a GM, devapiserver, N simulated edge nodes and real LCs under a continuous churn for a set
// duration, sampled every interval; fails on growth that does not level off.
//
//   soak --devapiserver BIN --globalmanager BIN --localcontroller BIN --gen-certs SCRIPT
//        --crd deploy/crds [--duration 1800] [--interval 10] [--nodes 50] [--lcs 2]
//        [--round-ms 1000] [--api-watch-history 1000] [--out DIR] [--dir DIR]
//
// The cluster is soak_cluster.h, the churn soak_workload.h. Every --interval seconds one row is
// read: RSS (VmRSS), open fds and threads of the GM, devapiserver and each LC; each LC's SQLite
// file and its -wal; the GM's report queue and edge hub send queues (sum and largest node), and
// each LC's outbox, from their /metrics; the load average. The rows go to OUT/soak.csv (--out,
// default the current directory; the processes' logs stay in --dir, default a temporary directory
// removed at the end), a gnuplot script to OUT/soak.gp (drawn into OUT/soak.png when gnuplot is
// installed: apt-get install gnuplot-nox), and each column is judged by CheckGrowth
// (growth_check.h: Theil–Sen slopes of the first and last thirds, a floor per resource).
// Exit 1 when a column grows, an API call of the churn failed, a process exited,
// the LCs' counts did not converge in the API after the churn, or a process did not stop cleanly.

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "bench/bench_setup.h"
#include "bench/edge_simulator/proc_stats.h"
#include "bench/soak/soak_cluster.h"
#include "bench/soak/soak_sampler.h"
#include "bench/soak/soak_workload.h"
#include "common/status/macros.h"
#include "tests/support/subprocess.h"

namespace nereid::bench {
namespace {

// Growth tolerated over the last third of the run (growth_check.h), per resource.
constexpr double kRssFloorKb = 2048;  // allocator arenas and caches move by a few MiB
// devapiserver's Events: about one per Dataset created, i.e. ~1 KiB/s of the churn, kept until
// they expire (--event-ttl, 10 min here), so its memory levels off only after that.
constexpr double kApiRssFloorKb = 8192;
constexpr double kFdsFloor = 4;       // HTTP and gRPC connections come and go
constexpr double kThreadsFloor = 4;   // gRPC's callback pool grows and shrinks with load
constexpr double kDbFloorKb = 256;
constexpr double kWalFloorKb = 4608;  // SQLite checkpoints at ~1000 pages; the file keeps its size
constexpr double kQueueFloor = 10;

struct Flags {
  SoakClusterOptions cluster;
  double duration_seconds = 1800;
  double interval_seconds = 10;
  int round_ms = 1000;
  std::string out = ".";
};

// Every flag, bound to the fields of `f` (whose values are the defaults --help shows).
config::OptionSet RegisterOptions(Flags& f) {
  config::OptionSet options(
      "soak",
      "usage: soak --devapiserver BIN --globalmanager BIN --localcontroller BIN --gen-certs "
      "SCRIPT --crd DIR [flags]",
      "");
  SoakClusterOptions& c = f.cluster;
  options.Add("devapiserver", &c.devapiserver, "devapiserver binary (required)");
  options.Add("globalmanager", &c.globalmanager, "globalmanager binary (required)");
  options.Add("localcontroller", &c.localcontroller, "localcontroller binary (required)");
  options.Add("gen-certs", &c.gen_certs, "scripts/gen-certs.sh (required)");
  options.AddList("crd", &c.crds, "CRD file or directory (required)");
  options.AddSeconds("duration", &f.duration_seconds, "how long the soak runs", absl::Seconds(1));
  options.AddSeconds("interval", &f.interval_seconds, "sampling interval",
                     absl::Milliseconds(500));
  options.Add("nodes", &c.simulated_nodes, "simulated nodes", 1);
  options.Add("lcs", &c.local_controllers, "real LocalControllers", 0);
  options.Add("api-watch-history", &c.api_watch_history, "devapiserver's --watch-history", 100);
  options.Add("round-ms", &f.round_ms, "milliseconds per workload round", 10);
  options.Add("out", &f.out, "directory for the samples");
  options.Add("dir", &c.work_dir, "working directory (empty: a temporary one)");
  return options;
}

absl::Status CheckRequired(const Flags& flags) {
  if (flags.cluster.devapiserver.empty() || flags.cluster.globalmanager.empty() ||
      flags.cluster.localcontroller.empty() || flags.cluster.gen_certs.empty() ||
      flags.cluster.crds.empty()) {
    return absl::InvalidArgumentError(
        "--devapiserver, --globalmanager, --localcontroller, --gen-certs and --crd are required");
  }
  return absl::OkStatus();
}

double FileKb(const std::string& path) {
  std::error_code error;
  const std::uintmax_t bytes = std::filesystem::file_size(path, error);
  return error ? 0 : static_cast<double>(bytes) / 1024;  // a missing -wal is an empty one
}

double NanIfNegative(double value) { return value < 0 ? std::nan("") : value; }

// The process columns (rss, fds, threads) of `pid` under `prefix`.
void AddProcessColumns(SoakSampler& sampler, const std::string& prefix, pid_t pid,
                       double rss_floor_kb = kRssFloorKb) {
  sampler.AddColumn(prefix + "_rss_kb",
                    [pid] { return NanIfNegative(ReadProcStats(pid).vm_rss_kb); }, rss_floor_kb,
                    "RSS (KiB)");
  sampler.AddColumn(prefix + "_fds", [pid] { return NanIfNegative(OpenFds(pid)); }, kFdsFloor,
                    "open file descriptors");
  sampler.AddColumn(prefix + "_threads",
                    [pid] { return NanIfNegative(ReadProcStats(pid).threads); }, kThreadsFloor,
                    "threads");
}

class Soak {
 public:
  explicit Soak(Flags flags) : flags_(std::move(flags)) {}
  absl::Status Run();

 private:
  void AddColumns(SoakSampler& sampler);
  absl::Status Sample();
  void Report(const std::vector<GrowthVerdict>& verdicts, const SoakWorkload::Counts& counts,
              std::ostream& out) const;

  Flags flags_;
  std::optional<testing::TempDir> temp_dir_;
  std::unique_ptr<SoakCluster> cluster_;
  // /metrics text of the GM and of each LC, read once per row.
  std::string gm_metrics_;
  std::map<std::string, std::string> lc_metrics_;
  std::string load_before_, load_after_;
};

void Soak::AddColumns(SoakSampler& sampler) {
  sampler.AddColumn("load1", [] { return std::atof(LoadAverage().c_str()); }, -1, "load average");
  AddProcessColumns(sampler, "gm", cluster_->gm().pid());
  AddProcessColumns(sampler, "api", cluster_->api().pid(), kApiRssFloorKb);
  for (SoakLc& lc : cluster_->lcs()) {
    AddProcessColumns(sampler, lc.node, lc.process->pid());
    sampler.AddColumn(lc.node + "_db_kb", [db = lc.db] { return FileKb(db); }, kDbFloorKb,
                      "LC SQLite files (KiB)");
    sampler.AddColumn(lc.node + "_wal_kb", [db = lc.db] { return FileKb(db + "-wal"); },
                      kWalFloorKb, "LC SQLite files (KiB)");
    sampler.AddColumn(lc.node + "_outbox",
                      [this, node = lc.node] {
                        return MetricValue(lc_metrics_[node], "nereid_lc_outbox_depth");
                      },
                      kQueueFloor, "queue depths");
  }
  sampler.AddColumn("gm_report_queue",
                    [this] { return MetricValue(gm_metrics_, "nereid_gm_report_queue_depth"); },
                    kQueueFloor, "queue depths");
  sampler.AddColumn("gm_hub_queue_sum",
                    [this] { return MetricValue(gm_metrics_, "nereid_edgehub_queued_changes"); },
                    kQueueFloor, "queue depths");
  sampler.AddColumn("gm_hub_queue_max",
                    [this] {
                      return MetricValue(gm_metrics_, "nereid_edgehub_node_queue_depth_max");
                    },
                    kQueueFloor, "queue depths");
  // The controllers' work queues: keys ready for a worker, and keys waiting out a backoff (a
  // retry that never ends would grow here), summed over the controllers.
  sampler.AddColumn("gm_workqueue_depth",
                    [this] { return MetricValue(gm_metrics_, "nereid_gm_workqueue_depth"); },
                    kQueueFloor, "queue depths");
  sampler.AddColumn("gm_workqueue_waiting",
                    [this] { return MetricValue(gm_metrics_, "nereid_gm_workqueue_waiting"); },
                    kQueueFloor, "queue depths");
}

absl::Status Soak::Run() {
  if (flags_.cluster.work_dir.empty()) {
    ASSIGN_OR_RETURN(testing::TempDir dir, testing::TempDir::Create("soak-"));
    temp_dir_.emplace(std::move(dir));
    flags_.cluster.work_dir = temp_dir_->path();
  }
  std::error_code error;
  std::filesystem::create_directories(flags_.cluster.work_dir, error);
  std::filesystem::create_directories(flags_.out, error);
  flags_.out = std::filesystem::absolute(flags_.out, error).lexically_normal().string();
  if (flags_.out.size() > 1 && flags_.out.back() == '/') flags_.out.pop_back();  // "dir/." → "dir"
  load_before_ = LoadAverage();
  std::cerr << "soak: starting devapiserver, the GM, " << flags_.cluster.simulated_nodes
            << " simulated nodes and " << flags_.cluster.local_controllers << " LCs in "
            << flags_.cluster.work_dir << std::endl;
  ASSIGN_OR_RETURN(cluster_, SoakCluster::Start(flags_.cluster));

  SoakWorkload::Options workload_options;
  workload_options.round = absl::Milliseconds(flags_.round_ms);
  SoakWorkload workload(workload_options, cluster_.get());
  RETURN_IF_ERROR(workload.Prepare());

  SoakSampler sampler([this] {
    absl::StatusOr<std::string> gm = FetchMetrics(cluster_->gm_http_port());
    gm_metrics_ = gm.ok() ? *gm : "";
    for (SoakLc& lc : cluster_->lcs()) {
      absl::StatusOr<std::string> metrics = FetchMetrics(lc.http_port);
      lc_metrics_[lc.node] = metrics.ok() ? *metrics : "";
    }
  });
  AddColumns(sampler);

  std::cerr << "soak: churning for " << flags_.duration_seconds << " s, a sample every "
            << flags_.interval_seconds << " s" << std::endl;
  const std::string csv = flags_.out + "/soak.csv";
  workload.Start();
  const absl::Time start = absl::Now();
  const absl::Duration interval = absl::Seconds(flags_.interval_seconds);
  const int samples = static_cast<int>(flags_.duration_seconds / flags_.interval_seconds) + 1;
  std::string exited;
  for (int k = 0; k < samples && exited.empty(); ++k) {
    // Samples at fixed times from the start: a scheduled reading, not a wait for a condition.
    absl::SleepFor(start + k * interval - absl::Now());
    sampler.Sample(absl::ToDoubleSeconds(absl::Now() - start));
    // Rewritten every row, so a long run can be watched (and a crash keeps what it sampled).
    sampler.WriteCsv(csv).IgnoreError();
    exited = cluster_->Exited();
    if (k % 6 == 0) {
      std::cerr << absl::StrFormat("soak: %.0f s, GM RSS %.0f KiB, load %s",
                                   k * flags_.interval_seconds, sampler.Last("gm_rss_kb"),
                                   LoadAverage())
                << std::endl;
    }
  }
  workload.Stop();
  load_after_ = LoadAverage();

  RETURN_IF_ERROR(sampler.WriteCsv(csv));
  RETURN_IF_ERROR(sampler.WriteGnuplot(flags_.out + "/soak.gp", csv, flags_.out + "/soak.png"));
  absl::StatusOr<testing::CommandResult> plot =
      testing::RunCommand({"gnuplot", flags_.out + "/soak.gp"}, absl::Seconds(60));
  if (!plot.ok() || plot->exit_code != 0) {
    std::cerr << "soak: no picture (gnuplot-nox not installed?): run gnuplot " << flags_.out
              << "/soak.gp\n";
  }

  const absl::Status converged =
      exited.empty() ? workload.WaitConverged(absl::Seconds(60)) : absl::OkStatus();
  const std::vector<GrowthVerdict> verdicts = sampler.Check();
  const SoakWorkload::Counts counts = workload.counts();
  Report(verdicts, counts, std::cout);
  std::cout << "samples: " << csv << "\n";

  const absl::Status stopped = cluster_->Stop();
  if (!exited.empty()) return absl::InternalError(absl::StrCat(exited, " exited during the soak"));
  RETURN_IF_ERROR(converged);
  if (counts.failures > 0) {
    return absl::InternalError(
        absl::StrCat(counts.failures, " churn operations failed, first: ", counts.first_failure));
  }
  std::vector<std::string> growing;
  for (const GrowthVerdict& verdict : verdicts) {
    if (!verdict.enough_samples)
      return absl::FailedPreconditionError("too few samples for a verdict (3 per third)");
    if (verdict.grows) growing.push_back(verdict.name);
  }
  if (!growing.empty()) {
    return absl::InternalError(absl::StrCat("growth that does not level off: ",
                                            absl::StrJoin(growing, ", ")));
  }
  return stopped;
}

void Soak::Report(const std::vector<GrowthVerdict>& verdicts, const SoakWorkload::Counts& counts,
                  std::ostream& out) const {
  out << absl::StrFormat(
      "soak: %.0f s, %d simulated nodes, %d LCs; load average %s at the start, %s at the end\n",
      flags_.duration_seconds, flags_.cluster.simulated_nodes, flags_.cluster.local_controllers,
      load_before_, load_after_);
  out << absl::StrFormat(
      "churn: %d rounds, %d creates, %d deletes, %d lines appended, %d simulated reports, %d "
      "failures\n",
      counts.rounds, counts.creates, counts.deletes, counts.appended_lines, counts.reports_queued,
      counts.failures);
  out << absl::StrFormat("%-18s %14s %14s %14s %10s  %s\n", "series", "first/min",
                         "last/min", "last-third", "floor", "verdict");
  for (const GrowthVerdict& v : verdicts) {
    out << absl::StrFormat("%-18s %14.2f %14.2f %14.1f %10.0f  %s\n", v.name, 60 * v.first_slope,
                           60 * v.last_slope, v.last_growth, v.floor,
                           !v.enough_samples ? "too few samples"
                           : v.grows         ? "GROWS"
                                             : "levels off");
  }
}

}  // namespace
}  // namespace nereid::bench

int main(int argc, char** argv) {
  nereid::bench::Flags flags;
  nereid::config::OptionSet options = nereid::bench::RegisterOptions(flags);
  if (std::optional<int> exit_code = nereid::bench::ReadFlags(
          options, argc, argv, [&] { return nereid::bench::CheckRequired(flags); })) {
    return *exit_code;
  }
  nereid::bench::Soak soak(std::move(flags));
  const absl::Status run = soak.Run();
  if (!run.ok()) {
    std::cerr << "soak: FAILED: " << run << "\n";
    return 1;
  }
  std::cout << "soak: PASSED\n";
  return 0;
}
