#pragma once

// `count_bench --strategies FILE`: ways of reading a cached txt file for the line kernel, timed
// in this process, interleaved, so their costs can be compared in one run (RESULTS.md, "Where the
// time goes"). Every strategy must give the same count. One thread unless the name says otherwise.

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "bench/count_floor.h"
#include "localcontroller/dataset/line_scan.h"

namespace nereid::bench {

struct Strategy {
  const char* name;
  std::function<uint64_t(int fd, size_t size)> run;
};

inline uint64_t ScanWindows(int fd, size_t size, size_t window, int advice, int map_flags) {
  uint64_t count = 0;
  lc::dataset::LineScanState state;
  for (size_t pos = 0; pos < size; pos += window) {
    const size_t len = std::min(window, size - pos);
    void* addr = mmap(nullptr, len, PROT_READ, MAP_SHARED | map_flags, fd, static_cast<off_t>(pos));
    if (addr == MAP_FAILED) return 0;
    if (advice >= 0) madvise(addr, len, advice);
    count += lc::dataset::ScanLines(static_cast<const uint8_t*>(addr), len, &state);
    munmap(addr, len);
  }
  return count;
}

inline uint64_t ScanRead(int fd, size_t size, size_t buffer_size) {
  std::vector<uint8_t> buffer(buffer_size);
  uint64_t count = 0;
  lc::dataset::LineScanState state;
  for (size_t pos = 0; pos < size;) {
    const ssize_t n = pread(fd, buffer.data(), buffer.size(), static_cast<off_t>(pos));
    if (n <= 0) return 0;
    count += lc::dataset::ScanLines(buffer.data(), static_cast<size_t>(n), &state);
    pos += static_cast<size_t>(n);
  }
  return count;
}

// A helper thread maps window k+1 and touches a byte per page (page faults) while this thread
// scans window k; the helper stays at most two windows ahead.
inline uint64_t ScanWithFaultingHelper(int fd, size_t size, size_t window) {
  const size_t windows = (size + window - 1) / window;
  std::vector<std::atomic<const uint8_t*>> mapped(windows);
  std::atomic<size_t> scanned{0};
  std::thread helper([&] {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    for (size_t k = 0; k < windows; ++k) {
      while (k >= scanned.load(std::memory_order_acquire) + 2) std::this_thread::yield();
      const size_t len = std::min(window, size - k * window);
      void* addr = mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(k * window));
      if (addr == MAP_FAILED) {
        std::perror("mmap");
        std::exit(2);
      }
      const auto* p = static_cast<const uint8_t*>(addr);
      for (size_t i = 0; i < len; i += page) {
        static_cast<void>(*static_cast<const volatile uint8_t*>(p + i));
      }
      mapped[k].store(p, std::memory_order_release);
    }
  });
  uint64_t count = 0;
  lc::dataset::LineScanState state;
  for (size_t k = 0; k < windows; ++k) {
    const uint8_t* p;
    while ((p = mapped[k].load(std::memory_order_acquire)) == nullptr) std::this_thread::yield();
    const size_t len = std::min(window, size - k * window);
    count += lc::dataset::ScanLines(p, len, &state);
    munmap(const_cast<uint8_t*>(p), len);
    scanned.store(k + 1, std::memory_order_release);
  }
  helper.join();
  return count;
}

inline int RunStrategies(const std::string& path, int reps) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    std::perror(path.c_str());
    return 2;
  }
  const size_t size = static_cast<size_t>(st.st_size);
  constexpr size_t kMiB = 1 << 20;
  const std::vector<Strategy> strategies = {
      {"mmap 4 MiB windows, MADV_SEQUENTIAL (LC)",
       [](int f, size_t n) { return ScanWindows(f, n, 4 * kMiB, MADV_SEQUENTIAL, 0); }},
      {"mmap 4 MiB windows, no advice",
       [](int f, size_t n) { return ScanWindows(f, n, 4 * kMiB, -1, 0); }},
      {"mmap 16 MiB windows",
       [](int f, size_t n) { return ScanWindows(f, n, 16 * kMiB, MADV_SEQUENTIAL, 0); }},
      {"mmap whole file", [](int f, size_t n) { return ScanWindows(f, n, n, MADV_SEQUENTIAL, 0); }},
      {"4 MiB + MADV_WILLNEED",
       [](int f, size_t n) { return ScanWindows(f, n, 4 * kMiB, MADV_WILLNEED, 0); }},
      {"4 MiB + MADV_POPULATE_READ",
       [](int f, size_t n) { return ScanWindows(f, n, 4 * kMiB, MADV_POPULATE_READ, 0); }},
      {"4 MiB + MAP_POPULATE",
       [](int f, size_t n) { return ScanWindows(f, n, 4 * kMiB, -1, MAP_POPULATE); }},
      {"4 MiB + MADV_HUGEPAGE",
       [](int f, size_t n) { return ScanWindows(f, n, 4 * kMiB, MADV_HUGEPAGE, 0); }},
      {"4 MiB, helper thread faults ahead",
       [](int f, size_t n) { return ScanWithFaultingHelper(f, n, 4 * kMiB); }},
      {"read() 1 MiB buffer", [](int f, size_t n) { return ScanRead(f, n, kMiB); }},
      {"read() 128 KiB buffer", [](int f, size_t n) { return ScanRead(f, n, 128 * 1024); }},
  };
  std::vector<std::vector<double>> wall(strategies.size()), cpu(strategies.size()),
      sys(strategies.size()), faults(strategies.size());
  std::vector<uint64_t> counts(strategies.size());
  for (int rep = -1; rep < reps; ++rep) {
    for (size_t i = 0; i < strategies.size(); ++i) {
      rusage before = {};
      rusage after = {};
      getrusage(RUSAGE_SELF, &before);
      const std::optional<FloorTiming> t =
          TimeIt([&]() -> std::optional<uint64_t> { return strategies[i].run(fd, size); });
      getrusage(RUSAGE_SELF, &after);
      counts[i] = t->checksum;
      if (rep < 0) continue;
      wall[i].push_back(t->wall);
      cpu[i].push_back(t->cpu);
      sys[i].push_back(static_cast<double>(after.ru_stime.tv_sec - before.ru_stime.tv_sec) +
                       static_cast<double>(after.ru_stime.tv_usec - before.ru_stime.tv_usec) / 1e6);
      faults[i].push_back(static_cast<double>(after.ru_minflt - before.ru_minflt));
    }
  }
  close(fd);
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
  };
  double load[3] = {0, 0, 0};
  getloadavg(load, 3);
  std::printf(
      "reading strategies, %s kernel, %.0f MiB, %d interleaved runs, medians, load %.2f "
      "at end\n%-42s %8s %8s %8s %8s\n",
      lc::dataset::ScanIsaName(lc::dataset::BestScanIsa()), static_cast<double>(size) / kMiB, reps,
      load[0], "strategy", "wall ms", "cpu ms", "sys ms", "faults");
  bool same = true;
  for (size_t i = 0; i < strategies.size(); ++i) {
    same = same && counts[i] == counts[0];
    std::printf("%-42s %8.1f %8.1f %8.1f %8.0f%s\n", strategies[i].name, median(wall[i]) * 1e3,
                median(cpu[i]) * 1e3, median(sys[i]) * 1e3, median(faults[i]),
                counts[i] == counts[0] ? "" : "  DIFFERENT COUNT");
  }
  return same ? 0 : 1;
}

}  // namespace nereid::bench
