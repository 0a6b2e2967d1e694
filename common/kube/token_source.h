#pragma once

// The bearer token for each request. A token file (the service account's projected token,
// kubeconfig tokenFile) rotates underneath a running process, so it is re-read whenever its
// modification time, size or inode changes; the file is stat'ed at most once per
// `recheck_interval` on the injected Clock (client-go re-reads at most once a minute).

#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/time/clock.h"

namespace nereid::kube {

class TokenSource {
 public:
  // A fixed token ("" means no bearer auth).
  explicit TokenSource(std::string static_token);
  // A token file; `fallback` is used until the file has been read successfully once. An empty
  // `path` makes this the fixed token `fallback`.
  TokenSource(std::string path, absl::Duration recheck_interval, Clock* clock,
              std::string fallback = "");

  TokenSource(const TokenSource&) = delete;
  TokenSource& operator=(const TokenSource&) = delete;

  // The current token. When a re-read fails the last good token is kept (and a warning logged,
  // never the token itself).
  std::string Token();

 private:
  struct FileStamp {
    int64_t mtime_ns = -1;
    int64_t size = -1;
    uint64_t inode = 0;
    friend bool operator==(const FileStamp&, const FileStamp&) = default;
  };

  void RefreshLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string path_;
  const absl::Duration recheck_interval_;
  Clock* const clock_;
  absl::Mutex mu_;
  std::string token_ ABSL_GUARDED_BY(mu_);
  FileStamp stamp_ ABSL_GUARDED_BY(mu_);
  absl::Time next_check_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool warned_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace nereid::kube
