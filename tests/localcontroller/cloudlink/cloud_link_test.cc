#include "localcontroller/cloudlink/cloud_link.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "common/time/fake_clock.h"
#include "globalmanager/edgehub/edge_hub.h"
#include "globalmanager/edgehub/server.h"
#include "tests/common/net/test_certs.h"
#include "tests/fakes/eventually.h"
#include "tests/globalmanager/edgehub/fake_report_handler.h"
#include "tests/globalmanager/edgehub/test_node.h"
#include "tests/localcontroller/cloudlink/fakes.h"

namespace nereid::lc {
namespace {

namespace v1 = edge::v1;
using ::nereid::gm::testing::FakeReportHandler;
using ::nereid::gm::testing::RecordingListener;
using ::nereid::lc::testing::FakeOutbox;
using ::nereid::lc::testing::FakeStore;
using ::nereid::testing::DatasetReport;
using ::nereid::testing::DatasetResource;
using ::nereid::testing::TestCerts;

using fakes::Eventually;

// Effects that cross threads and the network get longer than Eventually's default.
constexpr absl::Duration kLinkWait = absl::Seconds(15);

// `hub` served on 127.0.0.1 with the GM's test certificate (mTLS).
std::unique_ptr<gm::EdgeHubServer> StartServer(gm::EdgeHub* hub) {
  gm::EdgeHubServerOptions options;
  options.listen = "127.0.0.1:0";
  options.tls = TestCerts().ServerTls();
  auto started = gm::EdgeHubServer::Start(hub, options);
  REQUIRE(started.ok());
  return std::move(*started);
}

// A GM edge hub on 127.0.0.1 with mTLS, and an LC link for node edge-a on a fake clock.
struct Fixture {
  FakeReportHandler handler;
  RecordingListener listener;
  std::unique_ptr<gm::EdgeHub> hub;
  std::unique_ptr<gm::EdgeHubServer> server;
  FakeClock clock;
  FakeStore store;
  FakeOutbox outbox;
  std::unique_ptr<CloudLink> link;

  explicit Fixture(gm::EdgeHub::Options hub_options = {}) {
    hub_options.report_handler = &handler;
    hub_options.delivery_listener = &listener;
    hub = std::make_unique<gm::EdgeHub>(hub_options);
    server = StartServer(hub.get());
  }
  ~Fixture() {
    if (link) link->Stop();
    server->Stop(absl::Seconds(1));
  }

  CloudLinkOptions Options(const std::string& address = "") {
    CloudLinkOptions options;
    options.gm_address = address.empty() ? "127.0.0.1:" + std::to_string(server->port()) : address;
    options.node_name = "edge-a";
    options.tls = TestCerts().ClientTls("edge-a");
    options.clock = &clock;
    options.jitter_source = [] { return 0.5; };  // jitter factor exactly 1
    return options;
  }

  void StartLink(CloudLinkOptions options) {
    auto created = CloudLink::Create(std::move(options), &store, &outbox);
    REQUIRE(created.ok());
    link = std::move(*created);
    link->Start();
  }
  void StartLink() { StartLink(Options()); }

