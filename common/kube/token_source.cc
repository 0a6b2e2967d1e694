#include "common/kube/token_source.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "common/log/log.h"

namespace nereid::kube {

TokenSource::TokenSource(std::string static_token)
    : recheck_interval_(absl::InfiniteDuration()), clock_(nullptr), token_(std::move(static_token)) {}

TokenSource::TokenSource(std::string path, absl::Duration recheck_interval, Clock* clock,
                         std::string fallback)
    : path_(std::move(path)),
      recheck_interval_(recheck_interval),
      clock_(clock),
      token_(std::move(fallback)) {}

std::string TokenSource::Token() {
  absl::MutexLock lock(&mu_);
  if (!path_.empty()) {
    const absl::Time now = clock_->Now();
    if (now >= next_check_) {
      next_check_ = now + recheck_interval_;
      RefreshLocked();
    }
  }
  return token_;
}

void TokenSource::RefreshLocked() {
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) {
    if (!warned_) LOG(WARNING) << "token file " << path_ << " cannot be read; keeping last token";
    warned_ = true;
    return;
  }
  const FileStamp stamp{static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec,
                        static_cast<int64_t>(st.st_size), static_cast<uint64_t>(st.st_ino)};
  if (stamp == stamp_) return;
  std::ifstream in(path_, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  std::string token(absl::StripAsciiWhitespace(content.str()));
  if (!in || token.empty()) {
    // A rotation caught half-written (or an emptied file): keep the old token, look again soon.
    if (!warned_) LOG(WARNING) << "token file " << path_ << " is empty or unreadable; keeping last token";
    warned_ = true;
    return;
  }
  if (stamp_.mtime_ns >= 0) LOG(INFO) << "token file " << path_ << " changed; using the new token";
  token_ = std::move(token);
  stamp_ = stamp;
  warned_ = false;
}

}  // namespace nereid::kube
