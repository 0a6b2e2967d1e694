#include "globalmanager/edgehub/connection_gate.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/log/log.h"
#include "common/net/host_port.h"
#include "common/strings/absl_compat.h"

namespace nereid::gm {
namespace {

// Accepted per listener before the queue is looked at again, so a flood cannot hold the gate in
// accept() while slots are free.
constexpr int kAcceptBatch = 1024;
// After running out of descriptors or memory, the listeners rest this long (the connections
// wait in the kernel's backlog meanwhile) instead of spinning on a readable listener. (gRPC 1.51's
// own listener closes for good on such an error: the edge port then goes deaf until a restart.)
constexpr absl::Duration kAcceptPause = absl::Milliseconds(100);
constexpr absl::Duration kAcceptWarningInterval = absl::Seconds(10);
// How often the whole line is checked for connections whose node hung up or that waited too long.
constexpr absl::Duration kSweepInterval = absl::Seconds(1);

std::string ErrnoText(int error) { return std::strerror(error); }

HandshakeAdmission::Peer ProbePeer(int fd) {
  pollfd pfd{fd, POLLIN | POLLRDHUP, 0};
  if (::poll(&pfd, 1, 0) <= 0) return HandshakeAdmission::Peer::kSilent;
  if ((pfd.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) return HandshakeAdmission::Peer::kGone;
  return (pfd.revents & POLLIN) != 0 ? HandshakeAdmission::Peer::kSent
                                     : HandshakeAdmission::Peer::kSilent;
}

// The kernel's cap on a listen backlog (what gRPC asks for), else glibc's SOMAXCONN.
int ListenBacklog() {
  std::ifstream file("/proc/sys/net/core/somaxconn");
  int value = 0;
  return file >> value && value > 0 ? value : SOMAXCONN;
}

bool IsUnspecified(const sockaddr_storage& address) {
  if (address.ss_family == AF_INET) {
    return reinterpret_cast<const sockaddr_in&>(address).sin_addr.s_addr == htonl(INADDR_ANY);
  }
  return IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6&>(address).sin6_addr);
}

void SetPort(sockaddr_storage& address, int port) {
  if (address.ss_family == AF_INET) {
    reinterpret_cast<sockaddr_in&>(address).sin_port = htons(static_cast<uint16_t>(port));
  } else {
    reinterpret_cast<sockaddr_in6&>(address).sin6_port = htons(static_cast<uint16_t>(port));
  }
}

int PortOf(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return 0;
  return address.ss_family == AF_INET
             ? ntohs(reinterpret_cast<sockaddr_in&>(address).sin_port)
             : ntohs(reinterpret_cast<sockaddr_in6&>(address).sin6_port);
}

// A non-blocking listening socket on `address`; an IPv6 one also takes IPv4 when `dual_stack`.
absl::StatusOr<UniqueFd> ListenOn(sockaddr_storage address, int port, bool dual_stack) {
  SetPort(address, port);
  UniqueFd socket_fd(::socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!socket_fd.valid()) {
    return absl::UnavailableError(absl::StrCat("socket: ", ErrnoText(errno)));
  }
  const int fd = socket_fd.get();
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (address.ss_family == AF_INET6) {
    const int v6only = dual_stack ? 0 : 1;
    ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only));
  }
  const socklen_t length =
      address.ss_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), length) != 0 ||
      ::listen(fd, ListenBacklog()) != 0) {
    const int error = errno;
    return absl::UnavailableError(absl::StrCat(
        error == EADDRINUSE ? "address in use" : "cannot listen", ": ", ErrnoText(error)));
  }
  return socket_fd;
}