  bool WaitSynced() {
    return Eventually([&] { return link->status().synced; }, kLinkWait);
  }
  // Waits for the link to park in backoff after `attempts` streams, then moves the fake clock to
  // its next attempt. Returns the delay it had chosen.
  absl::Duration AdvanceThroughBackoff(int attempts) {
    const bool parked = Eventually([&] {
      LinkStatus s = link->status();
      return s.state == LinkState::kBackoff && s.attempts == attempts;
    }, kLinkWait);
    LinkStatus s = link->status();
    INFO("state " << LinkStateName(s.state) << " attempts " << s.attempts << " last error "
                  << s.last_error << " clock " << clock.Now() << " next " << s.next_attempt);
    REQUIRE(parked);
    // FakeClock keeps whole nanoseconds; the delay may carry a fraction of one.
    clock.SetTime(s.next_attempt + absl::Nanoseconds(1));
    return s.last_backoff;
  }
};

v1::Resource Dataset(const std::string& name, const std::string& version) {
  return DatasetResource(name, version, "edge-a");
}

TEST_CASE("the link syncs: Hello inventory, diff applied and committed, then ACKed",
          "[cloudlink]") {
  Fixture f;
  f.store.Put(Dataset("kept", "1"));
  f.store.Put(Dataset("stale", "1"));
  f.store.Put(Dataset("old-version", "1"));
  REQUIRE(f.hub->Upsert("edge-a", Dataset("kept", "1")).ok());
  REQUIRE(f.hub->Upsert("edge-a", Dataset("old-version", "2")).ok());
  REQUIRE(f.hub->Upsert("edge-a", Dataset("new", "1")).ok());
  f.hub->MarkSynced();
  f.StartLink();

  REQUIRE(f.WaitSynced());
  CHECK(f.store.Held() == std::vector<std::string>{"Dataset/default/kept@1",
                                                   "Dataset/default/new@1",
                                                   "Dataset/default/old-version@2"});
  CHECK(f.store.upserts() == 2);  // only the difference
  CHECK(f.store.syncs() == 1);
  CHECK(Eventually([&] { return f.hub->metrics().changes_acked().Value() == 3; }, kLinkWait));
  LinkStatus status = f.link->status();
  CHECK(status.state == LinkState::kConnected);
  CHECK(status.changes_applied == 3);
  CHECK(status.last_connected == f.clock.Now());
  CHECK(status.last_sync == f.clock.Now());

  // Live changes after the sync.
  REQUIRE(f.hub->Upsert("edge-a", Dataset("new", "2")).ok());
  REQUIRE(f.hub->Remove("edge-a", Dataset("kept", "1").ref()).ok());
  CHECK(Eventually([&] {
    return f.store.Held() ==
           std::vector<std::string>{"Dataset/default/new@2", "Dataset/default/old-version@2"};
  }, kLinkWait));
  CHECK(Eventually([&] { return f.hub->Node("edge-a").in_flight == 0; }, kLinkWait));
}

TEST_CASE("an invalid spec is NACKed with the reason and not stored", "[cloudlink]") {
  Fixture f;
  v1::Resource bad = Dataset("no-url", "1");
  bad.mutable_dataset()->clear_url();
  REQUIRE(f.hub->Upsert("edge-a", bad).ok());
  v1::Resource other_node = DatasetResource("elsewhere", "1", "edge-b");
  REQUIRE(f.hub->Upsert("edge-a", other_node).ok());
  REQUIRE(f.hub->Upsert("edge-a", Dataset("good", "1")).ok());
  f.hub->MarkSynced();
  f.StartLink();

  REQUIRE(f.WaitSynced());
  std::vector<std::string> events = f.listener.WaitForEvents(3);
  REQUIRE(events.size() == 3);
  CHECK(std::count_if(events.begin(), events.end(), [](const std::string& e) {
          return e.find("nack edge-a no-url@1: Dataset default/no-url: spec.url is empty") == 0;
        }) == 1);
  CHECK(std::count_if(events.begin(), events.end(), [](const std::string& e) {
          return e.find("nack edge-a elsewhere@1") == 0 &&
                 e.find("spec.nodeName is edge-b, not this node") != std::string::npos;
        }) == 1);
  CHECK(f.store.Held() == std::vector<std::string>{"Dataset/default/good@1"});
  CHECK(f.hub->metrics().changes_nacked().Value() == 2);
  CHECK(f.link->status().changes_nacked == 2);
}

TEST_CASE("reports leave the outbox in order and are dropped only when answered", "[cloudlink]") {
  Fixture f;
  REQUIRE(f.hub->Upsert("edge-a", Dataset("mine", "1")).ok());
  REQUIRE(f.hub->Upsert("edge-b", DatasetResource("theirs", "1", "edge-b")).ok());
  f.hub->MarkSynced();
  const uint64_t own = f.outbox.Enqueue(DatasetReport(0, "mine", 42));
  const uint64_t foreign = f.outbox.Enqueue(DatasetReport(0, "theirs", 7));
  f.StartLink();

  FakeReportHandler::Call& call = f.handler.WaitForCall(1);
  CHECK(call.node == "edge-a");
  CHECK(call.report->seq() == own);
  CHECK(call.report->dataset().number_of_samples() == 42);
  // The foreign report is refused by the hub and dropped from the outbox with the reason.
  CHECK(Eventually([&] { return f.outbox.rejected().size() == 1; }, kLinkWait));
  CHECK(f.outbox.rejected()[0].find(std::to_string(foreign) + " NotThisNode") == 0);
  // Still with the handler: not ACKed, still in the outbox.
  CHECK(f.outbox.depth() == 1);
  CHECK(f.outbox.acked().empty());

  call.done(gm::ReportOutcome::Accepted());
  CHECK(Eventually([&] { return f.outbox.depth() == 0; }, kLinkWait));
  CHECK(f.outbox.acked() == std::vector<uint64_t>{own});

  // A report enqueued later wakes the link.
  const uint64_t later = f.outbox.Enqueue(DatasetReport(0, "mine", 43));
  CHECK(f.handler.WaitForCall(2).report->seq() == later);
  CHECK(f.link->status().reports_rejected == 1);
}

TEST_CASE("a RETRY answer keeps the report and resends it after a growing delay", "[cloudlink]") {
  Fixture f;
  REQUIRE(f.hub->Upsert("edge-a", Dataset("mine", "1")).ok());
  f.hub->MarkSynced();
  const uint64_t seq = f.outbox.Enqueue(DatasetReport(0, "mine", 1));
  f.StartLink();

  // 5 s, then 10 s (x2), and an ACCEPTED resets the delay.
  for (int round = 1; round <= 2; ++round) {
    FakeReportHandler::Call& call = f.handler.WaitForCall(round);
    CHECK(call.report->seq() == seq);
    call.done(gm::ReportOutcome::Retry("ApiError", "apiserver down"));
    REQUIRE(Eventually(
        [&] { return f.link->status().reports_retried == static_cast<uint64_t>(round); }, kLinkWait));
    CHECK(f.link->status().report_resend_at - f.clock.Now() == absl::Seconds(5 * round));
    CHECK(f.outbox.depth() == 1);
    CHECK(f.handler.calls() == static_cast<std::size_t>(round));
    f.clock.Advance(absl::Seconds(5 * round));
  }
  FakeReportHandler::Call& third = f.handler.WaitForCall(3);
  CHECK(third.report->seq() == seq);
  third.done(gm::ReportOutcome::Accepted());
  CHECK(Eventually([&] { return f.outbox.depth() == 0; }, kLinkWait));
  f.outbox.Enqueue(DatasetReport(0, "mine", 2));
  f.handler.WaitForCall(4).done(gm::ReportOutcome::Retry("ApiError", "again"));
  REQUIRE(Eventually([&] { return f.link->status().reports_retried == 3; }, kLinkWait));
  CHECK(f.link->status().report_resend_at - f.clock.Now() == absl::Seconds(5));
}

TEST_CASE("a busy GM's estimate sets the resend time and does not grow the backoff",
          "[cloudlink]") {
  FakeClock hub_clock;
  gm::EdgeHub::Options hub_options;
  hub_options.max_pending_reports = 1;
  hub_options.clock = &hub_clock;
  Fixture f(hub_options);
  REQUIRE(f.hub->Upsert("edge-a", Dataset("a", "1")).ok());
  REQUIRE(f.hub->Upsert("edge-a", Dataset("b", "1")).ok());
  f.hub->MarkSynced();
  f.outbox.Enqueue(DatasetReport(0, "a", 1));
  f.StartLink();
  f.handler.WaitForCall(1).done(gm::ReportOutcome::Accepted());
  REQUIRE(Eventually([&] { return f.outbox.depth() == 0; }, kLinkWait));

  // Spread the one finished report over 4 s of the hub's window: with one held, the GM expects
  // to need 4 s, and the link resends at a random point of [2 s, 4 s] (3 s: jitter source 0.5).
  hub_clock.Advance(absl::Seconds(3));
  f.outbox.Enqueue(DatasetReport(0, "a", 2));  // with the handler, unanswered
  f.outbox.Enqueue(DatasetReport(0, "b", 3));  // over the node's bound of 1: RETRY "Busy"
  f.handler.WaitForCall(2);
  REQUIRE(Eventually([&] { return f.link->status().reports_retried == 1; }, kLinkWait));
  CHECK(f.link->status().report_resend_at - f.clock.Now() == absl::Seconds(3));
  f.clock.Advance(absl::Seconds(3));
  REQUIRE(Eventually([&] { return f.link->status().reports_retried == 2; }, kLinkWait));
  CHECK(f.link->status().report_resend_at - f.clock.Now() == absl::Seconds(3));

  // Nothing finished lately: no estimate, and the LC's backoff starts at its first step (5 s),
  // so the two rounds on the GM's estimate did not grow it.
  hub_clock.Advance(absl::Seconds(8));
  f.clock.Advance(absl::Seconds(3));
  REQUIRE(Eventually([&] { return f.link->status().reports_retried == 3; }, kLinkWait));
  CHECK(f.link->status().report_resend_at - f.clock.Now() == absl::Seconds(5));
  CHECK(f.outbox.depth() == 2);
}

TEST_CASE("after a reconnect everything unacked is sent once more and nothing is lost",
          "[cloudlink]") {
  Fixture f;
  REQUIRE(f.hub->Upsert("edge-a", Dataset("mine", "1")).ok());
  f.hub->MarkSynced();
  const uint64_t seq = f.outbox.Enqueue(DatasetReport(0, "mine", 5));
  f.StartLink();
  REQUIRE(f.WaitSynced());
  FakeReportHandler::Call& first = f.handler.WaitForCall(1);  // held by the "API"

  // Another stream for edge-a replaces the link's (as a flapping network would); the link backs
  // off, reconnects, resyncs and resends the unacked report.
  {
    ::nereid::testing::TestNode intruder(f.server->port(), TestCerts(), "edge-a");
    intruder.Hello("edge-a");
    REQUIRE(intruder.Next().has_value());
    CHECK(f.AdvanceThroughBackoff(1) == absl::Seconds(1));
  }
  REQUIRE(Eventually([&] { return f.link->status().attempts == 2 && f.link->status().synced; }, kLinkWait));
  CHECK(f.link->status().last_error.find("replaced by a newer stream") != std::string::npos);
  // The resend reached the hub while the first copy was still with the handler: not handed over
  // twice; the one completion answers it on the new stream.
  CHECK(Eventually([&] { return f.hub->metrics().reports_deduplicated().Value() == 1; }, kLinkWait));
  // Counted after the send returns, which may be after the hub has seen it.
  CHECK(Eventually([&] { return f.link->status().reports_sent == 2; }, kLinkWait));
  CHECK(f.handler.calls() == 1);
  first.done(gm::ReportOutcome::Accepted());
  CHECK(Eventually([&] { return f.outbox.depth() == 0; }, kLinkWait));
  CHECK(f.outbox.acked() == std::vector<uint64_t>{seq});
  CHECK(f.handler.calls() == 1);
}

TEST_CASE("reconnect backoff: 1 s x1.6 up to 120 s with jitter, on the fake clock",
          "[cloudlink][backoff]") {
  Fixture f;
  // A port nobody listens on: every attempt fails at once.
  const int closed_port = f.server->port();
  f.server->Stop(absl::Seconds(0));

  SECTION("the schedule grows by 1.6 and caps at 120 s") {
    f.StartLink(f.Options("127.0.0.1:" + std::to_string(closed_port)));
    std::vector<double> seen;
    for (int attempt = 1; attempt <= 13; ++attempt) {
      seen.push_back(absl::ToDoubleSeconds(f.AdvanceThroughBackoff(attempt)));
    }
    const std::vector<double> expected = {
        1,          1.6,         2.56,         4.096,          6.5536, 10.48576, 16.777216,
        26.8435456, 42.94967296, 68.719476736, 109.9511627776, 120,    120};
    REQUIRE(seen.size() == expected.size());
    for (std::size_t i = 0; i < seen.size(); ++i) {
      INFO("attempt " << i + 1);
      CHECK(seen[i] == Approx(expected[i]).epsilon(1e-6));
    }
    LinkStatus status = f.link->status();
    CHECK(status.consecutive_failures >= 13);
    CHECK(status.last_error.find("stream ended: 14") == 0);  // UNAVAILABLE
  }
  SECTION("jitter stays within +-20 %") {
    CloudLinkOptions low = f.Options("127.0.0.1:" + std::to_string(closed_port));
    low.jitter_source = [] { return 0.0; };
    f.StartLink(low);
    CHECK(absl::ToDoubleSeconds(f.AdvanceThroughBackoff(1)) == Approx(0.8));
    CHECK(absl::ToDoubleSeconds(f.AdvanceThroughBackoff(2)) == Approx(1.28));
  }
}

TEST_CASE("the backoff resets only after a healthy stream", "[cloudlink][backoff]") {
  Fixture f;
  f.hub->MarkSynced();
  f.StartLink();
  REQUIRE(f.WaitSynced());

  auto replace = [&] {
    ::nereid::testing::TestNode intruder(f.server->port(), TestCerts(), "edge-a");
    intruder.Hello("edge-a");
    REQUIRE(intruder.Next().has_value());
  };
  // Streams that die right after connecting keep growing the delay...
  replace();
  CHECK(f.AdvanceThroughBackoff(1) == absl::Seconds(1));
  REQUIRE(f.WaitSynced());
  replace();
  CHECK(f.AdvanceThroughBackoff(2) == absl::Seconds(1.6));
  REQUIRE(f.WaitSynced());
  // ...one that stayed up for 30 s resets it.
  f.clock.Advance(absl::Seconds(30));
  replace();
  CHECK(f.AdvanceThroughBackoff(3) == absl::Seconds(1));
  CHECK(f.link->status().consecutive_failures == 0);
}

TEST_CASE("a local store failure is not NACKed: the link drops the stream and resyncs",
          "[cloudlink]") {
  Fixture f;
  REQUIRE(f.hub->Upsert("edge-a", Dataset("ds", "1")).ok());
  f.hub->MarkSynced();
  f.store.FailNextUpserts(1, absl::UnavailableError("database is locked"));
  f.StartLink();
  CHECK(f.AdvanceThroughBackoff(1) == absl::Seconds(1));
  CHECK(f.link->status().last_error.find("database is locked") != std::string::npos);
  REQUIRE(f.WaitSynced());
  CHECK(f.store.Held() == std::vector<std::string>{"Dataset/default/ds@1"});
  CHECK(f.hub->metrics().changes_nacked().Value() == 0);
}

// A second GM replica on 127.0.0.1 with the same certificate: a standby that refuses streams
// and may name the replica that serves the node.
struct Replica {
  FakeReportHandler handler;
  std::unique_ptr<gm::EdgeHub> hub;
  std::unique_ptr<gm::EdgeHubServer> server;

