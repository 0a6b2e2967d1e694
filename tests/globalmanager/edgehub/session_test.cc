#include "globalmanager/edgehub/session.h"

#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "common/net/edge_protocol.h"
#include "common/time/fake_clock.h"
#include "tests/globalmanager/edgehub/test_node.h"

namespace nereid::gm {
namespace {

namespace v1 = edge::v1;

// Records what the session writes; the test completes each write by hand, as gRPC would.
class RecordingTransport final : public SessionTransport {
 public:
  void Write(const v1::SyncResponse* message) override { written.push_back(*message); }
  void End(grpc::Status, const std::string&) override { ended = true; }

  std::vector<v1::SyncResponse> written;
  bool ended = false;
};

TEST_CASE("a change's dispatch time is split into queued, writing and at the node",
          "[edgehub][session]") {
  FakeClock clock;
  Session session({.clock = &clock}, /*id=*/1);
  RecordingTransport transport;
  session.Attach(&transport);
  session.Establish("edge-a", nullptr, v1::Hello(), v1::SyncResponse());
  session.Pump();  // the HelloReply (a control message: no change to time)
  REQUIRE(transport.written.size() == 1);
  session.OnWriteDone(true);

  const v1::Resource resource = testing::DatasetResource("d", "1", "edge-a");
  REQUIRE(session.EnqueueUpsert(net::ObjectKey(resource.ref()),
                                std::make_shared<const v1::Resource>(resource)));
  clock.Advance(absl::Milliseconds(5));
  session.Pump();
  REQUIRE(transport.written.size() == 2);
  REQUIRE(transport.written.back().has_change());
  clock.Advance(absl::Milliseconds(7));
  session.OnWriteDone(true);
  clock.Advance(absl::Milliseconds(11));

  v1::ChangeAck ack;
  ack.set_nonce(transport.written.back().change().nonce());
  std::optional<Session::AckedChange> acked = session.OnChangeAck(ack);
  REQUIRE(acked.has_value());
  CHECK(acked->queued == absl::Milliseconds(5));
  CHECK(acked->writing == absl::Milliseconds(7));
  CHECK(acked->at_node == absl::Milliseconds(11));
  CHECK(acked->latency == absl::Milliseconds(23));
}

TEST_CASE("an ACK read before its write completed counts as writing", "[edgehub][session]") {
  FakeClock clock;
  Session session({.clock = &clock}, 1);
  RecordingTransport transport;
  session.Attach(&transport);
  session.Establish("edge-a", nullptr, v1::Hello(), v1::SyncResponse());
  session.Pump();
  session.OnWriteDone(true);
  const v1::Resource resource = testing::DatasetResource("d", "1", "edge-a");
  REQUIRE(session.EnqueueUpsert(net::ObjectKey(resource.ref()),
                                std::make_shared<const v1::Resource>(resource)));
  session.Pump();
  clock.Advance(absl::Milliseconds(3));
  v1::ChangeAck ack;
  ack.set_nonce(transport.written.back().change().nonce());
  std::optional<Session::AckedChange> acked = session.OnChangeAck(ack);
  REQUIRE(acked.has_value());
  CHECK(acked->queued == absl::ZeroDuration());
  CHECK(acked->writing == absl::Milliseconds(3));
  CHECK(acked->at_node == absl::ZeroDuration());
  session.OnWriteDone(true);  // the late completion of a write whose change is gone: harmless
}

}  // namespace
}  // namespace nereid::gm
