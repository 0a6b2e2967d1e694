#pragma once

// The machine's floor for reading a cached file, measured by count_bench beside the counts in the
// same run (RESULTS.md, "Dataset sample counting"):
//   - read-copy: pread() into a 1 MiB buffer, like `dd bs=1M`: what copying the file costs, the
//     cost `wc -l` pays before it counts anything;
//   - mmap-touch: map the whole file, read one byte of every page, unmap: the page-mapping cost any
//     mmap reader pays, without reading the bytes;
//   - mmap-read-all: the same mapping, then every byte read with 16-byte loads on one thread: the
//     least a one-thread exact count through mmap can cost, since it must read every byte.
// Each returns wall and CPU seconds of this process (the caller runs nothing else meanwhile).

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

namespace nereid::bench {

struct FloorTiming {
  double wall = 0;        // seconds
  double cpu = 0;         // user + system seconds of this process
  uint64_t checksum = 0;  // keeps the reads from being optimized away
};

inline double WallNow() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline double ProcessCpuNow() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// Times `body` (which returns a checksum); nullopt if it failed (returned nullopt).
template <typename Body>
std::optional<FloorTiming> TimeIt(Body body) {
  FloorTiming t;
  const double wall = WallNow();
  const double cpu = ProcessCpuNow();
  const std::optional<uint64_t> sum = body();
  t.cpu = ProcessCpuNow() - cpu;
  t.wall = WallNow() - wall;
  if (!sum.has_value()) return std::nullopt;
  t.checksum = *sum;
  return t;
}

inline std::optional<FloorTiming> ReadCopyFloor(const std::string& path) {
  return TimeIt([&]() -> std::optional<uint64_t> {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    std::vector<uint8_t> buffer(1 << 20);
    uint64_t sum = 0;
    ssize_t n;
    while ((n = read(fd, buffer.data(), buffer.size())) > 0) sum += buffer[0];
    close(fd);
    if (n < 0) return std::nullopt;
    return sum;
  });
}

// Maps the whole file, hands it to `use`, unmaps.
template <typename Use>
std::optional<FloorTiming> MappedFloor(const std::string& path, size_t size, Use use) {
  return TimeIt([&]() -> std::optional<uint64_t> {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    void* addr = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (addr == MAP_FAILED) return std::nullopt;
    const uint64_t sum = use(static_cast<const uint8_t*>(addr), size);
    munmap(addr, size);
    return sum;
  });
}

inline std::optional<FloorTiming> MmapTouchFloor(const std::string& path, size_t size) {
  return MappedFloor(path, size, [](const uint8_t* p, size_t n) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i += page) sum += p[i];
    return sum;
  });
}

inline std::optional<FloorTiming> MmapReadAllFloor(const std::string& path, size_t size) {
  return MappedFloor(path, size, [](const uint8_t* p, size_t n) {
    uint64_t sum = 0;
    size_t i = 0;
#if defined(__x86_64__)
    __m128i a = _mm_setzero_si128();
    __m128i b = _mm_setzero_si128();
    for (; i + 32 <= n; i += 32) {
      a = _mm_or_si128(a, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)));
      b = _mm_or_si128(b, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 16)));
    }
    a = _mm_or_si128(a, b);
    sum = static_cast<uint64_t>(_mm_cvtsi128_si64(a)) |
          static_cast<uint64_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(a, a)));
#endif
    for (; i < n; ++i) sum |= p[i];
    return sum;
  });
}

}  // namespace nereid::bench