  explicit Replica(const std::string& owner) {
    gm::EdgeHub::Options options;
    options.report_handler = &handler;
    options.accept_streams = false;
    hub = std::make_unique<gm::EdgeHub>(options);
    hub->SetOwnerAddress(owner);
    server = StartServer(hub.get());
  }
  ~Replica() { server->Stop(absl::Seconds(1)); }
  std::string address() const { return "127.0.0.1:" + std::to_string(server->port()); }
};

TEST_CASE("a standby's owner trailer takes the node to the leader at once, verified as the "
          "configured name; the next reconnect starts from the configured address again",
          "[cloudlink][redirect]") {
  Fixture f;  // the leader
  REQUIRE(f.hub->Upsert("edge-a", Dataset("d", "1")).ok());
  f.hub->MarkSynced();
  const std::string leader = "127.0.0.1:" + std::to_string(f.server->port());
  Replica standby(leader);
  f.StartLink(f.Options(standby.address()));

  REQUIRE(f.WaitSynced());  // no backoff in between: the fake clock never moved
  LinkStatus status = f.link->status();
  CHECK(status.server == leader);
  CHECK(status.attempts == 2);
  CHECK(status.redirects == 1);
  CHECK(status.consecutive_failures == 0);
  CHECK(f.store.Held() == std::vector<std::string>{"Dataset/default/d@1"});
  CHECK(standby.hub->metrics().streams_redirected().Value() == 1);

  // The leader goes away and the standby takes over: after the backoff the node dials its
  // configured address and stays there.
  f.server->Stop(absl::Seconds(0));
  REQUIRE(standby.hub->Upsert("edge-a", Dataset("d", "2")).ok());
  standby.hub->MarkSynced();
  standby.hub->SetAcceptingStreams(true);
  f.AdvanceThroughBackoff(2);
  CHECK(Eventually([&] {
    return f.link->status().synced &&
           f.store.Held() == std::vector<std::string>{"Dataset/default/d@2"};
  }, kLinkWait));
  status = f.link->status();
  CHECK(status.server == standby.address());
  CHECK(status.attempts == 3);
  CHECK(status.redirects == 1);
}

TEST_CASE("owner trailers are followed one hop at a time, and only when they name another "
          "HOST:PORT", "[cloudlink][redirect]") {
  Fixture f;
  f.server->Stop(absl::Seconds(0));  // only the standbys below serve

  SECTION("two standbys naming each other do not bounce the node") {
    Replica b("");
    Replica a(b.address());
    b.hub->SetOwnerAddress(a.address());
    f.StartLink(f.Options(a.address()));
    f.AdvanceThroughBackoff(2);  // a, then b at once, then the backoff
    LinkStatus status = f.link->status();
    CHECK(status.server == b.address());
    CHECK(status.redirects == 1);
    f.AdvanceThroughBackoff(4);  // the third attempt went to a again, and on to b
    CHECK(f.link->status().redirects == 2);
    CHECK(a.hub->metrics().streams_redirected().Value() == 2);
    CHECK(b.hub->metrics().streams_redirected().Value() == 2);
  }
  for (const bool malformed : {true, false}) {
    DYNAMIC_SECTION((malformed ? "a malformed owner" : "the configured address itself")
                    << " is not followed") {
      Replica a("");
      a.hub->SetOwnerAddress(malformed ? "not an address" : a.address());
      f.StartLink(f.Options(a.address()));
      f.AdvanceThroughBackoff(1);
      LinkStatus status = f.link->status();
      CHECK(status.redirects == 0);
      CHECK(status.server == a.address());
      CHECK(status.last_error.find("not the leader") != std::string::npos);
      CHECK(a.hub->metrics().streams_redirected().Value() == 1);
    }
  }
}

TEST_CASE("a node served after a redirect follows a move to the replica that owns it now, at once",
          "[cloudlink][redirect]") {
  Fixture f;  // the leader
  REQUIRE(f.hub->Upsert("edge-a", Dataset("d", "1")).ok());
  f.hub->MarkSynced();
  const std::string leader = "127.0.0.1:" + std::to_string(f.server->port());
  Replica standby(leader);
  f.StartLink(f.Options(standby.address()));
  REQUIRE(f.WaitSynced());
  CHECK(f.link->status().server == leader);  // reached through the standby's redirect

  // Another replica joins and owns the node now (edge shards): the leader moves the node's
  // stream there, and the node follows without waiting out a backoff (the fake clock stands).
  Replica owner("");
  REQUIRE(owner.hub->Upsert("edge-a", Dataset("d", "2")).ok());
  owner.hub->MarkSynced();
  owner.hub->SetAcceptingStreams(true);
  REQUIRE(f.hub->MoveNode("edge-a", owner.address()));
  CHECK(Eventually([&] {
    return f.link->status().synced &&
           f.store.Held() == std::vector<std::string>{"Dataset/default/d@2"};
  }, kLinkWait));
  const LinkStatus status = f.link->status();
  CHECK(status.server == owner.address());
  CHECK(status.redirects == 2);
  CHECK(status.attempts == 3);
  CHECK_FALSE(f.hub->MoveNode("edge-a", owner.address()));  // no stream of it here any more
}

// Edge shards as the GM replica of a test sees them.
class FixedOwnership final : public gm::NodeOwnership {
 public:
  explicit FixedOwnership(std::string owner) : owner_(std::move(owner)) {}
  std::string OwnerElsewhere(std::string_view) const override { return owner_; }

