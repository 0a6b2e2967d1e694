#pragma once

// The sample count the LC reports for a Dataset (spec.url, spec.format): the entry point that ties
// url handling, host-root confinement, the per-format counters and incremental checkpoints
// together. Stateless and thread-compatible: the caller keeps the checkpoint between scans.
//
// Urls:
//   /abs/path, rel/path, file:///abs/path   a host path under the host root (see host_root.h)
//   http://..., https://...                 streamed and counted (file formats only)
//   s3://bucket/key                         through CounterOptions::s3 with the Dataset's
//                                           credential (s3_source.h); Unsupported without a client
//   any other scheme                        Unsupported

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/time/clock.h"
#include "localcontroller/dataset/checkpoint.h"
#include "localcontroller/dataset/file_reader.h"
#include "localcontroller/dataset/format.h"
#include "localcontroller/dataset/host_root.h"
#include "localcontroller/dataset/http_source.h"
#include "localcontroller/s3/s3_client.h"

namespace nereid::lc::dataset {

struct CounterOptions {
  std::string host_root = "/rootfs";
  DataRoots data_roots;  // host paths must lie in one (data_roots.h); none: the whole host root
  ReadOptions read;
  HttpOptions http;
  Clock* clock = Clock::Real();
  std::shared_ptr<const s3::S3Client> s3;  // for s3:// urls; null: they are Unsupported
};

struct CountRequest {
  std::string url;
  std::string format;
  const Checkpoint* previous = nullptr;     // the last scan's checkpoint, if any
  const std::atomic<bool>* cancel = nullptr;
  const s3::Credential* s3_credential = nullptr;  // the Dataset's, for an s3:// url
};

struct CountResult {
  uint64_t count = 0;
  uint64_t bytes_read = 0;   // bytes read from the file or network for this scan
  bool incremental = false;  // only new bytes (or none) were read thanks to the checkpoint
  std::string source;        // canonical host path, or the redacted url
  Checkpoint checkpoint;     // hand back as `previous` next time
};

enum class UrlKind { kLocal, kHttp, kS3, kUnsupported };
// Classifies a dataset url; for kLocal, `*path` gets the host path.
UrlKind ClassifyUrl(std::string_view url, std::string* path);

class SampleCounter {
 public:
  explicit SampleCounter(CounterOptions options) : options_(std::move(options)) {}

  absl::StatusOr<CountResult> Count(const CountRequest& request) const;

  // Where inotify should look for changes of a local dataset url (see HostRoot::WatchTargetFor);
  // an error for http/s3 urls (nothing to watch).
  absl::StatusOr<HostRoot::WatchTarget> WatchTargetFor(std::string_view url) const;

  const CounterOptions& options() const { return options_; }

 private:
  absl::StatusOr<CountResult> CountLocal(const std::string& path, Format format,
                                         const CountRequest& request) const;
  absl::StatusOr<CountResult> CountHttp(const std::string& url, Format format,
                                        const CountRequest& request) const;

  CounterOptions options_;
};

}  // namespace nereid::lc::dataset
