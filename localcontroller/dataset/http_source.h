#pragma once

// Streams an http(s) dataset body into a sink (the sample counter), with a size cap, connect/read
// timeouts and an overall deadline. Nothing is written to disk: counting keeps up with any network,
// so there is no temp file to fill an edge box's SD card or to leak after a crash. A conditional GET
// (If-None-Match / If-Modified-Since from the last scan's validators) turns an unchanged remote file
// into a 304 and no transfer. Credentials in the url (user:pass@host) become basic auth and are
// never logged or put in an error message.

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/time/clock.h"

namespace nereid::lc::dataset {

struct HttpOptions {
  uint64_t max_bytes = uint64_t{4} << 30;  // DownloadTooLarge beyond this
  absl::Duration connect_timeout = absl::Seconds(10);
  absl::Duration read_timeout = absl::Seconds(30);    // no data for this long: Timeout
  absl::Duration total_timeout = absl::Minutes(10);   // the whole transfer: Timeout
  std::string ca_file;                                // https: CA bundle; empty = system default
};

struct HttpFetch {
  bool not_modified = false;  // 304: the validators still match, nothing was transferred
  uint64_t bytes = 0;         // body bytes delivered to the sink
  std::string etag;
  std::string last_modified;
};

// `url` must be http:// or https://. `etag`/`last_modified` may be empty.
absl::StatusOr<HttpFetch> FetchHttp(std::string_view url, const HttpOptions& options,
                                    const std::string& etag, const std::string& last_modified,
                                    Clock* clock, const std::atomic<bool>* cancel,
                                    absl::FunctionRef<void(const uint8_t*, size_t)> sink);

// The url with any user:password@ removed, for messages and logs.
std::string RedactUrl(std::string_view url);

}  // namespace nereid::lc::dataset