// The addresses to listen on for `host`: what the resolver says, or, when that is the unspecified
// address in any spelling (0.0.0.0, ::, 0), the IPv6 wildcard (dual stack) then the IPv4 one.
absl::StatusOr<std::vector<sockaddr_storage>> ListenAddresses(const std::string& host,
                                                              bool* unspecified) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int error = ::getaddrinfo(host.c_str(), nullptr, &hints, &found); error != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot resolve \"", host, "\": ", ::gai_strerror(error)));
  }
  std::vector<sockaddr_storage> addresses;
  *unspecified = false;
  for (const addrinfo* entry = found; entry != nullptr; entry = entry->ai_next) {
    if (entry->ai_family != AF_INET && entry->ai_family != AF_INET6) continue;
    sockaddr_storage address{};
    std::memcpy(&address, entry->ai_addr, entry->ai_addrlen);
    *unspecified = *unspecified || IsUnspecified(address);
    const bool seen = std::any_of(addresses.begin(), addresses.end(), [&](const auto& other) {
      return PeerAddressKey(reinterpret_cast<const sockaddr*>(&other)) ==
             PeerAddressKey(reinterpret_cast<const sockaddr*>(&address));
    });
    if (!seen) addresses.push_back(address);
  }
  ::freeaddrinfo(found);
  if (*unspecified) {
    sockaddr_storage v6{};
    reinterpret_cast<sockaddr_in6&>(v6).sin6_family = AF_INET6;
    reinterpret_cast<sockaddr_in6&>(v6).sin6_addr = in6addr_any;
    sockaddr_storage v4{};
    reinterpret_cast<sockaddr_in&>(v4).sin_family = AF_INET;
    reinterpret_cast<sockaddr_in&>(v4).sin_addr.s_addr = htonl(INADDR_ANY);
    addresses = {v6, v4};
  }
  return addresses;
}

}  // namespace

std::string PeerAddressKey(const sockaddr* address) {
  char text[INET6_ADDRSTRLEN] = {};
  if (address->sa_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(address);
    ::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof(text));
    return absl::StrCat(text, ":", ntohs(v4->sin_port));
  }
  if (address->sa_family != AF_INET6) return "";
  const auto* v6 = reinterpret_cast<const sockaddr_in6*>(address);
  if (IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr)) {
    in_addr v4{};
    std::memcpy(&v4, v6->sin6_addr.s6_addr + 12, sizeof(v4));
    ::inet_ntop(AF_INET, &v4, text, sizeof(text));
    return absl::StrCat(text, ":", ntohs(v6->sin6_port));
  }
  ::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof(text));
  return absl::StrCat("[", text, "]:", ntohs(v6->sin6_port));
}

std::string PeerAddressKeyFromUri(std::string_view uri) {
  std::string_view rest;
  if (uri.substr(0, 5) == "ipv4:" || uri.substr(0, 5) == "ipv6:") {
    rest = uri.substr(5);
  } else {
    return "";
  }
  std::string text = absl::StrReplaceAll(
      ToAbsl(rest), {{"%5B", "["}, {"%5b", "["}, {"%5D", "]"}, {"%5d", "]"}});
  // A link-local peer's scope ("[fe80::1%eth0]", "%25eth0" escaped): the accepted socket's key
  // has none.
  if (const size_t scope = text.find('%'), close = text.find(']');
      scope != std::string::npos && close != std::string::npos && scope < close) {
    text.erase(scope, close - scope);
  }
  absl::StatusOr<net::HostPort> host_port = net::ParseHostPort(text);
  if (!host_port.ok()) return "";
  sockaddr_storage address{};
  auto& v4 = reinterpret_cast<sockaddr_in&>(address);
  auto& v6 = reinterpret_cast<sockaddr_in6&>(address);
  if (::inet_pton(AF_INET, host_port->host.c_str(), &v4.sin_addr) == 1) {
    v4.sin_family = AF_INET;
  } else if (::inet_pton(AF_INET6, host_port->host.c_str(), &v6.sin6_addr) == 1) {
    v6.sin6_family = AF_INET6;
  } else {
    return "";
  }
  SetPort(address, host_port->port);
  return PeerAddressKey(reinterpret_cast<const sockaddr*>(&address));
}

absl::StatusOr<std::unique_ptr<ConnectionGate>> ConnectionGate::Listen(
    const std::string& listen, HandshakeAdmissionOptions options, absl::Duration tcp_user_timeout,
    HubMetrics* metrics) {
  if (options.max_pending == 0) {
    return absl::InvalidArgumentError("edge connection gate: max_pending must be at least 1");
  }
  absl::StatusOr<net::HostPort> host_port = net::ParseHostPort(listen);
  if (!host_port.ok()) return host_port.status();
  bool unspecified = false;
  absl::StatusOr<std::vector<sockaddr_storage>> addresses =
      ListenAddresses(host_port->host, &unspecified);
  if (!addresses.ok()) return addresses.status();

  std::vector<UniqueFd> listeners;
  int port = host_port->port;
  absl::Status last_error =
      absl::UnavailableError(absl::StrCat("\"", listen, "\" names no address"));
  for (const sockaddr_storage& address : *addresses) {
    // The unspecified host: the dual-stack IPv6 socket covers IPv4 too; IPv4 alone where the
    // host has no IPv6.
    if (unspecified && !listeners.empty()) break;
    absl::StatusOr<UniqueFd> fd = ListenOn(address, port, /*dual_stack=*/unspecified);
    if (!fd.ok()) {
      last_error = fd.status();
      continue;
    }
    if (port == 0) port = PortOf(fd->get());  // the others take the same port
    listeners.push_back(*std::move(fd));
  }
  if (listeners.empty()) return last_error;
  if (!unspecified && listeners.size() < addresses->size()) {
    LOG(WARNING) << "edge hub: " << listen << " names " << addresses->size()
                 << " addresses, listening on " << listeners.size() << " (" << last_error.message()
                 << ")";
  }
  UniqueFd wake_fd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wake_fd.valid()) {
    return absl::ResourceExhaustedError(absl::StrCat("eventfd: ", ErrnoText(errno)));
  }
  return std::unique_ptr<ConnectionGate>(new ConnectionGate(
      std::move(listeners), port, std::move(wake_fd),
      static_cast<int>(absl::ToInt64Milliseconds(tcp_user_timeout)), options, metrics));
}

