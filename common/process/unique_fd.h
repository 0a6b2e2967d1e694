#pragma once

// Owns a POSIX file descriptor and closes it exactly once: the one way product code closes a
// descriptor (scripts/check_conventions.sh rejects a raw close()).

#include <unistd.h>

#include <utility>

namespace nereid {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) Reset(std::exchange(other.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Gives up ownership: the caller closes the returned descriptor (or hands it on).
  int Release() { return std::exchange(fd_, -1); }
  // Closes now and returns close()'s result (0, or -1 with errno set), for a caller that must know
  // whether buffered writes reached the file.
  int Close() {
    if (fd_ < 0) return 0;
    return ::close(std::exchange(fd_, -1));
  }
  void Reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

}  // namespace nereid
