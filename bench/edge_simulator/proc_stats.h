#pragma once

// What the benchmarks read about a process (GM, devapiserver, LC, itself) from /proc, and latency
// percentiles.

#include <sys/types.h>

#include <string>
#include <vector>

namespace nereid::bench {

struct ProcStats {
  long vm_hwm_kb = -1;  // peak resident set (the kernel's high-water mark)
  long vm_rss_kb = -1;
  long rss_anon_kb = -1;
  int threads = -1;
  double cpu_seconds = -1;  // user + system
  bool ok() const { return vm_hwm_kb >= 0 && cpu_seconds >= 0; }
};

// /proc/<pid>/status and /proc/<pid>/stat; fields stay -1 when unreadable (process gone).
ProcStats ReadProcStats(pid_t pid);
// Entries in /proc/<pid>/fd; -1 when unreadable (process gone).
int OpenFds(pid_t pid);

// Nearest-rank percentile (p in [0, 1]) of unsorted values; 0 for an empty set.
double Percentile(std::vector<double> values, double p);

struct Summary {
  std::size_t count = 0;
  double p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
};
Summary Summarize(const std::vector<double>& values);

}  // namespace nereid::bench