 private:
  const std::string owner_;
};

TEST_CASE("an owner the node cannot reach costs it one dial: the next replica serves it",
          "[cloudlink][redirect]") {
  // Nothing listens at the owner's address (a pod address the edge cannot route to).
  const std::string unreachable = "127.0.0.1:1";
  FixedOwnership ownership(unreachable);
  gm::EdgeHub::Options options;
  options.ownership = &ownership;
  Fixture f(options);
  REQUIRE(f.hub->Upsert("edge-a", Dataset("d", "1")).ok());
  f.hub->MarkSynced();
  f.StartLink();
  // Refused with the owner's address; the dial there fails; after the backoff the node comes
  // back saying so, and is served.
  f.AdvanceThroughBackoff(2);
  REQUIRE(f.WaitSynced());
  const LinkStatus status = f.link->status();
  CHECK(status.server == f.Options().gm_address);
  CHECK(status.redirects == 1);
  CHECK(status.attempts == 3);
  CHECK(f.hub->metrics().streams_redirected().Value() == 1);
  CHECK(f.store.Held() == std::vector<std::string>{"Dataset/default/d@1"});
  CHECK_FALSE(f.hub->MoveNode("edge-a", unreachable));  // and it is not moved there again
}

TEST_CASE("the GM refusing our identity is reported as the link's error", "[cloudlink]") {
  Fixture f;
  f.hub->MarkSynced();
  CloudLinkOptions options = f.Options();
  options.node_name = "edge-b";

  SECTION("caught at creation when the certificate does not name the node") {
    auto created = CloudLink::Create(options, &f.store, &f.outbox);
    REQUIRE_FALSE(created.ok());
    CHECK(absl::IsFailedPrecondition(created.status()));
    CHECK(std::string(created.status().message()).find("not node edge-b") != std::string::npos);
  }
  SECTION("a client certificate from another CA fails at the handshake") {
    options.node_name = "edge-a";
    options.tls = ::nereid::testing::UntrustedCerts().ClientTls("edge-a");
    options.tls.ca_file = TestCerts().ca;
    f.StartLink(options);
    f.AdvanceThroughBackoff(1);
    CHECK(f.link->status().last_error.find("stream ended: 14") == 0);
    CHECK(f.hub->metrics().connected_nodes().Value() == 0);
  }
}

TEST_CASE("options are validated", "[cloudlink]") {
  FakeStore store;
  FakeOutbox outbox;
  CloudLinkOptions options;
  options.node_name = "edge-a";
  options.tls = TestCerts().ClientTls("edge-a");
  CHECK(absl::IsInvalidArgument(CloudLink::Create(options, &store, &outbox).status()));
  options.gm_address = "127.0.0.1:1";
  options.tls.key_file = TestCerts().NodeKey("edge-b");
  auto mismatched = CloudLink::Create(options, &store, &outbox);
  CHECK(absl::IsInvalidArgument(mismatched.status()));
  options.tls = {};
  CHECK(absl::IsInvalidArgument(CloudLink::Create(options, &store, &outbox).status()));
  options.tls.insecure = true;
  CHECK(CloudLink::Create(options, &store, &outbox).ok());
}

}  // namespace
}  // namespace nereid::lc

