#include "tests/support/fault_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <utility>

#include "absl/memory/memory.h"
#include "absl/strings/str_cat.h"

namespace nereid::testing {
namespace {

constexpr int kPollMillis = 20;        // how soon a switched fault applies
constexpr size_t kMaxQueued = 1 << 20;  // per direction; beyond it the proxy stops reading
constexpr size_t kChunk = 64 * 1024;

sockaddr_in Loopback(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

// Closes with RST instead of FIN, as a peer that vanished or a middlebox reset would.
void CloseWithReset(int fd) {
  if (fd < 0) return;
  linger option{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, sizeof(option));
  close(fd);
}

int ConnectLoopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in address = Loopback(port);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// One direction of a connection: bytes read from `from`, waiting to be written to `to`.
struct Direction {
  struct Chunk {
    absl::Time due;
    std::string bytes;
  };
  std::deque<Chunk> queue;
  size_t queued = 0;
  size_t written = 0;  // of queue.front()
  bool eof = false;    // `from` closed its sending side
  bool shut = false;   // the FIN was passed on
  double tokens = 0;
  absl::Time refilled = absl::Now();

  bool Due(absl::Time now) const { return !queue.empty() && queue.front().due <= now; }

  // The bytes the bandwidth limit lets through now (all of them when unlimited).
  size_t Allowance(int64_t bandwidth, absl::Time now) {
    if (bandwidth <= 0) return kChunk;
    tokens = std::min<double>(static_cast<double>(bandwidth),
                              tokens + absl::ToDoubleSeconds(now - refilled) * bandwidth);
    refilled = now;
    return static_cast<size_t>(std::max(0.0, tokens));
  }
};

}  // namespace

class FaultProxy::Connection {
 public:
  Connection(FaultProxy* proxy, int client_fd, int upstream_port)
      : proxy_(proxy), client_fd_(client_fd), upstream_port_(upstream_port) {
    thread_ = std::thread([this] { Run(); });
  }
  ~Connection() {
    stop_ = true;
    thread_.join();
  }
  void RequestReset() { reset_ = true; }
  bool done() const { return done_.load(); }

 private:
  void Run() {
    while (!stop_ && Step()) {
    }
    if (reset_ || !clean_) {
      CloseWithReset(client_fd_);
      CloseWithReset(server_fd_);
    } else {
      close(client_fd_);
      if (server_fd_ >= 0) close(server_fd_);
    }
    done_ = true;
  }

  // One poll round; false when the connection is over.
  bool Step() {
    if (reset_) return false;
    const Faults faults = proxy_->CurrentFaults();
    if (faults.blackhole) {
      // Nothing moves; the kernel keeps what was sent, as TCP would retransmit it later.
      pollfd idle{client_fd_, 0, 0};
      poll(&idle, 1, kPollMillis);
      return true;
    }
    if (server_fd_ < 0) {
      // Connected only once the link carries packets, so a blackholed dial reaches no one.
      server_fd_ = ConnectLoopback(upstream_port_);
      if (server_fd_ < 0) return false;
    }
    const absl::Time now = absl::Now();
    pollfd fds[2] = {{client_fd_, 0, 0}, {server_fd_, 0, 0}};
    auto want = [&](Direction& d, pollfd& from, pollfd& to, bool withheld) {
      if (!d.eof && d.queued < kMaxQueued) from.events |= POLLIN;
      // Not writable-polled while the bandwidth budget is spent: the poll timeout refills it.
      if (!withheld && d.Due(now) && d.Allowance(faults.bandwidth, now) > 0) {
        to.events |= POLLOUT;
      }
    };
    want(up_, fds[0], fds[1], false);
    want(down_, fds[1], fds[0], faults.half_open);
    int timeout = kPollMillis;
    for (Direction* d : {&up_, &down_}) {
      if (!d->queue.empty() && d->queue.front().due > now) {
        timeout = std::min<int>(
            timeout, static_cast<int>(absl::ToInt64Milliseconds(d->queue.front().due - now)) + 1);
      }
    }
    if (poll(fds, 2, timeout) < 0 && errno != EINTR) return false;
    if (!Move(up_, fds[0], fds[1], faults, false)) return false;
    if (!Move(down_, fds[1], fds[0], faults, faults.half_open)) return false;
    if (up_.shut && down_.shut) {
      clean_ = true;
      return false;
    }
    return true;
  }

