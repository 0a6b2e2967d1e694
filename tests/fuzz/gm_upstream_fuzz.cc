// What a malicious authenticated node can make the GM's edge hub do: one Sync stream from a peer
// whose certificate names edge-a, carrying any sequence of upstream messages (Hellos claiming any
// node and inventory, change ACKs/NACKs with guessed or real nonces, reports about any object),
// structured or raw protobuf bytes, interleaved with the controllers' own Upsert/Remove calls and
// report completions. The hub runs as in production; only the gRPC reactor is replaced by a
// transport that records what would be written.
//
// Properties (the isolation between nodes):
//   - the stream is only ever established as edge-a;
//   - only edge-a's objects are ever written to it (never another node's specs);
//   - the report handler only gets reports from edge-a about objects the hub sends edge-a at that
//     moment (same uid when both are known);
//   - delivery callbacks only name edge-a and objects written to its stream.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

#include "common/net/edge_protocol.h"
#include "common/net/peer_identity.h"
#include "globalmanager/edgehub/delivery_listener.h"
#include "globalmanager/edgehub/edge_hub.h"
#include "globalmanager/edgehub/report_handler.h"
#include "globalmanager/edgehub/session.h"
#include "tests/fuzz/edge_messages.h"
#include "tests/fuzz/fuzz_input.h"

namespace nereid {
namespace {

namespace v1 = edge::v1;
using gm::EdgeHub;
using gm::ReportOutcome;

constexpr char kPeer[] = "edge-a";
constexpr char kOther[] = "edge-b";

// The hub's registry as the controllers set it: node -> object key -> uid.
using Registry = std::map<std::string, std::map<std::string, std::string>>;

class RecordingTransport final : public gm::SessionTransport {
 public:
  void Write(const v1::SyncResponse* message) override {
    written.push_back(*message);
    write_pending = true;
  }
  void End(grpc::Status, const std::string&) override { ended = true; }
  std::vector<v1::SyncResponse> written;
  bool write_pending = false;
  bool ended = false;
};

class CheckingHandler final : public gm::ReportHandler {
 public:
  explicit CheckingHandler(const Registry* registry) : registry_(registry) {}
  void HandleReport(std::string_view node, std::shared_ptr<const v1::StatusReport> report,
                    gm::ReportCompletion done) override {
    FUZZ_CHECK(node == kPeer);
    const auto& held = registry_->at(kPeer);
    auto it = held.find(net::ObjectKey(report->ref()));
    FUZZ_CHECK(it != held.end());
    FUZZ_CHECK(report->ref().uid().empty() || it->second.empty() ||
               report->ref().uid() == it->second);
    pending.push_back(std::move(done));
  }
  std::deque<gm::ReportCompletion> pending;

 private:
  const Registry* registry_;
};

class CheckingListener final : public gm::DeliveryListener {
 public:
  explicit CheckingListener(const RecordingTransport* transport) : transport_(transport) {}
  void OnChangeAcked(std::string_view node, const v1::ObjectRef& ref, std::string_view,
                     bool) override {
    Check(node, ref);
  }
  void OnChangeNacked(std::string_view node, const v1::ObjectRef& ref, std::string_view,
                      const absl::Status&) override {
    Check(node, ref);
  }

