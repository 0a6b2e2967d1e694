#pragma once

// Dataset paths are host paths. The LC container sees the host's root filesystem mounted at the
// host root (default /rootfs, as Sedna's DaemonSet mounts it), and every path is resolved inside
// it as if the host root were "/" (like chroot):
//   - an absolute symlink target is a host path, so it is resolved from the host root again;
//   - `..` never climbs above the host root: a path or symlink that tries is refused with
//     PathEscapesHostRoot (not clamped, so a mistake is visible in the Dataset's status).
// Resolution walks one component at a time with openat(O_PATH | O_NOFOLLOW) from directory fds, and
// reads symlinks itself (at most 40, like the kernel), so no step ever lets the kernel follow a
// link or `..` on our behalf; a rename racing with the walk cannot move us outside the root. The
// final open re-checks device and inode against what the walk found.
// With data roots (data_roots.h), a path outside them is refused with OutsideDataRoots before the
// walk, and so is one whose symlinks resolve outside them.

#include <sys/stat.h>

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/process/unique_fd.h"
#include "localcontroller/dataset/data_roots.h"

namespace nereid::lc::dataset {

class HostRoot {
 public:
  static constexpr int kMaxSymlinks = 40;

  // Opens the host root directory (symlinks in `dir` itself are trusted configuration); paths are
  // confined to `data_roots` within it.
  static absl::StatusOr<HostRoot> Open(const std::string& dir, DataRoots data_roots = {});

  struct Entry {
    UniqueFd fd;      // O_PATH fd of the resolved object
    UniqueFd parent;  // O_PATH fd of its directory (invalid for the host root itself)
    std::string name;       // last component (empty for the host root itself)
    std::string host_path;  // canonical, symlink-free host path ("/data/train.txt")
    struct stat st = {};
  };

  // Resolves `path` (absolute, or relative to the host root) to an existing object.
  absl::StatusOr<Entry> Resolve(std::string_view path) const;

  // Opens a resolved regular file for reading (NotAFile for anything else) / a resolved directory
  // for listing (NotADirectory for anything else).
  absl::StatusOr<UniqueFd> OpenFile(const Entry& entry) const;
  absl::StatusOr<UniqueFd> OpenDirectory(const Entry& entry) const;

  // Where a change to `path` shows up for inotify: the directory holding it (in the LC's own
  // filesystem view) and the name inside it. If part of the path does not exist yet, the deepest
  // existing directory and the next missing name, so the dataset is rescanned when it appears.
  // For an existing directory, the directory itself with an empty name.
  struct WatchTarget {
    std::string dir;
    std::string name;
    bool operator==(const WatchTarget&) const = default;
  };
  absl::StatusOr<WatchTarget> WatchTargetFor(std::string_view path) const;

  // The LC-local path of a canonical host path ("/rootfs" + "/data/x").
  std::string LocalPath(std::string_view host_path) const;
  const std::string& dir() const { return dir_; }

 private:
  HostRoot(UniqueFd fd, std::string dir, DataRoots data_roots)
      : fd_(std::move(fd)), dir_(std::move(dir)), data_roots_(std::move(data_roots)) {}

  struct Walk;
  absl::Status WalkPath(std::string_view path, Walk* walk) const;

  UniqueFd fd_;
  std::string dir_;
  DataRoots data_roots_;
};

}  // namespace nereid::lc::dataset