namespace nereid::lc {
namespace {

TEST_CASE("--insecure works only when both sides ask for it", "[cloudlink][insecure]") {
  gm::EdgeHub::Options hub_options;
  hub_options.allow_unauthenticated = true;
  gm::EdgeHub hub(hub_options);
  REQUIRE(hub.Upsert("edge-a", Dataset("ds", "1")).ok());
  hub.MarkSynced();
  gm::EdgeHubServerOptions server_options;
  server_options.listen = "127.0.0.1:0";
  server_options.tls.insecure = true;
  auto server = gm::EdgeHubServer::Start(&hub, server_options);
  REQUIRE(server.ok());

  FakeStore store;
  FakeOutbox outbox;
  CloudLinkOptions options;
  options.gm_address = "127.0.0.1:" + std::to_string((*server)->port());
  options.node_name = "edge-a";
  options.tls.insecure = true;
  auto link = CloudLink::Create(options, &store, &outbox);
  REQUIRE(link.ok());
  (*link)->Start();
  CHECK(Eventually([&] { return (*link)->status().synced; }, kLinkWait));
  CHECK(store.Held() == std::vector<std::string>{"Dataset/default/ds@1"});
  (*link)->Stop();

  // A TLS client cannot talk to the plaintext server.
  FakeClock clock;
  CloudLinkOptions tls_options = options;
  tls_options.tls = TestCerts().ClientTls("edge-a");
  tls_options.clock = &clock;
  auto tls_link = CloudLink::Create(tls_options, &store, &outbox);
  REQUIRE(tls_link.ok());
  (*tls_link)->Start();
  CHECK(Eventually([&] { return (*tls_link)->status().state == LinkState::kBackoff; }, kLinkWait));
  CHECK((*tls_link)->status().last_connected == absl::InfinitePast());
  (*tls_link)->Stop();
  (*server)->Stop(absl::Seconds(1));
}

}  // namespace
}  // namespace nereid::lc
