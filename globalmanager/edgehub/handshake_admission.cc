#include "globalmanager/edgehub/handshake_admission.h"

#include <algorithm>
#include <utility>

namespace nereid::gm {

std::optional<HandshakeAdmission::Decision> HandshakeAdmission::Queue(Connection connection) {
  queue_.push_back(std::move(connection));
  if (queue_.size() <= options_.max_waiting) return std::nullopt;
  Decision oldest{std::move(queue_.front()), Verdict::kCrowdedOut};
  queue_.pop_front();
  return oldest;
}

std::vector<HandshakeAdmission::Decision> HandshakeAdmission::Next(absl::Time now,
                                                                  const Probe& probe) {
  ForgetExpired(now);
  std::vector<Decision> decisions;
  while (!queue_.empty() && pending_.size() < options_.max_pending) {
    Connection connection = std::move(queue_.back());
    queue_.pop_back();
    const Peer peer = probe(connection.fd);
    const Verdict verdict = Judge(connection, now, peer);
    if (verdict == Verdict::kHandOver) {
      pending_[connection.peer] =
          now + (peer == Peer::kSent ? options_.pending_timeout : options_.silent_pending_timeout);
    }
    decisions.push_back(Decision{std::move(connection), verdict});
  }
  return decisions;
}

std::vector<HandshakeAdmission::Decision> HandshakeAdmission::Sweep(absl::Time now,
                                                                   const Probe& probe) {
  std::vector<Decision> refused;
  std::deque<Connection> kept;
  for (Connection& connection : queue_) {
    const Verdict verdict = Judge(connection, now, probe(connection.fd));
    if (verdict == Verdict::kHandOver) {
      kept.push_back(std::move(connection));
    } else {
      refused.push_back(Decision{std::move(connection), verdict});
    }
  }
  queue_ = std::move(kept);
  return refused;
}

HandshakeAdmission::Verdict HandshakeAdmission::Judge(const Connection& connection,
                                                     absl::Time now, Peer peer) const {
  if (peer == Peer::kGone) return Verdict::kPeerGone;
  if (now - connection.accepted > options_.max_wait) return Verdict::kWaitedTooLong;
  return Verdict::kHandOver;
}

absl::Time HandshakeAdmission::NextDeadline() const {
  if (queue_.empty() || pending_.empty()) return absl::InfiniteFuture();
  absl::Time earliest = absl::InfiniteFuture();
  for (const auto& [peer, until] : pending_) earliest = std::min(earliest, until);
  return earliest;
}

std::vector<HandshakeAdmission::Connection> HandshakeAdmission::TakeQueued() {
  std::vector<Connection> queued(std::make_move_iterator(queue_.begin()),
                                 std::make_move_iterator(queue_.end()));
  queue_.clear();
  return queued;
}

std::vector<int> HandshakeAdmission::QueuedFds() const {
  std::vector<int> fds;
  fds.reserve(queue_.size());
  for (const Connection& connection : queue_) fds.push_back(connection.fd);
  return fds;
}

void HandshakeAdmission::ForgetExpired(absl::Time now) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->second <= now) {
      pending_.erase(it++);
    } else {
      ++it;
    }
  }
}

}  // namespace nereid::gm
