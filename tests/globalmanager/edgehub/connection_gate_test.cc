#include "globalmanager/edgehub/connection_gate.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "globalmanager/edgehub/edge_hub.h"
#include "globalmanager/edgehub/server.h"
#include "tests/common/net/test_certs.h"
#include "tests/fakes/eventually.h"
#include "tests/globalmanager/edgehub/test_node.h"

namespace nereid::gm {
namespace {

using ::nereid::fakes::Eventually;
using ::nereid::testing::TestCerts;
using ::nereid::testing::TestNode;

// A plain TCP client of 127.0.0.1:port; closes on destruction.
class RawClient {
 public:
  explicit RawClient(int port) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    REQUIRE(fd_ >= 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  }
  ~RawClient() { Close(); }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  // gRPC's peer URI of this client as the server sees it.
  std::string PeerUri() const {
    sockaddr_storage local{};
    socklen_t length = sizeof(local);
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&local), &length) == 0);
    return "ipv4:" + PeerAddressKey(reinterpret_cast<sockaddr*>(&local));
  }
  // Whether the server closed the connection (EOF or reset) within `timeout`.
  bool ClosedByServer(absl::Duration timeout = absl::Seconds(10)) const {
    pollfd pfd{fd_, POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(absl::ToInt64Milliseconds(timeout))) != 1) return false;
    char byte;
    return ::recv(fd_, &byte, 1, 0) <= 0;
  }

 private:
  int fd_;
};

// The peers of the connections a gate handed over, in order; closes them at the end.
struct HandedOver {
  absl::Mutex mu;
  std::vector<int> fds ABSL_GUARDED_BY(mu);
  ~HandedOver() {
    absl::MutexLock lock(&mu);
    for (int fd : fds) ::close(fd);
  }
  ConnectionGate::HandOver Recorder() {
    return [this](int, int fd) {
      absl::MutexLock lock(&mu);
      fds.push_back(fd);
    };
  }
  std::size_t size() {
    absl::MutexLock lock(&mu);
    return fds.size();
  }
  int TcpUserTimeoutMs(std::size_t i) {
    absl::MutexLock lock(&mu);
    int value = -1;
    socklen_t length = sizeof(value);
    REQUIRE(::getsockopt(fds.at(i), IPPROTO_TCP, TCP_USER_TIMEOUT, &value, &length) == 0);
    return value;
  }
  std::string PeerUri(std::size_t i) {
    absl::MutexLock lock(&mu);
    sockaddr_storage peer{};
    socklen_t length = sizeof(peer);
    REQUIRE(::getpeername(fds.at(i), reinterpret_cast<sockaddr*>(&peer), &length) == 0);
    return "ipv4:" + PeerAddressKey(reinterpret_cast<sockaddr*>(&peer));
  }
};

double Value(prometheus::Counter& counter) { return counter.Value(); }

// A gate on a free loopback port, accepting, whose hand-overs `handed` records.
std::unique_ptr<ConnectionGate> StartGate(HandshakeAdmissionOptions options,
                                          absl::Duration tcp_user_timeout, HubMetrics& metrics,
                                          HandedOver& handed) {
  auto gate = ConnectionGate::Listen("127.0.0.1:0", options, tcp_user_timeout, &metrics);
  REQUIRE(gate.ok());
  (*gate)->Start(handed.Recorder());
  return *std::move(gate);
}

// The hub's mTLS server on a free loopback port, through a gate with `handshakes`.
std::unique_ptr<EdgeHubServer> StartServer(EdgeHub& hub, HandshakeAdmissionOptions handshakes) {
  EdgeHubServerOptions options;
  options.listen = "127.0.0.1:0";
  options.tls = TestCerts().ServerTls();
  options.handshakes = handshakes;
  auto server = EdgeHubServer::Start(&hub, options);
  REQUIRE(server.ok());
  return *std::move(server);
}

void ExpectHelloAnswered(TestNode& node, const std::string& name) {
  node.Hello(name);
  auto reply = node.Next();
  REQUIRE(reply.has_value());
  CHECK(reply->hello_reply().node_name() == name);
}

