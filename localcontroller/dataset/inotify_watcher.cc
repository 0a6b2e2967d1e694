#include "localcontroller/dataset/inotify_watcher.h"

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "localcontroller/dataset/errors.h"

namespace nereid::lc::dataset {
namespace {

constexpr uint32_t kMask = IN_CLOSE_WRITE | IN_MODIFY | IN_CREATE | IN_DELETE | IN_MOVED_FROM |
                           IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;

}  // namespace

absl::StatusOr<std::unique_ptr<InotifyWatcher>> InotifyWatcher::Create(OnChange on_change) {
  UniqueFd inotify(inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!inotify.valid()) {
    return absl::UnavailableError(absl::StrCat("inotify_init1: ", std::strerror(errno)));
  }
  UniqueFd wake(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wake.valid()) return absl::UnavailableError(absl::StrCat("eventfd: ", std::strerror(errno)));
  return std::unique_ptr<InotifyWatcher>(
      new InotifyWatcher(std::move(inotify), std::move(wake), std::move(on_change)));
}

InotifyWatcher::InotifyWatcher(UniqueFd inotify, UniqueFd wake, OnChange on_change)
    : inotify_(std::move(inotify)), wake_(std::move(wake)), on_change_(std::move(on_change)) {
  thread_ = std::thread([this] { Run(); });
}

InotifyWatcher::~InotifyWatcher() {
  const uint64_t one = 1;
  if (write(wake_.get(), &one, sizeof(one)) < 0) {
    LOG(ERROR) << "dataset watcher: cannot wake the watch thread: " << std::strerror(errno);
  }
  thread_.join();
}

size_t InotifyWatcher::watch_count() const {
  absl::MutexLock lock(&mu_);
  return by_wd_.size();
}

absl::Status InotifyWatcher::Watch(const std::string& key, const HostRoot::WatchTarget& target) {
  absl::MutexLock lock(&mu_);
  auto it = keys_.find(key);
  if (it != keys_.end() && it->second.target == target) return absl::OkStatus();
  UnwatchLocked(key);
  const int wd = inotify_add_watch(inotify_.get(), target.dir.c_str(), kMask);
  if (wd < 0) {
    const int err = errno;
    if (err == ENOSPC) {
      return absl::ResourceExhaustedError(
          absl::StrCat("inotify watch limit reached (fs.inotify.max_user_watches) for ", target.dir,
                       "; dataset ", key, " relies on the periodic rescan"));
    }
    return ErrnoError(err, absl::StrCat("inotify watch ", target.dir));
  }
  keys_[key] = KeyWatch{wd, target};
  by_wd_[wd].insert(key);
  return absl::OkStatus();
}

void InotifyWatcher::Unwatch(const std::string& key) {
  absl::MutexLock lock(&mu_);
  UnwatchLocked(key);
}

void InotifyWatcher::UnwatchLocked(const std::string& key) {
  auto it = keys_.find(key);
  if (it == keys_.end()) return;
  const int wd = it->second.wd;
  keys_.erase(it);
  auto wit = by_wd_.find(wd);
  if (wit == by_wd_.end()) return;
  wit->second.erase(key);
  if (wit->second.empty()) {
    by_wd_.erase(wit);
    inotify_rm_watch(inotify_.get(), wd);  // may fail if the kernel already dropped it: fine
  }
}

void InotifyWatcher::Run() {
  pthread_setname_np(pthread_self(), "dataset-watch");
  alignas(struct inotify_event) char buffer[64 * 1024];
  while (true) {
    pollfd fds[2] = {{inotify_.get(), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
    const int n = poll(fds, 2, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      LOG(ERROR) << "dataset watcher: poll: " << std::strerror(errno);
      return;
    }
    if (fds[1].revents != 0) return;
    while (true) {
      const ssize_t got = read(inotify_.get(), buffer, sizeof(buffer));
      if (got <= 0) break;  // EAGAIN: drained
      HandleEvents(buffer, static_cast<size_t>(got));
    }
  }
}

void InotifyWatcher::HandleEvents(const char* buffer, size_t size) {
  std::set<std::string> changed;
  {
    absl::MutexLock lock(&mu_);
    for (size_t pos = 0; pos + sizeof(inotify_event) <= size;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + pos);
      pos += sizeof(inotify_event) + event->len;
      if (event->mask & IN_Q_OVERFLOW) {
        for (const auto& [key, watch] : keys_) changed.insert(key);
        continue;
      }
      auto wit = by_wd_.find(event->wd);
      if (wit == by_wd_.end()) continue;
      const std::string name = event->len > 0 ? std::string(event->name) : std::string();
      const bool self = (event->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) != 0;
      for (const std::string& key : wit->second) {
        auto kit = keys_.find(key);
        if (kit == keys_.end()) continue;
        const std::string& wanted = kit->second.target.name;
        if (self || wanted.empty() || wanted == name) changed.insert(key);
      }
      if (event->mask & IN_IGNORED) {  // the kernel dropped the watch (directory gone)
        for (const std::string& key : wit->second) keys_.erase(key);
        by_wd_.erase(wit);
      }
    }
  }
  for (const std::string& key : changed) on_change_(key);
}

}  // namespace nereid::lc::dataset