 private:
  void Check(std::string_view node, const v1::ObjectRef& ref) {
    FUZZ_CHECK(node == kPeer);
    bool sent = false;
    for (const v1::SyncResponse& m : transport_->written) {
      if (!m.has_change()) continue;
      const v1::ObjectRef& sent_ref =
          m.change().has_upsert() ? m.change().upsert().ref() : m.change().remove().ref();
      sent = sent || net::ObjectKey(sent_ref) == net::ObjectKey(ref);
    }
    FUZZ_CHECK(sent);
  }
  const RecordingTransport* transport_;
};

v1::Resource ValidResource(const char* kind, const char* ns, const char* name, const char* uid) {
  v1::Resource resource;
  resource.mutable_ref()->set_kind(kind);
  resource.mutable_ref()->set_namespace_(ns);
  resource.mutable_ref()->set_name(name);
  resource.mutable_ref()->set_uid(uid);
  resource.set_version("1");
  const std::string_view k = kind;
  if (k == "Dataset") {
    resource.mutable_dataset()->set_url("/data/a.txt");
    resource.mutable_dataset()->set_format("txt");
  } else if (k == "Model") {
    resource.mutable_model()->set_url("/models/m");
  } else if (k == "JointInferenceService") {
    resource.mutable_joint_inference_service()->mutable_edge_worker()->set_model_name("m");
  } else {
    resource.mutable_worker()->set_job_kind("JointInferenceService");
    resource.mutable_worker()->set_job_name("a");
    resource.mutable_worker()->set_worker_type("edge");
  }
  return resource;
}

struct Candidate {
  const char* node;
  const char* kind;
  const char* ns;
  const char* name;
  const char* uid;
};

// Objects the controllers may place, on either node, with names the fuzzed messages also use.
constexpr Candidate kCandidates[] = {
    {kPeer, "Dataset", "default", "a", "u1"},  {kPeer, "Model", "default", "b", "u1"},
    {kPeer, "JointInferenceService", "default", "a", ""},
    {kOther, "Dataset", "default", "c", "u2"}, {kOther, "Model", "other", "a", "u2"},
    {kOther, "Worker", "default", "b", "u1"},  {kOther, "Dataset", "default", "a", "u2"},
};

void ControllerStep(FuzzedDataProvider& in, EdgeHub& hub, Registry& registry) {
  const Candidate& c = kCandidates[in.ConsumeIntegralInRange<size_t>(0, std::size(kCandidates) - 1)];
  v1::Resource resource = ValidResource(c.kind, c.ns, c.name, c.uid);
  const std::string key = net::ObjectKey(resource.ref());
  if (in.ConsumeBool()) {
    FUZZ_CHECK(hub.Upsert(c.node, resource).ok());
    registry[c.node][key] = c.uid;
  } else {
    FUZZ_CHECK(hub.Remove(c.node, resource.ref()).ok());
    registry[c.node].erase(key);
  }
}

v1::SyncRequest NodeMessage(FuzzedDataProvider& in, const RecordingTransport& transport) {
  v1::SyncRequest request;
  if (fuzz::MaybeRaw(in, &request)) return request;
  switch (in.ConsumeIntegralInRange(0, 3)) {
    case 0: {
      v1::Hello* hello = request.mutable_hello();
      hello->set_node_name(fuzz::PoolOrBytes(in, {kPeer, kOther, ""}));
      hello->set_protocol_version(in.ConsumeBool() ? net::kEdgeProtocolVersion
                                                   : in.ConsumeIntegral<uint32_t>());
      const int items = in.ConsumeIntegralInRange(0, 4);
      for (int i = 0; i < items; ++i) {
        v1::InventoryItem* item = hello->add_inventory();
        *item->mutable_ref() = fuzz::MakeRef(in);
        item->set_version(fuzz::PoolOrBytes(in, {"1", "2"}));
      }
      break;
    }
    case 1: {
      v1::ChangeAck* ack = request.mutable_change_ack();
      // A nonce the hub really sent, or a guess.
      std::vector<std::string> nonces;
      for (const v1::SyncResponse& m : transport.written) {
        if (m.has_change()) nonces.push_back(m.change().nonce());
      }
      if (!nonces.empty() && in.ConsumeBool()) {
        ack->set_nonce(nonces[in.ConsumeIntegralInRange<size_t>(0, nonces.size() - 1)]);
      } else {
        ack->set_nonce(in.ConsumeRandomLengthString(8));
      }
      *ack->mutable_ref() = fuzz::MakeRef(in);
      ack->set_version(fuzz::PoolOrBytes(in, {"1", "2"}));
      if (in.ConsumeBool()) {
        ack->mutable_error_detail()->set_code(in.ConsumeIntegral<int32_t>());
        ack->mutable_error_detail()->set_message(in.ConsumeRandomLengthString(16));
      }
      break;
    }
    default:
      *request.mutable_report() = fuzz::MakeReport(in);
      break;
  }
  return request;
}

ReportOutcome SomeOutcome(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange(0, 2)) {
    case 0: return ReportOutcome::Accepted();
    case 1: return ReportOutcome::Rejected("Invalid", "x");
    default: return ReportOutcome::Retry("ApiError", "x");
  }
}

}  // namespace
}  // namespace nereid

NEREID_FUZZ_QUIET_INITIALIZE()

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nereid;
  FuzzedDataProvider in(data, size);
  Registry registry = {{kPeer, {}}, {kOther, {}}};
  RecordingTransport transport;
  CheckingHandler handler(&registry);
  CheckingListener listener(&transport);
  EdgeHub::Options options;
  options.max_in_flight = 4;
  options.max_pending_reports = 4;
  options.report_handler = &handler;
  options.delivery_listener = &listener;
  {
    EdgeHub hub(options);
    auto session = std::make_shared<gm::Session>(gm::Session::Options{.max_in_flight = 4}, 1);
    session->Attach(&transport);
    gm::StreamPeer peer;
    peer.identity.authenticated = true;
    peer.identity.common_name = kPeer;
    peer.identity.dns_names = {kPeer};

    for (int step = 0; step < 48 && in.remaining_bytes() > 0; ++step) {
      switch (in.ConsumeIntegralInRange(0, 5)) {
        case 0: ControllerStep(in, hub, registry); break;
        case 1:
          if (!hub.synced()) hub.MarkSynced();
          break;
        case 2:
          if (!handler.pending.empty()) {
            gm::ReportCompletion done = std::move(handler.pending.front());
            handler.pending.pop_front();
            done(SomeOutcome(in));
          }
          break;
        default:
          if (v1::SyncRequest request = NodeMessage(in, transport);
              !session->finishing() && fuzz::OverTheWire(&request)) {
            (void)hub.OnRequest(session, peer, request);
          }
          break;
      }
      session->Pump();
      // The stream writes one message at a time; complete each write as gRPC would.
      for (int writes = 0; transport.write_pending && writes < 1000; ++writes) {
        transport.write_pending = false;
        session->OnWriteDone(true);
        session->Pump();
      }
      FUZZ_CHECK(!session->established() || session->node() == kPeer);
    }
    for (const v1::SyncResponse& m : transport.written) {
      if (m.has_change() && m.change().has_upsert()) {
        // Only ever objects placed on edge-a (possibly removed since).
        bool placed_on_peer = false;
        for (const Candidate& c : kCandidates) {
          const v1::ObjectRef& sent = m.change().upsert().ref();
          placed_on_peer = placed_on_peer ||
                           (std::string_view(c.node) == kPeer && sent.kind() == c.kind &&
                            sent.namespace_() == c.ns && sent.name() == c.name &&
                            sent.uid() == c.uid);
        }
        FUZZ_CHECK(placed_on_peer);
      }
    }
    while (!handler.pending.empty()) {
      gm::ReportCompletion done = std::move(handler.pending.front());
      handler.pending.pop_front();
      done(ReportOutcome::Accepted());
    }
    session->RequestFinish(grpc::Status::OK);
    session->Pump();
    session->Detach();
    hub.OnSessionDone(session, "");
  }
  return 0;
}
