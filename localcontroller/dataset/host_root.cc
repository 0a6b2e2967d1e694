#include "localcontroller/dataset/host_root.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "localcontroller/dataset/errors.h"

namespace nereid::lc::dataset {
namespace {

// Appends the components of `path` to `pending` in reverse, so pop_back() yields them in order.
void PushComponents(std::string_view path, std::vector<std::string>* pending) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > start) parts.emplace_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) pending->push_back(std::move(*it));
}

absl::StatusOr<std::string> ReadLink(int fd) {
  std::string target(256, '\0');
  while (true) {
    const ssize_t n = readlinkat(fd, "", target.data(), target.size());
    if (n < 0) return ErrnoError(errno, "readlink");
    if (static_cast<size_t>(n) < target.size()) {
      target.resize(static_cast<size_t>(n));
      return target;
    }
    if (target.size() >= 65536) return ErrnoError(ENAMETOOLONG, "readlink");
    target.resize(target.size() * 2);
  }
}

absl::StatusOr<UniqueFd> Dup(int fd) {
  const int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) return ErrnoError(errno, "dup");
  return UniqueFd(copy);
}

std::string HostPathOf(const std::vector<std::string>& names) {
  return absl::StrCat("/", absl::StrJoin(names, "/"));
}

}  // namespace

struct HostRoot::Walk {
  std::vector<UniqueFd> fds;  // fds[i] refers to names[0..i]
  std::vector<std::string> names;
  bool stop_at_missing = false;
  bool missing = false;
  std::string missing_name;
};

absl::StatusOr<HostRoot> HostRoot::Open(const std::string& dir, DataRoots data_roots) {
  const int fd = open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, absl::StrCat("host root ", dir));
  std::string normalized = dir;
  while (normalized.size() > 1 && normalized.back() == '/') normalized.pop_back();
  return HostRoot(UniqueFd(fd), std::move(normalized), std::move(data_roots));
}

std::string HostRoot::LocalPath(std::string_view host_path) const {
  if (dir_ == "/") return std::string(host_path);
  if (host_path == "/") return dir_;
  return absl::StrCat(dir_, ToAbsl(host_path));
}

