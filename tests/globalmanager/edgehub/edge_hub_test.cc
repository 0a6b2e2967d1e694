#include "globalmanager/edgehub/edge_hub.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "common/time/fake_clock.h"
#include "globalmanager/edgehub/server.h"
#include "tests/common/net/test_certs.h"
#include "tests/fakes/eventually.h"
#include "tests/globalmanager/edgehub/fake_report_handler.h"
#include "tests/globalmanager/edgehub/test_node.h"

namespace nereid::gm {
namespace {

namespace v1 = edge::v1;
using ::nereid::fakes::Eventually;
using ::nereid::gm::testing::FakeReportHandler;
using ::nereid::gm::testing::RecordingListener;
using ::nereid::testing::DatasetReport;
using ::nereid::testing::DatasetResource;
using ::nereid::testing::Item;
using ::nereid::testing::TestCerts;
using ::nereid::testing::TestNode;

struct Fixture {
  FakeReportHandler handler;
  RecordingListener listener;
  std::unique_ptr<EdgeHub> hub;
  std::unique_ptr<EdgeHubServer> server;

  explicit Fixture(EdgeHub::Options options = {}) {
    options.report_handler = &handler;
    options.delivery_listener = &listener;
    hub = std::make_unique<EdgeHub>(options);
    EdgeHubServerOptions server_options;
    server_options.listen = "127.0.0.1:0";
    server_options.tls = TestCerts().ServerTls();
    auto started = EdgeHubServer::Start(hub.get(), server_options);
    REQUIRE(started.ok());
    server = std::move(*started);
  }
  ~Fixture() { server->Stop(absl::Seconds(1)); }