ConnectionGate::ConnectionGate(std::vector<UniqueFd> listeners, int port, UniqueFd wake_fd,
                               int tcp_user_timeout_ms, HandshakeAdmissionOptions options,
                               HubMetrics* metrics)
    : listeners_(std::move(listeners)),
      port_(port),
      wake_fd_(std::move(wake_fd)),
      tcp_user_timeout_ms_(tcp_user_timeout_ms),
      metrics_(metrics),
      admission_(options) {}

ConnectionGate::~ConnectionGate() { Stop(); }

void ConnectionGate::Start(HandOver hand_over) {
  hand_over_ = std::move(hand_over);
  thread_ = std::thread([this] { Run(); });
}

void ConnectionGate::StreamOpened(std::string_view peer) {
  const std::string key = PeerAddressKeyFromUri(peer);
  if (key.empty()) return;
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  const std::size_t before = admission_.pending();
  admission_.StreamOpened(key);
  metrics_->handshakes_pending().Set(static_cast<double>(admission_.pending()));
  if (admission_.pending() < before && admission_.queued() > 0) Wake();
}

void ConnectionGate::Stop() {
  if (stopped_) return;
  stopped_ = true;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    Wake();
  }
  if (thread_.joinable()) thread_.join();
  listeners_.clear();
  absl::MutexLock lock(&mu_);
  for (const HandshakeAdmission::Connection& waiting : admission_.TakeQueued()) {
    UniqueFd closed(waiting.fd);
  }
  metrics_->connections_waiting().Set(0);
  wake_fd_.Reset();
}

void ConnectionGate::Wake() {
  const uint64_t one = 1;
  // An eventfd write fails only when the counter is full, and then the gate is woken anyway.
  [[maybe_unused]] ssize_t written = ::write(wake_fd_.get(), &one, sizeof(one));
}

void ConnectionGate::Run() {
  std::vector<pollfd> polled;
  for (const UniqueFd& fd : listeners_) polled.push_back(pollfd{fd.get(), POLLIN, 0});
  polled.push_back(pollfd{wake_fd_.get(), POLLIN, 0});
  absl::Time paused_until = absl::InfinitePast();
  absl::Time next_sweep = absl::Now() + kSweepInterval;
  for (;;) {
    absl::Time deadline;
    bool waiting;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      deadline = admission_.NextDeadline();
      waiting = admission_.queued() > 0;
    }
    const absl::Time now = absl::Now();
    const bool paused = now < paused_until;
    if (paused) deadline = std::min(deadline, paused_until);
    if (waiting) deadline = std::min(deadline, next_sweep);
    int timeout_ms = -1;
    if (deadline != absl::InfiniteFuture()) {
      timeout_ms = static_cast<int>(std::clamp<int64_t>(
          absl::ToInt64Milliseconds(absl::Ceil(deadline - now, absl::Milliseconds(1))), 0,
          std::numeric_limits<int>::max()));
    }
    // While paused, new connections wait in the kernel's backlog.
    for (std::size_t i = 0; i < listeners_.size(); ++i) polled[i].events = paused ? 0 : POLLIN;
    if (::poll(polled.data(), polled.size(), timeout_ms) < 0 && errno != EINTR) {
      LOG(ERROR) << "edge hub: poll on the edge port failed: " << ErrnoText(errno);
      paused_until = absl::Now() + kAcceptPause;
    }
    if (polled.back().revents & POLLIN) {
      uint64_t count = 0;
      [[maybe_unused]] ssize_t read = ::read(wake_fd_.get(), &count, sizeof(count));
    }
    for (std::size_t i = 0; i < listeners_.size(); ++i) {
      if ((polled[i].revents & POLLIN) != 0 && !AcceptAll(listeners_[i].get())) {
        paused_until = absl::Now() + kAcceptPause;
      }
    }
    std::vector<HandshakeAdmission::Decision> decisions;
    if (absl::Now() >= next_sweep) {
      decisions = Sweep();
      next_sweep = absl::Now() + kSweepInterval;
    }
    {
      absl::MutexLock lock(&mu_);
      for (auto& next : admission_.Next(absl::Now(), ProbePeer)) {
        decisions.push_back(std::move(next));
      }
      metrics_->connections_waiting().Set(static_cast<double>(admission_.queued()));
      metrics_->handshakes_pending().Set(static_cast<double>(admission_.pending()));
    }
    CarryOut(decisions);
  }
}

