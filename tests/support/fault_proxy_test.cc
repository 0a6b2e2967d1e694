#include "tests/support/fault_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <string>
#include <thread>
#include <vector>

namespace nereid::testing {
namespace {

sockaddr_in Loopback(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

// A loopback echo server: every connection gets back what it sends, until it closes.
class EchoServer {
 public:
  EchoServer() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address = Loopback(0);
    socklen_t length = sizeof(address);
    REQUIRE(bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
    REQUIRE(listen(fd_, 16) == 0);
    REQUIRE(getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) == 0);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~EchoServer() {
    stop_ = true;
    thread_.join();
    for (std::thread& t : echoes_) t.join();
    close(fd_);
  }
  int port() const { return port_; }
  int accepted() const { return accepted_.load(); }

 private:
  void Serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      const int client = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      ++accepted_;
      echoes_.emplace_back([this, client] {
        char buffer[4096];
        while (!stop_) {
          pollfd c{client, POLLIN, 0};
          if (poll(&c, 1, 20) <= 0) continue;
          const ssize_t n = recv(client, buffer, sizeof(buffer), 0);
          if (n <= 0) break;
          if (send(client, buffer, static_cast<size_t>(n), MSG_NOSIGNAL) != n) break;
        }
        close(client);
      });
    }
  }

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::thread thread_;
  std::vector<std::thread> echoes_;
};

int Dial(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address = Loopback(port);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  return fd;
}

// Reads until `size` bytes arrived, the peer closed or failed, or `within` passed. `error` gets
// the errno of a failed read (0 otherwise).
std::string ReadFor(int fd, size_t size, absl::Duration within, int* error = nullptr) {
  std::string out;
  const absl::Time deadline = absl::Now() + within;
  if (error != nullptr) *error = 0;
  while (out.size() < size && absl::Now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 10) <= 0) continue;
    char buffer[65536];
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n < 0 && error != nullptr) *error = errno;
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

void SendAll(int fd, const std::string& bytes) {
  REQUIRE(send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size()));
}

struct Fixture {
  EchoServer echo;
  std::unique_ptr<FaultProxy> proxy = *FaultProxy::Start(echo.port());
};

TEST_CASE("fault proxy forwards both ways when no fault is set", "[fault_proxy]") {
  Fixture f;
  const int fd = Dial(f.proxy->port());
  SendAll(fd, "hello");
  CHECK(ReadFor(fd, 5, absl::Seconds(5)) == "hello");
  close(fd);
  CHECK(f.proxy->connections_accepted() == 1);
}

TEST_CASE("fault proxy delays each chunk one way", "[fault_proxy]") {
  Fixture f;
  f.proxy->SetDelay(absl::Milliseconds(150));
  const int fd = Dial(f.proxy->port());
  const absl::Time sent = absl::Now();
  SendAll(fd, "ping");
  CHECK(ReadFor(fd, 4, absl::Seconds(5)) == "ping");
  CHECK(absl::Now() - sent >= absl::Milliseconds(300));  // there and back
  close(fd);
}

TEST_CASE("a blackholed link moves nothing and loses nothing when restored", "[fault_proxy]") {
  Fixture f;
  const int open_before = Dial(f.proxy->port());
  SendAll(open_before, "a");
  REQUIRE(ReadFor(open_before, 1, absl::Seconds(5)) == "a");

  f.proxy->SetBlackhole(true);
  SendAll(open_before, "bc");
  CHECK(ReadFor(open_before, 2, absl::Milliseconds(300)).empty());
  const int dialled_during = Dial(f.proxy->port());  // accepted, yet upstream never sees it
  SendAll(dialled_during, "d");
  CHECK(ReadFor(dialled_during, 1, absl::Milliseconds(200)).empty());
  CHECK(f.echo.accepted() == 1);

  f.proxy->SetBlackhole(false);
  CHECK(ReadFor(open_before, 2, absl::Seconds(5)) == "bc");
  CHECK(ReadFor(dialled_during, 1, absl::Seconds(5)) == "d");
  CHECK(f.echo.accepted() == 2);
  close(open_before);
  close(dialled_during);
}

TEST_CASE("a half-open link carries requests but withholds replies", "[fault_proxy]") {
  Fixture f;
  const int fd = Dial(f.proxy->port());
  f.proxy->SetHalfOpen(true);
  SendAll(fd, "xyz");
  CHECK(ReadFor(fd, 3, absl::Milliseconds(300)).empty());
  f.proxy->SetHalfOpen(false);
  CHECK(ReadFor(fd, 3, absl::Seconds(5)) == "xyz");  // the echo did happen: the reply was held
  close(fd);
}

TEST_CASE("reset closes open connections with RST; refuse resets new ones", "[fault_proxy]") {
  Fixture f;
  const int fd = Dial(f.proxy->port());
  SendAll(fd, "1");
  REQUIRE(ReadFor(fd, 1, absl::Seconds(5)) == "1");
  f.proxy->ResetAll();
  int error = 0;
  CHECK(ReadFor(fd, 1, absl::Seconds(5), &error).empty());
  CHECK(error == ECONNRESET);
  close(fd);

  f.proxy->SetRefuse(true);
  const int refused = Dial(f.proxy->port());  // the kernel completes the handshake first
  CHECK(ReadFor(refused, 1, absl::Seconds(5), &error).empty());
  CHECK(error == ECONNRESET);
  close(refused);
  CHECK(f.echo.accepted() == 1);
}

TEST_CASE("bandwidth limits each direction to bytes per second", "[fault_proxy]") {
  Fixture f;
  f.proxy->SetBandwidth(100 * 1024);
  const int fd = Dial(f.proxy->port());
  const std::string payload(50 * 1024, 'b');
  const absl::Time sent = absl::Now();
  SendAll(fd, payload);
  CHECK(ReadFor(fd, payload.size(), absl::Seconds(10)) == payload);
  // 50 KiB at 100 KiB/s from an empty budget, each way: at least ~0.5 s.
  CHECK(absl::Now() - sent >= absl::Milliseconds(450));
  close(fd);
}

TEST_CASE("a new upstream port applies to new connections", "[fault_proxy]") {
  Fixture f;
  EchoServer other;
  f.proxy->SetUpstreamPort(other.port());
  const int fd = Dial(f.proxy->port());
  SendAll(fd, "n");
  CHECK(ReadFor(fd, 1, absl::Seconds(5)) == "n");
  CHECK(other.accepted() == 1);
  CHECK(f.echo.accepted() == 0);
  close(fd);
}

}  // namespace
}  // namespace nereid::testing
