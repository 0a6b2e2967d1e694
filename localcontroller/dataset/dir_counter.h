#pragma once

// Counts the samples of a directory-format dataset by walking it (a full walk each scan):
//   dir       every regular file below the directory, hidden files included;
//   voc/xml   every regular file whose name ends in ".xml" (any case).
// Symlinks: a symlink to a regular file counts when it resolves inside the host root (resolved
// like any dataset path, see host_root.h); symlinks to directories are not descended (no cycles,
// no double counting) and symlinks that dangle or lead above the host root do not count (logged).
// A subdirectory that cannot be opened is an error (PermissionDenied), never a silent undercount;
// entries that vanish during the walk are skipped. Bind-mount cycles are cut by remembering
// visited (device, inode) pairs, and depth is capped.

#include <atomic>
#include <cstdint>

#include "absl/status/statusor.h"
#include "localcontroller/dataset/format.h"
#include "localcontroller/dataset/host_root.h"

namespace nereid::lc::dataset {

constexpr int kMaxDirectoryDepth = 256;

// `entry` is the resolved dataset directory; `cancel` may be null.
absl::StatusOr<uint64_t> CountDirectory(const HostRoot& root, const HostRoot::Entry& entry,
                                        Format format, const std::atomic<bool>* cancel);

}  // namespace nereid::lc::dataset