TEST_CASE("peer address keys agree between sockets and gRPC's peer URIs", "[edgehub]") {
  CHECK(PeerAddressKeyFromUri("ipv4:127.0.0.1:5000") == "127.0.0.1:5000");
  CHECK(PeerAddressKeyFromUri("ipv6:[::1]:5000") == "[::1]:5000");
  CHECK(PeerAddressKeyFromUri("ipv6:%5B::1%5D:5000") == "[::1]:5000");
  CHECK(PeerAddressKeyFromUri("ipv6:[0:0::1]:5000") == "[::1]:5000");
  CHECK(PeerAddressKeyFromUri("ipv6:[::ffff:10.0.0.7]:80") == "10.0.0.7:80");
  CHECK(PeerAddressKeyFromUri("ipv6:[fe80::1%eth0]:80") == "[fe80::1]:80");  // the scope goes
  CHECK(PeerAddressKeyFromUri("ipv6:%5Bfe80::1%25eth0%5D:80") == "[fe80::1]:80");
  CHECK(PeerAddressKeyFromUri("unix:/run/gm.sock").empty());
  CHECK(PeerAddressKeyFromUri("ipv4:not-an-address:1").empty());

  sockaddr_in6 mapped{};
  mapped.sin6_family = AF_INET6;
  mapped.sin6_port = htons(9000);
  REQUIRE(::inet_pton(AF_INET6, "::ffff:192.168.1.2", &mapped.sin6_addr) == 1);
  CHECK(PeerAddressKey(reinterpret_cast<sockaddr*>(&mapped)) == "192.168.1.2:9000");
}

TEST_CASE("the gate hands over one connection per slot, newest first, and refuses hung-up ones",
          "[edgehub]") {
  HubMetrics metrics(nullptr);
  HandedOver handed;  // outlives the gate's thread
  // These clients never speak: only the slot's own timeouts, long here, or a stream free it.
  auto gate = StartGate({.max_pending = 1,
                         .max_wait = absl::Seconds(60),
                         .pending_timeout = absl::Seconds(60),
                         .silent_pending_timeout = absl::Seconds(60)},
                        absl::Seconds(7), metrics, handed);

  RawClient first(gate->port());
  REQUIRE(Eventually([&] { return handed.size() == 1; }));
  CHECK(handed.PeerUri(0) == first.PeerUri());
  CHECK(handed.TcpUserTimeoutMs(0) == 7000);  // as gRPC's listener sets it: the keepalive timeout

  RawClient gone(gate->port());
  RawClient waiting(gate->port());
  const std::string waiting_uri = waiting.PeerUri();
  gone.Close();
  REQUIRE(Eventually([&] { return Value(metrics.connections_accepted()) == 3; }));
  CHECK(handed.size() == 1);  // the slot is taken until the first connection carries a stream

  gate->StreamOpened(first.PeerUri());
  REQUIRE(Eventually([&] { return handed.size() == 2; }));
  CHECK(handed.PeerUri(1) == waiting_uri);  // the newer of the two
  // The hung-up one leaves the line at a sweep (every second), without a slot.
  REQUIRE(Eventually([&] { return Value(metrics.connections_refused_peer_gone()) == 1; }));
  CHECK(metrics.connections_waiting().Value() == 0);
  CHECK(handed.size() == 2);

  RawClient queued_at_stop(gate->port());
  REQUIRE(Eventually([&] { return metrics.connections_waiting().Value() == 1; }));
  gate->Stop();
  CHECK(queued_at_stop.ClosedByServer());
}

TEST_CASE("a connection that waited past max_wait is closed unhandshaken", "[edgehub]") {
  HubMetrics metrics(nullptr);
  HandedOver handed;  // outlives the gate's thread
  auto gate = StartGate({.max_pending = 1,
                         .max_wait = absl::Seconds(1),
                         .pending_timeout = absl::Seconds(3),
                         .silent_pending_timeout = absl::Seconds(3)},
                        absl::ZeroDuration(), metrics, handed);

  RawClient first(gate->port());  // handed over; never opens a stream
  REQUIRE(Eventually([&] { return handed.size() == 1; }));
  RawClient late(gate->port());
  // A sweep (every second) finds it past max_wait before the first handshake's slot frees (3 s).
  CHECK(late.ClosedByServer(absl::Seconds(20)));
  CHECK(Value(metrics.connections_refused_waited()) == 1);
  CHECK(handed.size() == 1);
}

