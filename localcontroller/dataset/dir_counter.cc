#include "localcontroller/dataset/dir_counter.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "common/process/unique_fd.h"
#include "localcontroller/dataset/errors.h"

namespace nereid::lc::dataset {
namespace {

struct DirCloser {
  void operator()(DIR* dir) const { closedir(dir); }
};
using DirPtr = std::unique_ptr<DIR, DirCloser>;

struct Frame {
  UniqueFd fd;
  std::string host_path;
  std::vector<std::string> subdirs;
  size_t next = 0;
};

std::string Join(const std::string& dir, const std::string& name) {
  return dir == "/" ? absl::StrCat("/", name) : absl::StrCat(dir, "/", name);
}

bool Counts(Format format, const std::string& name) {
  return format == Format::kDir || absl::EndsWithIgnoreCase(name, ".xml");
}

// Lists one directory: counts its files and collects its subdirectories.
absl::Status ListDirectory(const HostRoot& root, Frame* frame, Format format, uint64_t* count) {
  UniqueFd fd(fcntl(frame->fd.get(), F_DUPFD_CLOEXEC, 0));
  if (!fd.valid()) return ErrnoError(errno, absl::StrCat("list ", frame->host_path));
  DirPtr dir(fdopendir(fd.get()));
  if (!dir) return ErrnoError(errno, absl::StrCat("list ", frame->host_path));
  fd.Release();  // the DIR owns it now
  while (true) {
    errno = 0;
    const dirent* e = readdir(dir.get());
    if (e == nullptr) {
      if (errno != 0) return ErrnoError(errno, absl::StrCat("list ", frame->host_path));
      break;
    }
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    unsigned char type = e->d_type;
    if (type == DT_UNKNOWN) {
      struct stat st;
      if (fstatat(frame->fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) continue;  // removed meanwhile
        return ErrnoError(errno, absl::StrCat("stat ", Join(frame->host_path, name)));
      }
      type = S_ISREG(st.st_mode) ? DT_REG : S_ISDIR(st.st_mode) ? DT_DIR
                                          : S_ISLNK(st.st_mode) ? DT_LNK
                                                                : DT_UNKNOWN;
    }
    if (type == DT_DIR) {
      frame->subdirs.push_back(name);
    } else if (type == DT_REG) {
      if (Counts(format, name)) ++*count;
    } else if (type == DT_LNK && Counts(format, name)) {
      const std::string path = Join(frame->host_path, name);
      absl::StatusOr<HostRoot::Entry> target = root.Resolve(path);
      if (target.ok()) {
        if (S_ISREG(target->st.st_mode)) ++*count;
      } else {
        LOG(WARNING) << "dataset dir " << frame->host_path << ": symlink " << name
                     << " not counted: " << target.status().message();
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<uint64_t> CountDirectory(const HostRoot& root, const HostRoot::Entry& entry,
                                        Format format, const std::atomic<bool>* cancel) {
  absl::StatusOr<UniqueFd> top = root.OpenDirectory(entry);
  if (!top.ok()) return top.status();
  uint64_t count = 0;
  std::set<std::pair<dev_t, ino_t>> visited = {{entry.st.st_dev, entry.st.st_ino}};
  std::vector<Frame> stack;
  stack.push_back(Frame{std::move(*top), entry.host_path, {}, 0});
  if (absl::Status s = ListDirectory(root, &stack.back(), format, &count); !s.ok()) return s;
  while (!stack.empty()) {
    if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
      return DatasetError(Reason::kCancelled, "scan cancelled");
    }
    Frame& frame = stack.back();
    if (frame.next == frame.subdirs.size()) {
      stack.pop_back();
      continue;
    }
    const std::string& name = frame.subdirs[frame.next++];
    const std::string path = Join(frame.host_path, name);
    UniqueFd fd(openat(frame.fd.get(), name.c_str(),
                       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) {
      // Gone, or swapped for a symlink/file since it was listed: not part of the dataset now.
      if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP) continue;
      return ErrnoError(errno, absl::StrCat("open directory ", path));
    }
    struct stat st;
    if (fstat(fd.get(), &st) != 0) return ErrnoError(errno, absl::StrCat("stat ", path));
    if (!visited.insert({st.st_dev, st.st_ino}).second) continue;  // a bind-mount cycle
    if (static_cast<int>(stack.size()) >= kMaxDirectoryDepth) {
      return DatasetError(Reason::kMalformed,
                          absl::StrCat(path, ": directories nested deeper than ",
                                       kMaxDirectoryDepth));
    }
    stack.push_back(Frame{std::move(fd), path, {}, 0});
    if (absl::Status s = ListDirectory(root, &stack.back(), format, &count); !s.ok()) return s;
  }
  return count;
}

}  // namespace nereid::lc::dataset
