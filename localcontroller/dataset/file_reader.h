#pragma once

// Reads a byte range of an open file and hands it to a sink in large chunks, as fast as the page
// cache allows. Large ranges are mapped in windows (mmap, MADV_SEQUENTIAL) so the bytes are never
// copied: read() into a buffer costs about as much as counting does (measured in bench/RESULTS.md).
// Small ranges use pread into a buffer.
//
// A mapped file that another process truncates while we read it raises SIGBUS. The window scan runs
// under a thread-local guard: a process-wide SIGBUS handler (installed once, chaining to whatever
// handler was there) jumps back out of the sink when the faulting address is inside the guarded
// window, and ReadRange returns FileChanged. The sink must therefore not allocate, lock or own
// anything with a destructor while it runs (the counting kernels don't).

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"

namespace nereid::lc::dataset {

struct ReadOptions {
  bool use_mmap = true;
  // Ranges at least this long are mapped; shorter ones are read with pread.
  uint64_t mmap_min_bytes = 256 * 1024;
  // Bytes mapped at a time (bounds the resident file pages a scan adds to the LC's RSS).
  uint64_t mmap_window = 4 * 1024 * 1024;
  uint64_t buffer_size = 1024 * 1024;
  // Threads for one large txt/jsonl scan. Reading a cached file costs about one pass over memory
  // whether it is mapped or copied, so one core is bound by the memory bandwidth it gets; a second
  // core counting the second half is what takes a scan below that (bench/RESULTS.md).
  //   0: two threads when the mapped range is at least split_min_bytes and another CPU is idle at
  //      that moment (SecondCpuIdle); 1: always one; 2: always two for a mapped range of at least
  //      split_min_bytes.
  int scan_threads = 0;
  uint64_t split_min_bytes = 64 * 1024 * 1024;
  // When set and true, the read stops between chunks with a Cancelled error.
  const std::atomic<bool>* cancel = nullptr;
};

using ChunkSink = absl::FunctionRef<void(const uint8_t* data, size_t size)>;

// Feeds [begin, end) of `fd` to `sink` in order. `*bytes_read` grows by the bytes delivered. A file
// that became shorter than `end` meanwhile gives FileChanged.
absl::Status ReadRange(int fd, uint64_t begin, uint64_t end, const ReadOptions& options,
                       ChunkSink sink, uint64_t* bytes_read);

// Whether a scan of `bytes` with `options` should be split over two threads (see scan_threads).
bool SplitScan(const ReadOptions& options, uint64_t bytes);

// Whether a CPU this process may run on is idle right now besides the calling thread's: the
// kernel's count of runnable threads (/proc/loadavg) is below the CPUs in our affinity mask.
bool SecondCpuIdle();

// pread of exactly `size` bytes at `offset` (FileChanged if the file is shorter).
absl::Status ReadExactly(int fd, uint64_t offset, uint8_t* out, size_t size);

}  // namespace nereid::lc::dataset
