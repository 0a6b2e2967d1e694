#pragma once

// ChangeWatcher on Linux inotify. Files are watched through their directory, because datasets are
// often replaced by rename (write a temp file, rename over) and a watch on the old inode would go
// quiet; the directory sees IN_MOVED_TO/IN_CREATE for the name. Appends show up as IN_MODIFY /
// IN_CLOSE_WRITE. Directories shared by several datasets use one inotify watch. A queue overflow
// (IN_Q_OVERFLOW) reports every key; a watch the kernel drops (directory removed) reports its keys,
// whose rescan then picks a new target. Changes deeper than the watched directory (files in
// subdirectories of a dir/voc dataset) are left to the periodic rescan.
//
// One thread ("dataset-watch") blocks in poll() on the inotify fd and an eventfd used to stop it.

#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "localcontroller/dataset/change_watcher.h"
#include "common/process/unique_fd.h"

namespace nereid::lc::dataset {

class InotifyWatcher final : public ChangeWatcher {
 public:
  static absl::StatusOr<std::unique_ptr<InotifyWatcher>> Create(OnChange on_change);
  ~InotifyWatcher() override;

  absl::Status Watch(const std::string& key, const HostRoot::WatchTarget& target) override;
  void Unwatch(const std::string& key) override;

  // Number of inotify watches held (for tests and metrics).
  size_t watch_count() const;

 private:
  InotifyWatcher(UniqueFd inotify, UniqueFd wake, OnChange on_change);
  void Run();
  void HandleEvents(const char* buffer, size_t size);
  void UnwatchLocked(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  struct KeyWatch {
    int wd = -1;
    HostRoot::WatchTarget target;
  };

  const UniqueFd inotify_;
  const UniqueFd wake_;
  const OnChange on_change_;
  mutable absl::Mutex mu_;
  std::map<std::string, KeyWatch> keys_ ABSL_GUARDED_BY(mu_);
  std::map<int, std::set<std::string>> by_wd_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace nereid::lc::dataset
