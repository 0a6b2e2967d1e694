#pragma once

// A raw TCP connection to a loopback port, for tests that play a misbehaving HTTP client: one that
// sends part of a request and waits (slowloris), half-closes, or goes silent. Owns its descriptor.

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace nereid::testing {

class LoopbackConnection {
 public:
  // Connects to 127.0.0.1:`port`; connected() says whether it worked.
  explicit LoopbackConnection(int port) : fd_(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ >= 0 && connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
      Close();
    }
  }
  LoopbackConnection(LoopbackConnection&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  LoopbackConnection& operator=(LoopbackConnection&&) = delete;
  LoopbackConnection(const LoopbackConnection&) = delete;
  ~LoopbackConnection() { Close(); }

  bool connected() const { return fd_ >= 0; }

  // Sends all of `bytes`; false if the peer is gone.
  bool Send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t sent = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (sent <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(sent));
    }
    return true;
  }

  bool HalfClose() { return shutdown(fd_, SHUT_WR) == 0; }

  struct Drained {
    std::string data;
    bool closed = false;  // the peer closed the connection (read returned 0 or an error)
  };
  // Reads what the peer sends until it closes the connection or `timeout` passes.
  Drained ReadUntilClosed(absl::Duration timeout) {
    Drained drained;
    const absl::Time deadline = absl::Now() + timeout;
    char buffer[4096];
    while (!drained.closed && absl::Now() < deadline) {
      pollfd poller{fd_, POLLIN, 0};
      if (poll(&poller, 1, 100) <= 0) continue;
      const ssize_t n = read(fd_, buffer, sizeof(buffer));
      if (n <= 0) {
        drained.closed = true;
      } else {
        drained.data.append(buffer, static_cast<size_t>(n));
      }
    }
    return drained;
  }

  // Reads once (up to `max` bytes, waiting at most `timeout`): the start of an answer.
  std::string ReadSome(size_t max, absl::Duration timeout) {
    pollfd poller{fd_, POLLIN, 0};
    if (poll(&poller, 1, static_cast<int>(absl::ToInt64Milliseconds(timeout))) <= 0) return "";
    std::string data(max, '\0');
    const ssize_t n = read(fd_, data.data(), max);
    data.resize(n > 0 ? static_cast<size_t>(n) : 0);
    return data;
  }

 private:
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

  int fd_;
};

}  // namespace nereid::testing
