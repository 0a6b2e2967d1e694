#include "tests/common/net/tcp_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>
#include <utility>
#include <vector>

namespace nereid::testing {
namespace {

sockaddr_in Loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return addr;
}

// Writes all of buf (loopback sockets drain fast; the amounts here are small).
bool WriteAll(int fd, const char* buf, ssize_t n) {
  while (n > 0) {
    ssize_t written = ::send(fd, buf, static_cast<size_t>(n), MSG_NOSIGNAL);
    if (written <= 0) return false;
    buf += written;
    n -= written;
  }
  return true;
}

}  // namespace

FreezableProxy::FreezableProxy(int target_port) : target_port_(target_port) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr = Loopback(0);
  if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listen_fd_, 16) != 0) {
    throw std::runtime_error("proxy: cannot listen");
  }
  socklen_t len = sizeof(addr);
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { Loop(); });
}

FreezableProxy::~FreezableProxy() {
  stop_.store(true);
  thread_.join();
  ::close(listen_fd_);
}

void FreezableProxy::Loop() {
  // Pairs of (client fd, upstream fd).
  std::vector<std::pair<int, int>> pairs;
  char buffer[16384];
  while (!stop_.load()) {
    const bool frozen = frozen_.load();
    std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
    if (!frozen) {
      for (const auto& [a, b] : pairs) {
        fds.push_back({a, POLLIN, 0});
        fds.push_back({b, POLLIN, 0});
      }
    }
    if (::poll(fds.data(), fds.size(), 20) <= 0) continue;
    if (fds[0].revents & POLLIN) {
      int client = ::accept(listen_fd_, nullptr, nullptr);
      int upstream = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in target = Loopback(target_port_);
      if (client >= 0 && upstream >= 0 &&
          ::connect(upstream, reinterpret_cast<sockaddr*>(&target), sizeof(target)) == 0) {
        pairs.emplace_back(client, upstream);
      } else {
        if (client >= 0) ::close(client);
        if (upstream >= 0) ::close(upstream);
      }
      continue;  // the pair list changed; fds indexes are stale
    }
    std::vector<bool> dead(pairs.size(), false);
    for (std::size_t i = 1; i < fds.size(); ++i) {
      if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const std::size_t pair = (i - 1) / 2;
      if (dead[pair]) continue;
      const auto& [a, b] = pairs[pair];
      const int from = fds[i].fd;
      const int to = from == a ? b : a;
      ssize_t n = ::recv(from, buffer, sizeof(buffer), 0);
      if (n <= 0 || !WriteAll(to, buffer, n)) dead[pair] = true;
    }
    for (std::size_t p = pairs.size(); p-- > 0;) {
      if (!dead[p]) continue;
      ::close(pairs[p].first);
      ::close(pairs[p].second);
      pairs.erase(pairs.begin() + static_cast<std::ptrdiff_t>(p));
    }
  }
  for (const auto& [a, b] : pairs) {
    ::close(a);
    ::close(b);
  }
}

}  // namespace nereid::testing
