#include "bench/edge_simulator/proc_stats.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

namespace nereid::bench {
namespace {

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// "Field:   123 kB" in /proc/<pid>/status.
long StatusField(const std::string& status, const std::string& field) {
  const std::string needle = "\n" + field + ":";
  const std::size_t at = ("\n" + status).find(needle);
  if (at == std::string::npos) return -1;
  // `at` indexes "\n"+status, so the value starts at at + needle.size() - 1 in status.
  return std::strtol(status.c_str() + at + needle.size() - 1, nullptr, 10);
}

}  // namespace

ProcStats ReadProcStats(pid_t pid) {
  ProcStats stats;
  const std::string dir = "/proc/" + std::to_string(pid);
  const std::string status = ReadWhole(dir + "/status");
  if (!status.empty()) {
    stats.vm_hwm_kb = StatusField(status, "VmHWM");
    stats.vm_rss_kb = StatusField(status, "VmRSS");
    stats.rss_anon_kb = StatusField(status, "RssAnon");
    stats.threads = static_cast<int>(StatusField(status, "Threads"));
  }
  // /proc/<pid>/stat: "pid (comm) state ..." — comm may hold spaces, so count from the last ')'.
  // utime and stime are fields 14 and 15, i.e. the 12th and 13th after the ')'.
  const std::string stat = ReadWhole(dir + "/stat");
  const std::size_t close = stat.rfind(')');
  if (close != std::string::npos) {
    std::istringstream fields(stat.substr(close + 1));
    std::string field;
    double ticks = 0;
    for (int i = 1; i <= 13 && (fields >> field); ++i) {
      if (i >= 12) ticks += std::strtod(field.c_str(), nullptr);
      if (i == 13) stats.cpu_seconds = ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
    }
  }
  return stats;
}

int OpenFds(pid_t pid) {
  std::error_code error;
  std::filesystem::directory_iterator entries("/proc/" + std::to_string(pid) + "/fd", error);
  if (error) return -1;
  int count = 0;
  for (auto it = std::filesystem::begin(entries); it != std::filesystem::end(entries);
       it.increment(error)) {
    if (error) return -1;
    ++count;
  }
  return count;
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(p * static_cast<double>(values.size()));
  const std::size_t index =
      std::clamp<std::size_t>(static_cast<std::size_t>(rank), 1, values.size()) - 1;
  return values[index];
}

Summary Summarize(const std::vector<double>& values) {
  Summary summary;
  summary.count = values.size();
  if (values.empty()) return summary;
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  auto at = [&](double p) {
    const double rank = std::ceil(p * static_cast<double>(sorted.size()));
    return sorted[std::clamp<std::size_t>(static_cast<std::size_t>(rank), 1, sorted.size()) - 1];
  };
  summary.p50 = at(0.50);
  summary.p90 = at(0.90);
  summary.p99 = at(0.99);
  summary.max = sorted.back();
  summary.mean =
      std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(sorted.size());
  return summary;
}

}  // namespace nereid::bench
