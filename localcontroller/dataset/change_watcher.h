#pragma once

// Tells the dataset monitor which datasets changed on disk, so they are rescanned right away
// instead of at the next periodic scan. An interface so tests and other platforms can plug in
// their own; InotifyWatcher is the Linux implementation.

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "localcontroller/dataset/host_root.h"

namespace nereid::lc::dataset {

class ChangeWatcher {
 public:
  // Called with a dataset key when something it watches changed. Called from the watcher's own
  // thread, never while the watcher holds a lock; must not block.
  using OnChange = std::function<void(const std::string& key)>;

  virtual ~ChangeWatcher() = default;

  // Watches `target.dir` for changes of the entry `target.name` (of any entry, and of the
  // directory itself, when the name is empty) on behalf of `key`, replacing the key's previous
  // target.
  virtual absl::Status Watch(const std::string& key, const HostRoot::WatchTarget& target) = 0;
  virtual void Unwatch(const std::string& key) = 0;
};

}  // namespace nereid::lc::dataset