bool ConnectionGate::AcceptAll(int listener) {
  for (int i = 0; i < kAcceptBatch; ++i) {
    sockaddr_storage address{};
    socklen_t length = sizeof(address);
    const int fd = ::accept4(listener, reinterpret_cast<sockaddr*>(&address), &length,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      const int error = errno;
      if (error == EINTR || error == ECONNABORTED) continue;
      if (error == EAGAIN || error == EWOULDBLOCK) return true;
      if (error == EMFILE || error == ENFILE || error == ENOBUFS || error == ENOMEM) {
        metrics_->accept_failures().Increment();
        if (absl::Now() - last_accept_warning_ >= kAcceptWarningInterval) {
          last_accept_warning_ = absl::Now();
          LOG(WARNING) << "edge hub: accept on the edge port failed (" << ErrnoText(error)
                       << "); pausing " << absl::FormatDuration(kAcceptPause)
                       << " each time (nereid_edgehub_accept_failures_total counts them)";
        }
        return false;
      }
      LOG(WARNING) << "edge hub: accept on the edge port failed: " << ErrnoText(error);
      return true;
    }
    // What gRPC's own listener sets on an accepted socket (tcp_server_utils_posix_common.cc).
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (tcp_user_timeout_ms_ > 0) {
      ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &tcp_user_timeout_ms_,
                   sizeof(tcp_user_timeout_ms_));
    }
    metrics_->connections_accepted().Increment();
    std::optional<HandshakeAdmission::Decision> crowded_out;
    {
      absl::MutexLock lock(&mu_);
      crowded_out = admission_.Queue(HandshakeAdmission::Connection{
          fd, listener, PeerAddressKey(reinterpret_cast<const sockaddr*>(&address)),
          absl::Now()});
    }
    if (crowded_out) CarryOut({*std::move(crowded_out)});
  }
  return true;
}

std::vector<HandshakeAdmission::Decision> ConnectionGate::Sweep() {
  // Up to max_waiting probes: made without the lock, which StreamOpened takes on gRPC's threads.
  // Only this thread changes the line, so it is the same line when the lock is taken again.
  std::vector<int> fds;
  {
    absl::MutexLock lock(&mu_);
    fds = admission_.QueuedFds();
  }
  absl::flat_hash_map<int, HandshakeAdmission::Peer> probed;
  for (int fd : fds) probed[fd] = ProbePeer(fd);
  absl::MutexLock lock(&mu_);
  return admission_.Sweep(absl::Now(), [&probed](int fd) { return probed.at(fd); });
}

void ConnectionGate::CarryOut(const std::vector<HandshakeAdmission::Decision>& decisions) {
  for (const HandshakeAdmission::Decision& decision : decisions) {
    const HandshakeAdmission::Connection& connection = decision.connection;
    if (decision.verdict == HandshakeAdmission::Verdict::kHandOver) {
      hand_over_(connection.listener_fd, connection.fd);
      continue;
    }
    UniqueFd refused(connection.fd);  // closed unhandshaken: its node redials with backoff
    switch (decision.verdict) {
      case HandshakeAdmission::Verdict::kHandOver:
        break;
      case HandshakeAdmission::Verdict::kPeerGone:
        metrics_->connections_refused_peer_gone().Increment();
        break;
      case HandshakeAdmission::Verdict::kWaitedTooLong:
        metrics_->connections_refused_waited().Increment();
        break;
      case HandshakeAdmission::Verdict::kCrowdedOut:
        metrics_->connections_refused_crowded().Increment();
        break;
    }
  }
}

}  // namespace nereid::gm
