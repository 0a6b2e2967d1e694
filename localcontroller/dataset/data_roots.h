#pragma once

// The host directories the LC may use (its data roots): dataset and model urls, IL/LL outputDirs
// and the hot-update directory are host paths, and each must lie inside one of them. The
// DaemonSet mounts only these directories under the host root, so the LC cannot read the rest of
// the node (the kubelet's credentials, other pods' Secrets); this check turns a path outside them
// into a clear error (OutsideDataRoots) instead of "no such file". No data roots (the default of
// the binary, and the whole-root opt-in) means the whole host root.
//
// The check is lexical (`.` and `..` folded, `..` stopping at "/"); HostRoot applies it to the path
// asked for and again to the symlink-free path it resolved, so a link cannot lead out either.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace nereid::lc::dataset {

class DataRoots {
 public:
  DataRoots() = default;  // everything under the host root
  // Absolute host paths; each is normalized ("/data/" == "/data"); "/" means everything.
  explicit DataRoots(const std::vector<std::string>& roots);

  // OK when `host_path` (absolute, or relative to "/") lies in a data root; OutsideDataRoots
  // (errors.h) naming the roots otherwise.
  absl::Status Check(std::string_view host_path) const;

  bool everything() const { return roots_.empty(); }
  const std::vector<std::string>& roots() const { return roots_; }

 private:
  std::vector<std::string> roots_;  // normalized, without "/"
};

// `path` with `.`, `..` and repeated slashes folded, always absolute ("a/../b" -> "/b").
std::string NormalizeHostPath(std::string_view path);

}  // namespace nereid::lc::dataset
