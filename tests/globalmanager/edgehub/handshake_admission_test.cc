#include "globalmanager/edgehub/handshake_admission.h"

#include <catch2/catch.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace nereid::gm {
namespace {

using Verdict = HandshakeAdmission::Verdict;
using Peer = HandshakeAdmission::Peer;

const absl::Time kStart = absl::FromUnixSeconds(1'000'000);

HandshakeAdmission::Connection At(int fd, absl::Time accepted) {
  return {fd, /*listener_fd=*/3, "10.0.0.1:" + std::to_string(40000 + fd), accepted};
}

// fd -> verdict of what Next() decided, in order.
// Every connection has sent its first bytes, except the `silent` ones; the `gone` ones hung up.
std::vector<std::pair<int, Verdict>> Decide(HandshakeAdmission& admission, absl::Time now,
                                            const std::set<int>& gone = {},
                                            const std::set<int>& silent = {}) {
  std::vector<std::pair<int, Verdict>> out;
  auto probe = [&](int fd) {
    return gone.count(fd) > 0 ? Peer::kGone : silent.count(fd) > 0 ? Peer::kSilent : Peer::kSent;
  };
  for (const auto& decision : admission.Next(now, probe)) {
    out.emplace_back(decision.connection.fd, decision.verdict);
  }
  return out;
}

using Decisions = std::vector<std::pair<int, Verdict>>;

TEST_CASE("at most max_pending connections handshake, newest first; a stream frees a slot",
          "[edgehub]") {
  HandshakeAdmission admission({.max_pending = 2});
  for (int fd = 10; fd < 14; ++fd) CHECK_FALSE(admission.Queue(At(fd, kStart)).has_value());

  CHECK(Decide(admission, kStart) ==
        Decisions{{13, Verdict::kHandOver}, {12, Verdict::kHandOver}});
  CHECK(admission.pending() == 2);
  CHECK(admission.queued() == 2);
  CHECK(Decide(admission, kStart).empty());

  admission.StreamOpened("10.0.0.1:40012");
  CHECK(Decide(admission, kStart + absl::Seconds(1)) == Decisions{{11, Verdict::kHandOver}});
  admission.StreamOpened("10.0.0.1:40099");  // not pending: changes nothing
  CHECK(Decide(admission, kStart + absl::Seconds(1)).empty());
  CHECK(admission.queued() == 1);
}

TEST_CASE("a handshake that opens no stream stops counting after pending_timeout", "[edgehub]") {
  HandshakeAdmission admission(
      {.max_pending = 1, .max_wait = absl::Seconds(30), .pending_timeout = absl::Seconds(5)});
  admission.Queue(At(10, kStart));
  admission.Queue(At(11, kStart));
  CHECK(Decide(admission, kStart) == Decisions{{11, Verdict::kHandOver}});
  CHECK(admission.NextDeadline() == kStart + absl::Seconds(5));

  CHECK(Decide(admission, kStart + absl::Seconds(4)).empty());
  CHECK(Decide(admission, kStart + absl::Seconds(5)) == Decisions{{10, Verdict::kHandOver}});
  CHECK(admission.NextDeadline() == absl::InfiniteFuture());  // nothing waits
}

TEST_CASE("a connection that had sent nothing holds its slot only briefly", "[edgehub]") {
  HandshakeAdmission admission({.max_pending = 1,
                                .pending_timeout = absl::Seconds(5),
                                .silent_pending_timeout = absl::Milliseconds(500)});
  admission.Queue(At(10, kStart));
  admission.Queue(At(11, kStart));
  CHECK(Decide(admission, kStart, {}, /*silent=*/{11}) == Decisions{{11, Verdict::kHandOver}});
  CHECK(admission.NextDeadline() == kStart + absl::Milliseconds(500));
  CHECK(Decide(admission, kStart + absl::Milliseconds(500)) ==
        Decisions{{10, Verdict::kHandOver}});
  CHECK(admission.pending() == 1);
}

TEST_CASE("a connection whose node hung up or that waited too long is refused without a slot",
          "[edgehub]") {
  HandshakeAdmission admission({.max_pending = 1, .max_wait = absl::Seconds(10)});
  admission.Queue(At(10, kStart));
  CHECK(Decide(admission, kStart) == Decisions{{10, Verdict::kHandOver}});
  admission.Queue(At(11, kStart + absl::Seconds(8)));  // still in time
  admission.Queue(At(12, kStart));                     // will wait too long
  admission.Queue(At(13, kStart + absl::Seconds(5)));  // will hang up

  admission.StreamOpened("10.0.0.1:40010");
  CHECK(Decide(admission, kStart + absl::Seconds(11), /*gone=*/{13}) ==
        Decisions{{13, Verdict::kPeerGone},
                  {12, Verdict::kWaitedTooLong},
                  {11, Verdict::kHandOver}});
  CHECK(admission.pending() == 1);
  CHECK(admission.queued() == 0);
}

TEST_CASE("a full line drops its oldest connection", "[edgehub]") {
  HandshakeAdmission admission({.max_pending = 1, .max_waiting = 2});
  admission.Queue(At(10, kStart));
  Decide(admission, kStart);  // 10 handshakes
  CHECK_FALSE(admission.Queue(At(11, kStart)).has_value());
  CHECK_FALSE(admission.Queue(At(12, kStart)).has_value());
  std::optional<HandshakeAdmission::Decision> out = admission.Queue(At(13, kStart));
  REQUIRE(out.has_value());
  CHECK(out->connection.fd == 11);
  CHECK(out->verdict == Verdict::kCrowdedOut);
  CHECK(admission.queued() == 2);
}

TEST_CASE("a sweep refuses hung-up and stale connections anywhere in line", "[edgehub]") {
  HandshakeAdmission admission({.max_pending = 1, .max_wait = absl::Seconds(10)});
  admission.Queue(At(10, kStart));
  CHECK(Decide(admission, kStart) == Decisions{{10, Verdict::kHandOver}});
  admission.Queue(At(11, kStart));                     // will be stale
  admission.Queue(At(12, kStart + absl::Seconds(5)));  // will hang up
  admission.Queue(At(13, kStart + absl::Seconds(5)));  // keeps its place

  std::vector<std::pair<int, Verdict>> swept;
  auto probe = [](int fd) { return fd == 12 ? Peer::kGone : Peer::kSilent; };
  for (const auto& decision : admission.Sweep(kStart + absl::Seconds(11), probe)) {
    swept.emplace_back(decision.connection.fd, decision.verdict);
  }
  CHECK(swept == Decisions{{11, Verdict::kWaitedTooLong}, {12, Verdict::kPeerGone}});
  CHECK(admission.queued() == 1);
  CHECK(admission.pending() == 1);  // a sweep takes no slot and frees none
  admission.StreamOpened("10.0.0.1:40010");
  CHECK(Decide(admission, kStart + absl::Seconds(11)) == Decisions{{13, Verdict::kHandOver}});
}

TEST_CASE("TakeQueued hands back what waits and leaves the handshakes counted", "[edgehub]") {
  HandshakeAdmission admission({.max_pending = 1});
  admission.Queue(At(10, kStart));
  admission.Queue(At(11, kStart));
  Decide(admission, kStart);
  const auto queued = admission.TakeQueued();
  REQUIRE(queued.size() == 1);
  CHECK(queued[0].fd == 10);
  CHECK(admission.queued() == 0);
  CHECK(admission.pending() == 1);
}

}  // namespace
}  // namespace nereid::gm