TEST_CASE("the gate refuses a listen address it cannot use", "[edgehub]") {
  HubMetrics metrics(nullptr);
  const absl::Duration none = absl::ZeroDuration();
  CHECK(ConnectionGate::Listen("127.0.0.1", {}, none, &metrics).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(ConnectionGate::Listen("127.0.0.1:0", {.max_pending = 0}, none, &metrics)
            .status()
            .code() == absl::StatusCode::kInvalidArgument);
  auto taken = ConnectionGate::Listen("127.0.0.1:0", {}, none, &metrics);
  REQUIRE(taken.ok());
  const std::string taken_address = "127.0.0.1:" + std::to_string((*taken)->port());
  auto again = ConnectionGate::Listen(taken_address, {}, none, &metrics);
  CHECK(again.status().code() == absl::StatusCode::kUnavailable);
  CHECK(std::string(again.status().message()).find("address in use") != std::string::npos);
}

TEST_CASE("through the gate, a node's mTLS stream frees the slot for the next node",
          "[edgehub]") {
  EdgeHub hub(EdgeHub::Options{});
  // One handshake at a time, and a slot never frees by timeout within the test: only the hub's
  // word that a stream arrived lets the second node in.
  std::unique_ptr<EdgeHubServer> server = StartServer(
      hub, {.max_pending = 1,
            .pending_timeout = absl::Minutes(10),
            .silent_pending_timeout = absl::Minutes(10)});

  TestNode a(server->port(), TestCerts(), "edge-a");
  ExpectHelloAnswered(a, "edge-a");
  TestNode b(server->port(), TestCerts(), "edge-b");
  ExpectHelloAnswered(b, "edge-b");
  CHECK(hub.metrics().handshakes_pending().Value() == 0);
  CHECK(Value(hub.metrics().connections_accepted()) == 2);
  server->Stop(absl::Seconds(1));
}

// Lowers this process's descriptor limit, for its lifetime, to the lowest free descriptor number:
// a new descriptor must be below the limit, so none can be opened (those open stay usable).
class NoSpareDescriptors {
 public:
  NoSpareDescriptors() {
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &saved_) == 0);
    const int lowest_free = ::dup(STDIN_FILENO);
    REQUIRE(lowest_free >= 0);
    ::close(lowest_free);
    rlimit lowered = saved_;
    lowered.rlim_cur = static_cast<rlim_t>(lowest_free);
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &lowered) == 0);
  }
  ~NoSpareDescriptors() { ::setrlimit(RLIMIT_NOFILE, &saved_); }

 private:
  rlimit saved_{};
};

// gRPC 1.51's own listener closes for good on the first accept4 error other than EAGAIN (out of
// descriptors in a reconnect storm): the port stays deaf. The gate pauses and goes on.
TEST_CASE("the edge port accepts again after the process ran out of descriptors", "[edgehub]") {
  EdgeHub hub(EdgeHub::Options{});
  std::unique_ptr<EdgeHubServer> server = StartServer(hub, {});
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(server->port()));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

  // The clients' sockets first; then no descriptor is left, and their connections wait in the
  // kernel's backlog for an accept4 that fails with EMFILE.
  std::vector<int> clients;
  for (int i = 0; i < 4; ++i) clients.push_back(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  {
    NoSpareDescriptors limit;
    for (int fd : clients) {
      REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
    }
    REQUIRE(Eventually([&] { return Value(hub.metrics().accept_failures()) > 0; }));
  }
  for (int fd : clients) ::close(fd);

  TestNode node(server->port(), TestCerts(), "edge-a");
  ExpectHelloAnswered(node, "edge-a");
  server->Stop(absl::Seconds(1));
}

}  // namespace
}  // namespace nereid::gm