  std::unique_ptr<TestNode> Connect(const std::string& cert_node) {
    return std::make_unique<TestNode>(server->port(), TestCerts(), cert_node);
  }
};

v1::SyncResponse Expect(TestNode& node) {
  auto response = node.Next();
  REQUIRE(response.has_value());
  return *response;
}

void ExpectHelloReply(TestNode& node, const std::string& name) {
  v1::SyncResponse response = Expect(node);
  INFO(response.DebugString());
  REQUIRE(response.has_hello_reply());
  CHECK(response.hello_reply().node_name() == name);
  CHECK(response.hello_reply().protocol_version() == 1);
}

v1::Resource ModelResource(const std::string& name, const std::string& version) {
  v1::Resource r;
  r.mutable_ref()->set_kind("Model");
  r.mutable_ref()->set_namespace_("default");
  r.mutable_ref()->set_name(name);
  r.set_version(version);
  r.mutable_model()->set_url("/models/" + name);
  r.mutable_model()->set_sha256(std::string(64, 'a'));
  return r;
}

std::string Describe(const v1::Change& change) {
  if (change.has_upsert()) {
    return "upsert " + change.upsert().ref().name() + "@" + change.upsert().version();
  }
  return "remove " + change.remove().ref().name();
}

// Connects `name` (after MarkSynced) holding `inventory`, through its ResyncDone.
std::unique_ptr<TestNode> ConnectSynced(Fixture& f, const std::string& name,
                                        const std::vector<v1::InventoryItem>& inventory) {
  auto node = f.Connect(name);
  node->Hello(name, inventory);
  ExpectHelloReply(*node, name);
  REQUIRE(Expect(*node).has_resync_done());
  return node;
}

TEST_CASE("Hello is answered with exactly the difference, then ResyncDone", "[edgehub]") {
  Fixture f;
  REQUIRE(f.hub->Upsert("edge-a", DatasetResource("same", "1", "edge-a")).ok());
  REQUIRE(f.hub->Upsert("edge-a", DatasetResource("changed", "2", "edge-a")).ok());
  REQUIRE(f.hub->Upsert("edge-a", ModelResource("missing", "1")).ok());
  REQUIRE(f.hub->Upsert("edge-b", DatasetResource("other-node", "1", "edge-b")).ok());
  f.hub->MarkSynced();

  auto node = f.Connect("edge-a");
  node->Hello("edge-a", {Item("Dataset", "same", "1"), Item("Dataset", "changed", "1"),
                         Item("Dataset", "stale", "4")});
  ExpectHelloReply(*node, "edge-a");
  std::vector<std::string> changes;
  for (int i = 0; i < 3; ++i) {
    v1::Change change = node->NextChange();
    changes.push_back(Describe(change));
    node->Ack(change);
  }
  CHECK(changes ==
        std::vector<std::string>{"upsert changed@2", "upsert missing@1", "remove stale"});
  v1::SyncResponse done = Expect(*node);
  REQUIRE(done.has_resync_done());
  CHECK(done.resync_done().upserts() == 2);
  CHECK(done.resync_done().removes() == 1);

  CHECK(Eventually([&] { return f.hub->metrics().changes_acked().Value() == 3; }));
  EdgeHub::NodeStatus status = f.hub->Node("edge-a");
  CHECK(status.connected);
  CHECK(status.desired == 3);
  CHECK(status.in_flight == 0);
  CHECK(f.hub->metrics().connected_nodes().Value() == 1);
  CHECK(f.hub->metrics().dispatch_latency().Collect().histogram.sample_count == 3);
  CHECK(f.hub->metrics().dispatch_queued().Collect().histogram.sample_count == 3);
  CHECK(f.hub->metrics().dispatch_writing().Collect().histogram.sample_count == 3);
  CHECK(f.hub->metrics().dispatch_at_node().Collect().histogram.sample_count == 3);
}

TEST_CASE("changes flow after the resync; ACK and NACK are counted and observed", "[edgehub]") {
  Fixture f;
  f.hub->MarkSynced();
  auto node = f.Connect("edge-a");
  node->Hello("edge-a");
  ExpectHelloReply(*node, "edge-a");
  REQUIRE(Expect(*node).has_resync_done());

  REQUIRE(f.hub->Upsert("edge-a", DatasetResource("ds1", "1", "edge-a")).ok());
  v1::Change first = node->NextChange();
  CHECK(Describe(first) == "upsert ds1@1");
  CHECK(first.upsert().dataset().url() == "/data/ds1.txt");
  node->Ack(first);

  REQUIRE(f.hub->Upsert("edge-a", DatasetResource("bad", "1", "edge-a")).ok());
  v1::Change bad = node->NextChange();
  node->Nack(bad, "unknown format");

  std::vector<std::string> events = f.listener.WaitForEvents(2);
  REQUIRE(events.size() == 2);
  CHECK(events[0] == "ack edge-a ds1@1");
  CHECK(events[1] == "nack edge-a bad@1: unknown format");
  CHECK(f.hub->metrics().changes_nacked().Value() == 1);

  // The NACKed version is not resent on this stream (a level-triggered controller calling Upsert
  // again must not loop), but the next object still flows: it is the very next message.
  REQUIRE(f.hub->Upsert("edge-a", DatasetResource("bad", "1", "edge-a")).ok());
  REQUIRE(f.hub->Upsert("edge-a", DatasetResource("ds1", "1", "edge-a")).ok());  // unchanged
  REQUIRE(f.hub->Remove("edge-a", first.upsert().ref()).ok());
  v1::Change removal = node->NextChange();
  CHECK(Describe(removal) == "remove ds1");
  CHECK(removal.remove().version() == "1");
  node->Ack(removal);
  // A fixed spec (new version) is sent.
  REQUIRE(f.hub->Upsert("edge-a", DatasetResource("bad", "2", "edge-a")).ok());
  CHECK(Describe(node->NextChange()) == "upsert bad@2");
  CHECK(f.listener.WaitForEvents(3)[2] == "ack edge-a ds1@1 removed");
}

TEST_CASE("a node's queue coalesces while the in-flight window is full", "[edgehub]") {
  EdgeHub::Options options;
  options.max_in_flight = 1;
  Fixture f(options);
  f.hub->MarkSynced();
  auto node = f.Connect("edge-a");
  node->Hello("edge-a");
  ExpectHelloReply(*node, "edge-a");
  REQUIRE(Expect(*node).has_resync_done());

  REQUIRE(f.hub->Upsert("edge-a", DatasetResource("ds", "1", "edge-a")).ok());
  v1::Change first = node->NextChange();  // in flight, not yet ACKed
  REQUIRE(f.hub->Upsert("edge-a", DatasetResource("ds", "2", "edge-a")).ok());
  REQUIRE(f.hub->Upsert("edge-a", DatasetResource("ds", "3", "edge-a")).ok());
  REQUIRE(f.hub->Upsert("edge-a", DatasetResource("gone", "1", "edge-a")).ok());
  REQUIRE(f.hub->Remove("edge-a", DatasetResource("gone", "1", "edge-a").ref()).ok());
  EdgeHub::NodeStatus status = f.hub->Node("edge-a");
  CHECK(status.queued == 2);
  CHECK(status.in_flight == 1);
  const NodeQueueDepths& depths = f.hub->metrics().queue_depths();
  CHECK(depths.queued_changes() == 2);
  CHECK(depths.nodes_with_backlog() == 1);
  CHECK(depths.max_depth() == 2);

  node->Ack(first);
  v1::Change second = node->NextChange();
  CHECK(Describe(second) == "upsert ds@3");  // v2 was replaced before it was sent
  node->Ack(second);
  v1::Change third = node->NextChange();
  CHECK(Describe(third) == "remove gone");  // upsert + remove coalesced to the remove
  node->Ack(third);
  CHECK(Eventually([&] { return f.hub->Node("edge-a").in_flight == 0; }));
  CHECK(f.hub->Node("edge-a").queued == 0);
  CHECK(depths.queued_changes() == 0);
  CHECK(depths.nodes_with_backlog() == 0);
}

TEST_CASE("a second stream for a node replaces the first", "[edgehub]") {
  Fixture f;
  REQUIRE(f.hub->Upsert("edge-a", DatasetResource("ds", "1", "edge-a")).ok());
  f.hub->MarkSynced();
  auto old_stream = f.Connect("edge-a");
  old_stream->Hello("edge-a");
  ExpectHelloReply(*old_stream, "edge-a");
  CHECK(Describe(old_stream->NextChange()) == "upsert ds@1");  // never ACKed

  auto new_stream = f.Connect("edge-a");
  new_stream->Hello("edge-a");
  grpc::Status ended = old_stream->AwaitEnd();
  CHECK(ended.error_code() == grpc::StatusCode::ABORTED);
  CHECK(ended.error_message() == "replaced by a newer stream for node edge-a");

  ExpectHelloReply(*new_stream, "edge-a");
  CHECK(Describe(new_stream->NextChange()) == "upsert ds@1");
  CHECK(f.hub->metrics().sessions_replaced().Value() == 1);
  CHECK(Eventually([&] { return f.hub->metrics().connected_nodes().Value() == 1; }));
  CHECK(f.hub->Node("edge-a").connected);
}

TEST_CASE("a stream that sends no Hello is ended after the Hello timeout; one that did is kept",
          "[edgehub]") {
  FakeClock clock;
  EdgeHub::Options options;
  options.clock = &clock;
  options.hello_timeout = absl::Seconds(30);
  Fixture f(options);
  REQUIRE(f.hub->Upsert("edge-b", DatasetResource("ds", "1", "edge-b")).ok());
  f.hub->MarkSynced();
  // edge-b opens first and speaks: every sweep that is due for the silent stream is due for it.
  auto speaking = f.Connect("edge-b");
  speaking->Hello("edge-b");
  ExpectHelloReply(*speaking, "edge-b");
  CHECK(Describe(speaking->NextChange()) == "upsert ds@1");
  REQUIRE(Expect(*speaking).has_resync_done());
  auto silent = f.Connect("edge-a");
  // The stream registers when its headers reach the server.
  REQUIRE(Eventually([&] { return f.hub->streams_awaiting_hello() == 1; }));

  clock.Advance(absl::Seconds(29));
  f.hub->EndStreamsWithoutHello();  // (the server's own sweep may run too: same outcome)
  CHECK(f.hub->streams_awaiting_hello() == 1);  // within its timeout
  clock.Advance(absl::Seconds(1));
  f.hub->EndStreamsWithoutHello();
  CHECK(f.hub->streams_awaiting_hello() == 0);
  grpc::Status status = silent->AwaitEnd();
  CHECK(status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED);
  CHECK(status.error_message() == "no Hello within 30s of opening the stream");
  CHECK(f.hub->metrics().hello_timeouts().Value() == 1);

  CHECK_FALSE(speaking->Ended());
  REQUIRE(f.hub->Upsert("edge-b", DatasetResource("ds", "2", "edge-b")).ok());
  CHECK(Describe(speaking->NextChange()) == "upsert ds@2");
  CHECK(f.hub->Node("edge-b").connected);
}

TEST_CASE("a connection that carries no stream is closed after the idle limit", "[edgehub]") {
  EdgeHub hub(EdgeHub::Options{});
  EdgeHubServerOptions server_options;
  server_options.listen = "127.0.0.1:0";
  server_options.tls = TestCerts().ServerTls();
  server_options.idle_streams.max_connection_idle_ms = 1000;
  auto server = EdgeHubServer::Start(&hub, server_options);
  REQUIRE(server.ok());
  auto channel = TestNode::Channel((*server)->port(), TestCerts().ClientTls("edge-a"));
  REQUIRE(channel->WaitForConnected(absl::ToChronoTime(absl::Now() + absl::Seconds(10))));
  // The server's GOAWAY takes the channel out of READY (to IDLE) with no stream ever opened.
  REQUIRE(channel->WaitForStateChange(GRPC_CHANNEL_READY,
                                      absl::ToChronoTime(absl::Now() + absl::Seconds(10))));
  CHECK(channel->GetState(false) != GRPC_CHANNEL_READY);

  // A connection holding its stream is not idle, however long the stream is quiet.
  TestNode node(channel);
  node.Hello("edge-a");
  ExpectHelloReply(node, "edge-a");
  CHECK_FALSE(channel->WaitForStateChange(GRPC_CHANNEL_READY,
                                          absl::ToChronoTime(absl::Now() + absl::Seconds(3))));
  CHECK_FALSE(node.Ended());
  (*server)->Stop(absl::Seconds(1));
}

TEST_CASE("a certificate of node A claiming node B is refused and counted", "[edgehub]") {
  Fixture f;
  REQUIRE(f.hub->Upsert("edge-b", DatasetResource("secret", "1", "edge-b")).ok());
  f.hub->MarkSynced();
  auto node = f.Connect("edge-a");
  node->Hello("edge-b");
  CHECK_FALSE(node->Next().has_value());  // nothing of edge-b's leaks
  grpc::Status status = node->AwaitEnd();
  CHECK(status.error_code() == grpc::StatusCode::PERMISSION_DENIED);
  CHECK(status.error_message().find("is not node edge-b") != std::string::npos);
  CHECK(f.hub->metrics().refused_identities().Value() == 1);
  CHECK_FALSE(f.hub->Node("edge-b").connected);
}

TEST_CASE("protocol violations end the stream with a clear status", "[edgehub]") {
  Fixture f;
  f.hub->MarkSynced();
  SECTION("first message not a Hello") {
    auto node = f.Connect("edge-a");
    node->Report(DatasetReport(1, "ds", 5));
    grpc::Status status = node->AwaitEnd();
    CHECK(status.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
  }
  SECTION("unsupported protocol version") {
    auto node = f.Connect("edge-a");
    v1::SyncRequest hello;
    hello.mutable_hello()->set_node_name("edge-a");
    hello.mutable_hello()->set_protocol_version(7);
    node->Send(hello);
    grpc::Status status = node->AwaitEnd();
    CHECK(status.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
    CHECK(status.error_message().find("protocol version 7") != std::string::npos);
  }
  SECTION("a second Hello") {
    auto node = f.Connect("edge-a");
    node->Hello("edge-a");
    ExpectHelloReply(*node, "edge-a");
    node->Hello("edge-a");
    grpc::Status status = node->AwaitEnd();
    CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  }
}

TEST_CASE("reports about objects that are not the node's are refused", "[edgehub]") {
  Fixture f;
  REQUIRE(f.hub->Upsert("edge-a", DatasetResource("mine", "1", "edge-a")).ok());
  REQUIRE(f.hub->Upsert("edge-b", DatasetResource("theirs", "1", "edge-b", "uid-b")).ok());
  f.hub->MarkSynced();
  auto node = f.Connect("edge-a");
  node->Hello("edge-a", {Item("Dataset", "mine", "1")});
  ExpectHelloReply(*node, "edge-a");
  REQUIRE(Expect(*node).has_resync_done());

  node->Report(DatasetReport(1, "theirs", 5));
  v1::ReportAck foreign = node->NextReportAck();
  CHECK(foreign.seq() == 1);
  CHECK(foreign.result() == v1::REPORT_REJECTED);
  CHECK(foreign.reason() == "NotThisNode");

  node->Report(DatasetReport(2, "nobodys", 5));
  v1::ReportAck gone = node->NextReportAck();
  CHECK(gone.seq() == 2);
  CHECK(gone.result() == v1::REPORT_REJECTED);
  CHECK(gone.reason() == "ObjectGone");

  v1::StatusReport invalid = DatasetReport(3, "mine", 5);
  invalid.clear_payload();
  node->Report(invalid);
  v1::ReportAck rejected = node->NextReportAck();
  CHECK(rejected.result() == v1::REPORT_REJECTED);
  CHECK(rejected.reason() == "Invalid");

  CHECK(f.handler.calls() == 0);
  CHECK(f.hub->metrics().foreign_reports().Value() == 1);
  CHECK(f.hub->metrics().reports_rejected().Value() == 3);
}

TEST_CASE("a report is ACKed only after the handler completed it, one per object at a time",
          "[edgehub]") {
  Fixture f;
  REQUIRE(f.hub->Upsert("edge-a", DatasetResource("ds", "1", "edge-a")).ok());
  f.hub->MarkSynced();
  auto node = f.Connect("edge-a");
  node->Hello("edge-a", {Item("Dataset", "ds", "1")});
  ExpectHelloReply(*node, "edge-a");
  REQUIRE(Expect(*node).has_resync_done());

  node->Report(DatasetReport(10, "ds", 5));
  node->Report(DatasetReport(11, "ds", 6));
  FakeReportHandler::Call& first = f.handler.WaitForCall(1);
  CHECK(first.node == "edge-a");
  CHECK(first.report->seq() == 10);
  CHECK(first.report->dataset().number_of_samples() == 5);
  CHECK(Eventually([&] { return f.hub->Node("edge-a").pending_reports == 2; }));

  // No ReportAck is queued yet: control messages go before changes, so the next message being a
  // change proves it.
  REQUIRE(f.hub->Upsert("edge-a", DatasetResource("probe", "1", "edge-a")).ok());
  CHECK(Describe(node->NextChange()) == "upsert probe@1");
  CHECK(f.handler.calls() == 1);  // seq 11 waits for seq 10 (same object)

  first.done(ReportOutcome::Accepted());
  v1::ReportAck ack10 = node->NextReportAck();
  CHECK(ack10.seq() == 10);
  CHECK(ack10.result() == v1::REPORT_ACCEPTED);

  FakeReportHandler::Call& second = f.handler.WaitForCall(2);
  CHECK(second.report->seq() == 11);
  second.done(ReportOutcome::Retry("ApiError", "apiserver unavailable"));
  v1::ReportAck ack11 = node->NextReportAck();
  CHECK(ack11.seq() == 11);
  CHECK(ack11.result() == v1::REPORT_RETRY);
  CHECK(ack11.reason() == "ApiError");
  CHECK(f.hub->metrics().reports_accepted().Value() == 1);
  CHECK(f.hub->metrics().reports_retry().Value() == 1);
  CHECK(Eventually([&] { return f.hub->Node("edge-a").pending_reports == 0; }));
}

TEST_CASE("Dataset reports waiting for one object are written once and all ACKed",
          "[edgehub]") {
  Fixture f;
  REQUIRE(f.hub->Upsert("edge-a", DatasetResource("ds", "1", "edge-a")).ok());
  f.hub->MarkSynced();
  auto node = ConnectSynced(f, "edge-a", {Item("Dataset", "ds", "1")});

  node->Report(DatasetReport(10, "ds", 5));
  FakeReportHandler::Call& first = f.handler.WaitForCall(1);
  for (int seq = 11; seq <= 13; ++seq) node->Report(DatasetReport(seq, "ds", seq));
  CHECK(Eventually([&] { return f.hub->Node("edge-a").pending_reports == 4; }));
  first.done(ReportOutcome::Accepted());
  CHECK(node->NextReportAck().seq() == 10);

  // 11 and 12 are older states of the same dataset: only 13 is written...
  FakeReportHandler::Call& newest = f.handler.WaitForCall(2);
  CHECK(newest.report->seq() == 13);
  CHECK(newest.report->dataset().number_of_samples() == 13);
  newest.done(ReportOutcome::Retry("ApiError", "apiserver unavailable"));
  // ...and its answer is every one's: RETRY keeps all three in the LC's outbox.
  for (int seq = 11; seq <= 13; ++seq) {
    v1::ReportAck ack = node->NextReportAck();
    CHECK(ack.seq() == static_cast<uint64_t>(seq));
    CHECK(ack.result() == v1::REPORT_RETRY);
  }
  CHECK(f.handler.calls() == 2);
  CHECK(f.hub->metrics().reports_coalesced().Value() == 2);
  CHECK(f.hub->metrics().reports_retry().Value() == 3);
  CHECK(f.hub->Node("edge-a").pending_reports == 0);
}

// Found by fuzzing (tests/fuzz/RESULTS.md, finding 7): the report waiting behind the one with the
// handler was handed over when that one completed, without checking that the node still holds the
// object, so a node could write the status of an object just moved to another node.
TEST_CASE("a report waiting behind another is refused when its object leaves the node meanwhile",
          "[edgehub]") {
  Fixture f;
  const v1::Resource ds = DatasetResource("ds", "1", "edge-a");
  REQUIRE(f.hub->Upsert("edge-a", ds).ok());
  f.hub->MarkSynced();
  auto node = ConnectSynced(f, "edge-a", {Item("Dataset", "ds", "1")});

  node->Report(DatasetReport(10, "ds", 5));
  FakeReportHandler::Call& first = f.handler.WaitForCall(1);
  node->Report(DatasetReport(11, "ds", 6));
  CHECK(Eventually([&] { return f.hub->Node("edge-a").pending_reports == 2; }));
  // The controllers move the Dataset to edge-b while report 10 is being written.
  REQUIRE(f.hub->Remove("edge-a", ds.ref()).ok());
  REQUIRE(f.hub->Upsert("edge-b", DatasetResource("ds", "1", "edge-b")).ok());
  const v1::Change removal = node->NextChange();
  CHECK(removal.has_remove());
  node->Ack(removal);
  first.done(ReportOutcome::Accepted());

  CHECK(node->NextReportAck().seq() == 10);
  const v1::ReportAck refused = node->NextReportAck();
  CHECK(refused.seq() == 11);
  CHECK(refused.result() == v1::REPORT_REJECTED);
  CHECK(refused.reason() == "NotThisNode");
  CHECK(f.handler.calls() == 1);
  CHECK(f.hub->Node("edge-a").pending_reports == 0);
}

TEST_CASE("a chatty node is refused over its share and cannot delay a quiet node's report",
          "[edgehub]") {
  EdgeHub::Options options;
  options.max_held_reports = 64;
  options.min_report_share = 4;
  options.max_reports_dispatched = 2;
  Fixture f(options);
  std::vector<v1::InventoryItem> chatty_inventory;
  for (int i = 1; i <= 41; ++i) {
    const std::string name = "c" + std::to_string(i);
    REQUIRE(f.hub->Upsert("edge-a", DatasetResource(name, "1", "edge-a")).ok());
    chatty_inventory.push_back(Item("Dataset", name, "1"));
  }
  REQUIRE(f.hub->Upsert("edge-b", DatasetResource("q", "1", "edge-b")).ok());
  f.hub->MarkSynced();
  auto chatty = ConnectSynced(f, "edge-a", chatty_inventory);
  auto quiet = ConnectSynced(f, "edge-b", {Item("Dataset", "q", "1")});

  // Alone, the chatty node may hold half of the 64: reports 33..40 are answered RETRY.
  for (int i = 1; i <= 40; ++i) chatty->Report(DatasetReport(i, "c" + std::to_string(i), i));
  for (int seq = 33; seq <= 40; ++seq) {
    v1::ReportAck ack = chatty->NextReportAck();
    CHECK(ack.seq() == static_cast<uint64_t>(seq));
    CHECK(ack.result() == v1::REPORT_RETRY);
    CHECK(ack.reason() == "Busy");
  }
  CHECK(f.hub->Node("edge-a").pending_reports == 32);
  CHECK(f.handler.calls() == 2);  // the dispatch window

  quiet->Report(DatasetReport(1, "q", 7));
  CHECK(Eventually([&] { return f.hub->Node("edge-b").pending_reports == 1; }));
  chatty->Report(DatasetReport(41, "c41", 41));  // over its share now that two nodes hold some
  v1::ReportAck refused = chatty->NextReportAck();
  CHECK(refused.seq() == 41);
  CHECK(refused.result() == v1::REPORT_RETRY);

  // The handler completes in the order it was called; the quiet node's report is called after
  // at most one more of the chatty node's (its turn in the ring), not after its 30 others.
  std::size_t completed = 0;
  std::size_t quiet_call = 0;
  while (quiet_call == 0 && completed < 10) {
    f.handler.WaitForCall(completed + 1).done(ReportOutcome::Accepted());
    ++completed;
    for (std::size_t n = completed + 1; n <= f.handler.calls(); ++n) {
      if (f.handler.WaitForCall(n).node == "edge-b") quiet_call = n;
    }
  }
  CHECK(completed == 2);
  REQUIRE(quiet_call == 4);
  f.handler.WaitForCall(quiet_call).done(ReportOutcome::Accepted());
  v1::ReportAck quiet_ack = quiet->NextReportAck();
  CHECK(quiet_ack.seq() == 1);
  CHECK(quiet_ack.result() == v1::REPORT_ACCEPTED);
  CHECK(f.hub->metrics().reports_refused_share().Value() == 9);
  CHECK(f.hub->metrics().reports_refused_total().Value() == 0);
  CHECK(f.hub->Node("edge-b").pending_reports == 0);
}

TEST_CASE("a node refused for a bound is told when the GM expects room", "[edgehub]") {
  FakeClock clock;
  EdgeHub::Options options;
  options.max_held_reports = 64;
  options.min_report_share = 4;
  options.max_reports_dispatched = 2;
  options.clock = &clock;
  Fixture f(options);
  std::vector<v1::InventoryItem> inventory;
  for (int i = 1; i <= 40; ++i) {
    const std::string name = "c" + std::to_string(i);
    REQUIRE(f.hub->Upsert("edge-a", DatasetResource(name, "1", "edge-a")).ok());
    inventory.push_back(Item("Dataset", name, "1"));
  }
  f.hub->MarkSynced();
  auto node = ConnectSynced(f, "edge-a", inventory);

  // Nothing finished yet: no estimate, the LC's own backoff applies.
  for (int i = 1; i <= 33; ++i) node->Report(DatasetReport(i, "c" + std::to_string(i), i));
  v1::ReportAck first = node->NextReportAck();
  CHECK(first.seq() == 33);
  CHECK(first.reason() == "Busy");
  CHECK(first.retry_after_ms() == 0);

  // Two finished in the current second; 32 held again after two more: the GM expects to need
  // 32 x 1 s / 2 = 16 s for them.
  f.handler.WaitForCall(1).done(ReportOutcome::Accepted());
  f.handler.WaitForCall(2).done(ReportOutcome::Accepted());
  CHECK(node->NextReportAck().result() == v1::REPORT_ACCEPTED);
  CHECK(node->NextReportAck().result() == v1::REPORT_ACCEPTED);
  for (int i = 34; i <= 36; ++i) node->Report(DatasetReport(i, "c" + std::to_string(i), i));
  v1::ReportAck busy = node->NextReportAck();
  CHECK(busy.seq() == 36);
  CHECK(busy.result() == v1::REPORT_RETRY);
  CHECK(busy.retry_after_ms() == 16'000);

  // Nothing finished for 9 s more: the two are spread over 10 s, and gone once nothing finished
  // within the window.
  clock.Advance(absl::Seconds(9));
  node->Report(DatasetReport(37, "c37", 37));
  CHECK(node->NextReportAck().retry_after_ms() == 160'000);
  clock.Advance(absl::Seconds(2));
  node->Report(DatasetReport(38, "c38", 38));
  CHECK(node->NextReportAck().retry_after_ms() == 0);
}

// Answers every report at once, inside HandleReport, and records how deeply those calls nest.
class SynchronousHandler final : public ReportHandler {
 public:
  void HandleReport(std::string_view, std::shared_ptr<const v1::StatusReport>,
                    ReportCompletion done) override {
    ++depth_;
    max_depth_ = std::max(max_depth_, depth_);
    ++calls_;
    done(ReportOutcome::Accepted());
    --depth_;
  }
  int max_depth() const { return max_depth_; }
  int calls() const { return calls_; }

 private:
  int depth_ = 0;
  int max_depth_ = 0;
  int calls_ = 0;
};

TEST_CASE("a handler that completes at once gets the next report after it returns, not inside",
          "[edgehub]") {
  SynchronousHandler handler;
  EdgeHub::Options options;
  options.max_reports_dispatched = 4;
  options.report_handler = &handler;
  EdgeHub hub(options);
  EdgeHubServerOptions server_options;
  server_options.listen = "127.0.0.1:0";
  server_options.tls = TestCerts().ServerTls();
  auto server = EdgeHubServer::Start(&hub, server_options);
  REQUIRE(server.ok());
  std::vector<v1::InventoryItem> inventory;
  for (int i = 0; i < 50; ++i) {
    REQUIRE(hub.Upsert("edge-a", DatasetResource("d" + std::to_string(i), "1", "edge-a")).ok());
    inventory.push_back(Item("Dataset", "d" + std::to_string(i), "1"));
  }
  TestNode node((*server)->port(), TestCerts(), "edge-a");
  node.Hello("edge-a", inventory);
  ExpectHelloReply(node, "edge-a");
  for (int i = 0; i < 50; ++i) node.Report(DatasetReport(i + 1, "d" + std::to_string(i), i));
  CHECK(Eventually([&] { return hub.Node("edge-a").pending_reports == 50; }));
  hub.MarkSynced();  // hands the 50 held reports over on this thread
  CHECK(handler.calls() == 50);
  CHECK(handler.max_depth() == 1);
  CHECK(hub.Node("edge-a").pending_reports == 0);
  (*server)->Stop(absl::Seconds(1));
}

TEST_CASE("before MarkSynced a Hello gets no removes and reports wait", "[edgehub]") {
  Fixture f;
  REQUIRE(f.hub->Upsert("edge-a", DatasetResource("known", "1", "edge-a")).ok());
  auto node = f.Connect("edge-a");
  node->Hello("edge-a", {Item("Dataset", "known", "1"), Item("Dataset", "not-listed-yet", "1")});
  ExpectHelloReply(*node, "edge-a");
  node->Report(DatasetReport(1, "known", 3));

  // A controller adds another object while the registry is still filling: it is sent at once and
  // nothing (no remove, no ResyncDone) came before it.
  REQUIRE(f.hub->Upsert("edge-a", DatasetResource("new", "1", "edge-a")).ok());
  v1::Change change = node->NextChange();
  CHECK(Describe(change) == "upsert new@1");
  node->Ack(change);
  CHECK(Eventually([&] { return f.hub->Node("edge-a").pending_reports == 1; }));
  CHECK(f.handler.calls() == 0);

  // The controllers list "not-listed-yet" after all: nothing is to be removed.
  REQUIRE(f.hub->Upsert("edge-a", DatasetResource("not-listed-yet", "1", "edge-a")).ok());
  node->Report(DatasetReport(2, "stale-report", 3));
  CHECK(Eventually([&] { return f.hub->Node("edge-a").pending_reports == 2; }));
  f.hub->MarkSynced();
  // Control messages (the ReportAck of the held report about an object gone) may overtake the
  // ResyncDone; take both.
  v1::SyncResponse a = Expect(*node);
  v1::SyncResponse b = Expect(*node);
  if (a.has_report_ack()) std::swap(a, b);
  INFO(a.DebugString() << b.DebugString());
  REQUIRE(a.has_resync_done());
  CHECK(a.resync_done().removes() == 0);
  REQUIRE(b.has_report_ack());
  CHECK(b.report_ack().seq() == 2);
  CHECK(b.report_ack().reason() == "ObjectGone");
  CHECK(f.handler.WaitForCall(1).report->seq() == 1);
  CHECK(f.handler.calls() == 1);
}

TEST_CASE("the synced gate holds removes until the registry is filled", "[edgehub]") {
  Fixture f;
  auto node = f.Connect("edge-a");
  node->Hello("edge-a", {Item("Dataset", "kept", "1"), Item("Dataset", "deleted-while-down", "1")});
  ExpectHelloReply(*node, "edge-a");
  REQUIRE(f.hub->Upsert("edge-a", DatasetResource("kept", "1", "edge-a")).ok());
  f.hub->MarkSynced();
  v1::Change removal = node->NextChange();
  CHECK(Describe(removal) == "remove deleted-while-down");
  node->Ack(removal);
  v1::SyncResponse done = Expect(*node);
  REQUIRE(done.has_resync_done());
  CHECK(done.resync_done().removes() == 1);
}

TEST_CASE("a reconnecting node is resynced from its inventory", "[edgehub]") {
  Fixture f;
  REQUIRE(f.hub->Upsert("edge-a", DatasetResource("ds1", "1", "edge-a")).ok());
  REQUIRE(f.hub->Upsert("edge-a", DatasetResource("ds2", "1", "edge-a")).ok());
  f.hub->MarkSynced();
  {
    auto node = f.Connect("edge-a");
    node->Hello("edge-a");
    ExpectHelloReply(*node, "edge-a");
    node->Ack(node->NextChange());
    node->Ack(node->NextChange());
    REQUIRE(Expect(*node).has_resync_done());
    node->Cancel();
  }
  CHECK(Eventually([&] { return !f.hub->Node("edge-a").connected; }));
  CHECK(f.hub->metrics().connected_nodes().Value() == 0);
  // While the node is away its objects change.
  REQUIRE(f.hub->Upsert("edge-a", DatasetResource("ds1", "2", "edge-a")).ok());
  REQUIRE(f.hub->Remove("edge-a", DatasetResource("ds2", "1", "edge-a").ref()).ok());
  REQUIRE(f.hub->Upsert("edge-a", DatasetResource("ds3", "1", "edge-a", "u3")).ok());

  auto node = f.Connect("edge-a");
  node->Hello("edge-a", {Item("Dataset", "ds1", "1"), Item("Dataset", "ds2", "1"),
                         Item("Dataset", "ds3", "1", "old-uid")});
  ExpectHelloReply(*node, "edge-a");
  std::vector<std::string> changes;
  for (int i = 0; i < 3; ++i) changes.push_back(Describe(node->NextChange()));
  // ds3 was re-created (new uid) at the same version: still an upsert.
  CHECK(changes == std::vector<std::string>{"upsert ds1@2", "upsert ds3@1", "remove ds2"});
}

// The hub's gauge `name` (with label node=`node`, or no label for ""); -1 without that series.
double GaugeValue(EdgeHub& hub, const std::string& name, const std::string& node = "") {
  for (const prometheus::MetricFamily& family : hub.metrics().registry().Collect()) {
    if (family.name != name) continue;
    for (const prometheus::ClientMetric& metric : family.metric) {
      const bool match = node.empty() ? metric.label.empty()
                                      : metric.label.size() == 1 && metric.label[0].value == node;
      if (match) return metric.gauge.value;
    }
  }
  return -1;
}

constexpr char kDisconnectedSince[] = "nereid_edgehub_node_disconnected_timestamp_seconds";

TEST_CASE("a node whose stream ended counts as disconnected until it is back; one sent away does "
          "not",
          "[edgehub]") {
  FakeClock clock(absl::FromUnixSeconds(1'000'000));
  EdgeHub::Options options;
  options.clock = &clock;
  Fixture f(options);
  f.hub->MarkSynced();
  DisconnectedNodes& disconnected = f.hub->metrics().disconnected_nodes();
  ConnectSynced(f, "edge-a", {})->Cancel();
  REQUIRE(Eventually([&] { return disconnected.size() == 1; }));
  CHECK(GaugeValue(*f.hub, kDisconnectedSince, "edge-a") == 1'000'000);
  CHECK(GaugeValue(*f.hub, "nereid_edgehub_disconnected_nodes") == 1);

  clock.Advance(absl::Seconds(30));
  auto node = ConnectSynced(f, "edge-a", {});
  CHECK(disconnected.size() == 0);
  CHECK(GaugeValue(*f.hub, kDisconnectedSince, "edge-a") == -1);  // the series is gone, not 0

  // Ownership moved: the node is served by another replica.
  REQUIRE(f.hub->MoveNode("edge-a", "127.0.0.1:7"));
  REQUIRE(Eventually([&] { return !f.hub->Node("edge-a").connected; }));
  CHECK(disconnected.size() == 0);

  // A replica that stops serving streams forgets its disconnected nodes, and does not count the
  // nodes it cuts off.
  ConnectSynced(f, "edge-b", {})->Cancel();
  REQUIRE(Eventually([&] { return disconnected.size() == 1; }));
  auto c = ConnectSynced(f, "edge-c", {});
  f.hub->SetAcceptingStreams(false);
  REQUIRE(Eventually([&] { return !f.hub->Node("edge-c").connected; }));
  CHECK(disconnected.size() == 0);
  CHECK(GaugeValue(*f.hub, kDisconnectedSince, "edge-b") == -1);
}

TEST_CASE("a node whose difference overflows the queue is told to come back", "[edgehub]") {
  EdgeHub::Options options;
  options.max_queue = 2;
  Fixture f(options);
  for (int i = 0; i < 3; ++i) {
    REQUIRE(f.hub->Upsert("edge-a", DatasetResource("ds" + std::to_string(i), "1", "edge-a")).ok());
  }
  f.hub->MarkSynced();
  auto node = f.Connect("edge-a");
  node->Hello("edge-a");
  grpc::Status status = node->AwaitEnd();
  CHECK(status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
  // What the ended stream had queued no longer counts.
  CHECK(Eventually([&] { return f.hub->metrics().queue_depths().queued_changes() == 0; }));
  CHECK(f.hub->metrics().queue_depths().nodes_with_backlog() == 0);
}

TEST_CASE("controller calls are validated", "[edgehub]") {
  EdgeHub hub(EdgeHub::Options{});
  v1::Resource bad = DatasetResource("ds", "1", "edge-a");
  bad.mutable_ref()->set_kind("Model");
  CHECK(absl::IsInvalidArgument(hub.Upsert("edge-a", bad)));
  CHECK(absl::IsInvalidArgument(hub.Upsert("", DatasetResource("ds", "1", ""))));
  CHECK(absl::IsInvalidArgument(hub.Remove("edge-a", v1::ObjectRef())));
  CHECK(hub.Remove("never-seen", DatasetResource("ds", "1", "x").ref()).ok());
}

}  // namespace
}  // namespace nereid::gm