  // Reads what `from` has and writes what is due to `to`; false on a socket error (the caller
  // resets both sides, as the peer's RST would propagate through a real network).
  bool Move(Direction& d, const pollfd& from, const pollfd& to, const Faults& faults,
            bool withheld) {
    const absl::Time now = absl::Now();
    if (!d.eof && (from.revents & (POLLIN | POLLHUP | POLLERR))) {
      char buffer[kChunk];
      const ssize_t n = recv(from.fd, buffer, sizeof(buffer), MSG_DONTWAIT);
      if (n > 0) {
        d.queue.push_back({now + faults.delay, std::string(buffer, static_cast<size_t>(n))});
        d.queued += static_cast<size_t>(n);
      } else if (n == 0) {
        d.eof = true;
      } else if (errno != EAGAIN && errno != EINTR) {
        return false;
      }
    }
    if (!withheld && (to.revents & POLLOUT) && d.Due(now)) {
      Direction::Chunk& chunk = d.queue.front();
      const size_t size = std::min({chunk.bytes.size() - d.written, kChunk,
                                    d.Allowance(faults.bandwidth, now)});
      if (size > 0) {
        const ssize_t n =
            send(to.fd, chunk.bytes.data() + d.written, size, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno != EAGAIN && errno != EINTR) return false;
        if (n > 0) {
          d.written += static_cast<size_t>(n);
          d.queued -= static_cast<size_t>(n);
          if (faults.bandwidth > 0) d.tokens -= static_cast<double>(n);
          if (d.written == chunk.bytes.size()) {
            d.queue.pop_front();
            d.written = 0;
          }
        }
      }
    }
    if (d.eof && d.queue.empty() && !d.shut) {
      shutdown(to.fd, SHUT_WR);
      d.shut = true;
    }
    return true;
  }

  FaultProxy* const proxy_;
  const int client_fd_;
  const int upstream_port_;
  int server_fd_ = -1;
  Direction up_;    // client → server
  Direction down_;  // server → client
  bool clean_ = false;
  std::atomic<bool> stop_{false};
  std::atomic<bool> reset_{false};
  std::atomic<bool> done_{false};
  std::thread thread_;
};

absl::StatusOr<std::unique_ptr<FaultProxy>> FaultProxy::Start(int upstream_port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  sockaddr_in address = Loopback(0);
  socklen_t length = sizeof(address);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      listen(fd, 128) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const int error = errno;
    close(fd);
    return absl::InternalError(absl::StrCat("fault proxy listen: ", std::strerror(error)));
  }
  return absl::WrapUnique(new FaultProxy(fd, ntohs(address.sin_port), upstream_port));
}

FaultProxy::FaultProxy(int listen_fd, int port, int upstream_port)
    : listen_fd_(listen_fd), port_(port), upstream_port_(upstream_port) {
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

FaultProxy::~FaultProxy() {
  stopping_ = true;
  acceptor_.join();
  std::vector<std::unique_ptr<Connection>> connections;
  {
    absl::MutexLock lock(&mu_);
    connections.swap(connections_);
  }
  for (auto& connection : connections) connection->RequestReset();
  connections.clear();  // joins
  close(listen_fd_);
}

void FaultProxy::AcceptLoop() {
  while (!stopping_) {
    pollfd listening{listen_fd_, POLLIN, 0};
    if (poll(&listening, 1, kPollMillis) <= 0) {
      absl::MutexLock lock(&mu_);
      Reap();
      continue;
    }
    const int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    ++accepted_;
    absl::MutexLock lock(&mu_);
    Reap();
    if (faults_.refuse) {
      CloseWithReset(client);
      continue;
    }
    connections_.push_back(std::make_unique<Connection>(this, client, upstream_port_));
  }
}

void FaultProxy::Reap() {
  std::erase_if(connections_, [](const std::unique_ptr<Connection>& c) { return c->done(); });
}

FaultProxy::Faults FaultProxy::CurrentFaults() const {
  absl::MutexLock lock(&mu_);
  return faults_;
}

void FaultProxy::SetUpstreamPort(int port) {
  absl::MutexLock lock(&mu_);
  upstream_port_ = port;
}

void FaultProxy::SetDelay(absl::Duration one_way) {
  absl::MutexLock lock(&mu_);
  faults_.delay = one_way;
}

void FaultProxy::SetBandwidth(int64_t bytes_per_second) {
  absl::MutexLock lock(&mu_);
  faults_.bandwidth = bytes_per_second;
}

void FaultProxy::SetBlackhole(bool on) {
  absl::MutexLock lock(&mu_);
  faults_.blackhole = on;
}

void FaultProxy::SetHalfOpen(bool on) {
  absl::MutexLock lock(&mu_);
  faults_.half_open = on;
}

void FaultProxy::SetRefuse(bool on) {
  absl::MutexLock lock(&mu_);
  faults_.refuse = on;
}

void FaultProxy::ResetAll() {
  absl::MutexLock lock(&mu_);
  for (auto& connection : connections_) connection->RequestReset();
}

int FaultProxy::open_connections() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(std::count_if(connections_.begin(), connections_.end(),
                                        [](const auto& c) { return !c->done(); }));
}

}  // namespace nereid::testing