absl::Status HostRoot::WalkPath(std::string_view path, Walk* walk) const {
  std::vector<std::string> pending;
  PushComponents(path, &pending);
  int links = 0;
  while (!pending.empty()) {
    std::string component = std::move(pending.back());
    pending.pop_back();
    if (component == ".") continue;
    if (component == "..") {
      if (walk->names.empty()) {
        return DatasetError(Reason::kPathEscapesHostRoot,
                            absl::StrCat("path ", ToAbsl(path), " leads above the host root ", dir_));
      }
      walk->names.pop_back();
      walk->fds.pop_back();
      continue;
    }
    const int dirfd = walk->fds.empty() ? fd_.get() : walk->fds.back().get();
    UniqueFd fd(openat(dirfd, component.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) {
      const int err = errno;
      if (err == ENOENT && walk->stop_at_missing) {
        walk->missing = true;
        walk->missing_name = component;
        return absl::OkStatus();
      }
      walk->names.push_back(component);
      return ErrnoError(err, absl::StrCat("path ", ToAbsl(path), " (at ", HostPathOf(walk->names),
                                          ")"));
    }
    struct stat st;
    if (fstat(fd.get(), &st) != 0) return ErrnoError(errno, absl::StrCat("stat ", ToAbsl(path)));
    if (S_ISLNK(st.st_mode)) {
      if (++links > kMaxSymlinks) {
        return DatasetError(Reason::kTooManySymlinks,
                            absl::StrCat("path ", ToAbsl(path), ": more than ", kMaxSymlinks,
                                         " symlinks (a loop?)"));
      }
      ASSIGN_OR_RETURN(const std::string target, ReadLink(fd.get()));
      if (target.empty()) {
        return DatasetError(Reason::kPathNotFound,
                            absl::StrCat("path ", ToAbsl(path), ": empty symlink"));
      }
      if (target[0] == '/') {  // a host path: start again from the host root
        walk->names.clear();
        walk->fds.clear();
      }
      PushComponents(target, &pending);
      continue;
    }
    if (!pending.empty() && !S_ISDIR(st.st_mode)) {
      walk->names.push_back(component);
      return DatasetError(Reason::kNotADirectory,
                          absl::StrCat("path ", ToAbsl(path), ": ", HostPathOf(walk->names),
                                       " is not a directory"));
    }
    walk->fds.push_back(std::move(fd));
    walk->names.push_back(std::move(component));
  }
  return absl::OkStatus();
}

absl::StatusOr<HostRoot::Entry> HostRoot::Resolve(std::string_view path) const {
  RETURN_IF_ERROR(data_roots_.Check(path));
  Walk walk;
  if (absl::Status s = WalkPath(path, &walk); !s.ok()) return s;
  Entry entry;
  entry.host_path = HostPathOf(walk.names);
  RETURN_IF_ERROR(data_roots_.Check(entry.host_path));
  if (walk.names.empty()) {  // the host root itself
    ASSIGN_OR_RETURN(entry.fd, Dup(fd_.get()));
  } else {
    entry.fd = std::move(walk.fds.back());
    walk.fds.pop_back();
    entry.name = walk.names.back();
    if (walk.fds.empty()) {
      ASSIGN_OR_RETURN(entry.parent, Dup(fd_.get()));
    } else {
      entry.parent = std::move(walk.fds.back());
    }
  }
  if (fstat(entry.fd.get(), &entry.st) != 0) {
    return ErrnoError(errno, absl::StrCat("stat ", entry.host_path));
  }
  return entry;
}

absl::StatusOr<UniqueFd> HostRoot::OpenFile(const Entry& entry) const {
  if (!S_ISREG(entry.st.st_mode)) {
    return DatasetError(Reason::kNotAFile,
                        absl::StrCat(entry.host_path,
                                     S_ISDIR(entry.st.st_mode) ? " is a directory"
                                                               : " is not a regular file",
                                     "; this format needs a file"));
  }
  // O_NONBLOCK: never hang on a FIFO swapped in after the walk.
  UniqueFd fd(openat(entry.parent.get(), entry.name.c_str(),
                     O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) return ErrnoError(errno, absl::StrCat("open ", entry.host_path));
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return ErrnoError(errno, absl::StrCat("stat ", entry.host_path));
  if (st.st_dev != entry.st.st_dev || st.st_ino != entry.st.st_ino) {
    return DatasetError(Reason::kFileChanged,
                        absl::StrCat(entry.host_path, " was replaced while it was being opened"));
  }
  return fd;
}

absl::StatusOr<UniqueFd> HostRoot::OpenDirectory(const Entry& entry) const {
  if (!S_ISDIR(entry.st.st_mode)) {
    return DatasetError(Reason::kNotADirectory,
                        absl::StrCat(entry.host_path, " is not a directory; this format needs one"));
  }
  UniqueFd fd(openat(entry.fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoError(errno, absl::StrCat("open ", entry.host_path));
  return fd;
}

absl::StatusOr<HostRoot::WatchTarget> HostRoot::WatchTargetFor(std::string_view path) const {
  RETURN_IF_ERROR(data_roots_.Check(path));
  Walk walk;
  walk.stop_at_missing = true;
  if (absl::Status s = WalkPath(path, &walk); !s.ok()) return s;
  WatchTarget target;
  if (walk.missing) {
    target.dir = LocalPath(HostPathOf(walk.names));
    target.name = walk.missing_name;
    return target;
  }
  struct stat st;
  const int fd = walk.fds.empty() ? fd_.get() : walk.fds.back().get();
  if (fstat(fd, &st) != 0) return ErrnoError(errno, "stat");
  if (S_ISDIR(st.st_mode) || walk.names.empty()) {
    target.dir = LocalPath(HostPathOf(walk.names));
    return target;
  }
  target.name = walk.names.back();
  walk.names.pop_back();
  target.dir = LocalPath(HostPathOf(walk.names));
  return target;
}

}  // namespace nereid::lc::dataset
