#include "localcontroller/dataset/file_counter.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <system_error>
#include <thread>

#include "common/status/macros.h"
#include "localcontroller/dataset/errors.h"
#include "localcontroller/dataset/line_segment.h"
#include "localcontroller/dataset/stream_counter.h"

namespace nereid::lc::dataset {
namespace {

// The last kGuardBytes bytes seen, to store the guard of the new checkpoint without re-reading.
class TailKeeper {
 public:
  void Push(const uint8_t* data, size_t size) {
    constexpr size_t kCap = Checkpoint::kGuardBytes;
    if (size >= kCap) {
      std::memcpy(buf_.data(), data + size - kCap, kCap);
      len_ = kCap;
      return;
    }
    const size_t keep = std::min(len_, kCap - size);
    std::memmove(buf_.data(), buf_.data() + len_ - keep, keep);
    std::memcpy(buf_.data() + keep, data, size);
    len_ = keep + size;
  }
  const uint8_t* data() const { return buf_.data(); }
  size_t size() const { return len_; }

 private:
  std::array<uint8_t, Checkpoint::kGuardBytes> buf_;
  size_t len_ = 0;
};

// Counts [begin, end) of a txt/jsonl file with two threads: this one feeds the first half to
// `feed_first` (which feeds `counter` and `tail`) while a helper counts the second as a
// LineSegment, which the state at the boundary then settles. Both halves are read as ReadRange
// would read them. Without a thread to be had, the whole range is read here.
absl::Status ReadSplit(int fd, uint64_t begin, uint64_t end, const ReadOptions& options,
                       ChunkSink feed_first, StreamCounter* counter, TailKeeper* tail,
                       uint64_t* bytes_read) {
  // The second half starts on a window boundary of the file, so its windows cover whole page-cache
  // folios (they are aligned to their size) and no folio is faulted in twice across two windows.
  uint64_t middle = begin + (end - begin) / 2;
  const uint64_t window = std::max<uint64_t>(options.mmap_window, 1);
  if (middle - middle % window >= begin + 3) middle -= middle % window;
  LineSegment second;
  TailKeeper second_tail;
  uint64_t second_bytes = 0;
  absl::Status second_status;
  std::thread helper;
  try {
    helper = std::thread([&] {
      second_status = ReadRange(
          fd, middle, end, options,
          [&](const uint8_t* data, size_t n) {
            second.Feed(data, n);
            second_tail.Push(data, n);
          },
          &second_bytes);
    });
  } catch (const std::system_error&) {  // out of threads or memory for a stack
    return ReadRange(fd, begin, end, options, feed_first, bytes_read);
  }
  const absl::Status first_status = ReadRange(fd, begin, middle, options, feed_first, bytes_read);
  helper.join();
  RETURN_IF_ERROR(first_status);
  RETURN_IF_ERROR(second_status);
  counter->FeedSegment(second);
  tail->Push(second_tail.data(), second_tail.size());
  *bytes_read += second_bytes;
  return absl::OkStatus();
}

int64_t MtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

}  // namespace

absl::StatusOr<FileCount> CountFile(int fd, const struct stat& st, Format format,
                                    const std::string& source, const Checkpoint* previous,
                                    const ReadOptions& options) {
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const int64_t mtime_ns = MtimeNs(st);
  const bool same_file = previous != nullptr && previous->format == FormatName(format) &&
                         previous->source == source && previous->ino != 0 &&
                         previous->dev == static_cast<uint64_t>(st.st_dev) &&
                         previous->ino == static_cast<uint64_t>(st.st_ino);
  FileCount out;
  if (same_file && previous->size == size && previous->mtime_ns == mtime_ns) {
    out.count = previous->count;
    out.incremental = true;
    out.checkpoint = *previous;
    return out;
  }

  StreamCounter counter(format);
  TailKeeper tail;
  uint64_t start = 0;
  // Offsets below 3 could sit inside a byte order mark; such tiny files are simply recounted.
  if (same_file && IsLineFormat(format) && size > previous->offset && previous->offset >= 3 &&
      previous->offset == previous->size) {
    std::array<uint8_t, Checkpoint::kGuardBytes> guard;
    const uint32_t len = previous->guard_len;
    RETURN_IF_ERROR(ReadExactly(fd, previous->offset - len, guard.data(), len));
    out.bytes_read += len;
    if (GuardHash(guard.data(), len) == previous->guard_hash) {
      counter.Resume(*previous);
      tail.Push(guard.data(), len);
      start = previous->offset;
      out.incremental = true;
    }
  }

  ReadOptions read_options = options;
  // The coco scanner allocates while it runs, so it must not run under the SIGBUS guard.
  if (format == Format::kCoco) read_options.use_mmap = false;
  auto feed = [&](const uint8_t* data, size_t n) {
    counter.Feed(data, n);
    tail.Push(data, n);
  };
  // The first half must be long enough to settle a byte order mark (3 bytes).
  if ((format == Format::kTxt || format == Format::kJsonl) && size - start >= 6 &&
      SplitScan(read_options, size - start)) {
    RETURN_IF_ERROR(
        ReadSplit(fd, start, size, read_options, feed, &counter, &tail, &out.bytes_read));
  } else {
    RETURN_IF_ERROR(ReadRange(fd, start, size, read_options, feed, &out.bytes_read));
  }
  ASSIGN_OR_RETURN(out.count, counter.Finish());

  Checkpoint& cp = out.checkpoint;
  cp.format = std::string(FormatName(format));
  cp.source = source;
  cp.dev = static_cast<uint64_t>(st.st_dev);
  cp.ino = static_cast<uint64_t>(st.st_ino);
  cp.size = size;
  cp.mtime_ns = mtime_ns;
  cp.count = out.count;
  if (IsLineFormat(format)) {
    cp.offset = size;
    counter.SaveProgress(&cp);
    cp.guard_len = static_cast<uint32_t>(tail.size());
    cp.guard_hash = GuardHash(tail.data(), tail.size());
  }
  return out;
}

}  // namespace nereid::lc::dataset
