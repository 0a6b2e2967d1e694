#include "localcontroller/dataset/file_reader.h"

#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "localcontroller/dataset/errors.h"

namespace nereid::lc::dataset {
namespace {

// The window the current thread is scanning; the SIGBUS handler only acts on faults inside it.
struct GuardedRegion {
  const uint8_t* begin;
  const uint8_t* end;
  sigjmp_buf env;
};

thread_local GuardedRegion* tls_region = nullptr;
struct sigaction g_previous_sigbus;

void OnSigbus(int sig, siginfo_t* info, void* context) {
  GuardedRegion* region = tls_region;
  const auto* addr = static_cast<const uint8_t*>(info->si_addr);
  if (region != nullptr && addr >= region->begin && addr < region->end) {
    tls_region = nullptr;
    siglongjmp(region->env, 1);
  }
  // Not ours: behave as if we had never installed a handler.
  if ((g_previous_sigbus.sa_flags & SA_SIGINFO) && g_previous_sigbus.sa_sigaction != nullptr) {
    g_previous_sigbus.sa_sigaction(sig, info, context);
    return;
  }
  if (g_previous_sigbus.sa_handler != SIG_DFL && g_previous_sigbus.sa_handler != SIG_IGN) {
    g_previous_sigbus.sa_handler(sig);
    return;
  }
  signal(SIGBUS, SIG_DFL);
  raise(SIGBUS);  // delivered when the handler returns: the default action (core dump)
}

void InstallSigbusHandlerOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action = {};
    action.sa_sigaction = &OnSigbus;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    sigaction(SIGBUS, &action, &g_previous_sigbus);
  });
}

// Runs sink over a mapped window; false if the file shrank under it (SIGBUS).
bool SinkGuarded(const uint8_t* data, size_t size, ChunkSink sink) {
  GuardedRegion region;
  region.begin = data;
  region.end = data + size;
  if (sigsetjmp(region.env, /*savemask=*/1) != 0) return false;
  tls_region = &region;
  sink(data, size);
  tls_region = nullptr;
  return true;
}

bool Cancelled(const ReadOptions& options) {
  return options.cancel != nullptr && options.cancel->load(std::memory_order_relaxed);
}

absl::Status CancelledError() { return DatasetError(Reason::kCancelled, "scan cancelled"); }

absl::Status ReadMapped(int fd, uint64_t begin, uint64_t end, const ReadOptions& options,
                        ChunkSink sink, uint64_t* bytes_read) {
  InstallSigbusHandlerOnce();
  static const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t window = std::max<uint64_t>(page, options.mmap_window / page * page);
  uint64_t pos = begin;
  while (pos < end) {
    if (Cancelled(options)) return CancelledError();
    const uint64_t map_start = pos / page * page;
    const uint64_t map_end = std::min(end, map_start + window);
    const size_t map_len = map_end - map_start;
    void* addr = mmap(nullptr, map_len, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(map_start));
    if (addr == MAP_FAILED) {
      return DatasetError(Reason::kReadError, absl::StrCat("mmap: ", std::strerror(errno)));
    }
    madvise(addr, map_len, MADV_SEQUENTIAL);
    const auto* base = static_cast<const uint8_t*>(addr);
    const bool ok = SinkGuarded(base + (pos - map_start), map_end - pos, sink);
    munmap(addr, map_len);
    if (!ok) {
      return DatasetError(Reason::kFileChanged, "the file was truncated while it was being read");
    }
    *bytes_read += map_end - pos;
    pos = map_end;
  }
  return absl::OkStatus();
}

absl::Status ReadBuffered(int fd, uint64_t begin, uint64_t end, const ReadOptions& options,
                          ChunkSink sink, uint64_t* bytes_read) {
  const size_t buffer_size =
      static_cast<size_t>(std::min<uint64_t>(std::max<uint64_t>(options.buffer_size, 4096),
                                             end - begin));
  auto buffer = std::make_unique_for_overwrite<uint8_t[]>(buffer_size);
  uint64_t pos = begin;
  while (pos < end) {
    if (Cancelled(options)) return CancelledError();
    const size_t want = static_cast<size_t>(std::min<uint64_t>(buffer_size, end - pos));
    const ssize_t n = pread(fd, buffer.get(), want, static_cast<off_t>(pos));
    if (n < 0) {
      if (errno == EINTR) continue;
      return DatasetError(Reason::kReadError, absl::StrCat("read: ", std::strerror(errno)));
    }
    if (n == 0) {
      return DatasetError(Reason::kFileChanged, "the file was truncated while it was being read");
    }
    sink(buffer.get(), static_cast<size_t>(n));
    *bytes_read += static_cast<uint64_t>(n);
    pos += static_cast<uint64_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ReadRange(int fd, uint64_t begin, uint64_t end, const ReadOptions& options,
                       ChunkSink sink, uint64_t* bytes_read) {
  if (begin >= end) return absl::OkStatus();
  if (options.use_mmap && end - begin >= options.mmap_min_bytes) {
    return ReadMapped(fd, begin, end, options, sink, bytes_read);
  }
  posix_fadvise(fd, static_cast<off_t>(begin), static_cast<off_t>(end - begin),
                POSIX_FADV_SEQUENTIAL);
  return ReadBuffered(fd, begin, end, options, sink, bytes_read);
}

bool SplitScan(const ReadOptions& options, uint64_t bytes) {
  if (!options.use_mmap || options.scan_threads == 1 || bytes < options.split_min_bytes ||
      bytes < options.mmap_min_bytes) {
    return false;
  }
  return options.scan_threads == 2 || SecondCpuIdle();
}

bool SecondCpuIdle() {
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0 || CPU_COUNT(&cpus) < 2) return false;
  // "0.52 0.58 0.59 2/310 12345": the fourth field is runnable/total, the caller included.
  std::FILE* f = std::fopen("/proc/loadavg", "re");
  if (f == nullptr) return false;
  double load[3];
  int runnable = 0;
  int total = 0;
  const int fields = std::fscanf(f, "%lf %lf %lf %d/%d", &load[0], &load[1], &load[2], &runnable,
                                 &total);
  std::fclose(f);
  return fields == 5 && runnable < CPU_COUNT(&cpus);
}

absl::Status ReadExactly(int fd, uint64_t offset, uint8_t* out, size_t size) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = pread(fd, out + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return DatasetError(Reason::kReadError, absl::StrCat("read: ", std::strerror(errno)));
    }
    if (n == 0) return DatasetError(Reason::kFileChanged, "the file became shorter");
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace nereid::lc::dataset
