// The hub's NodeListener and version reporting: a connect with the LC's release and commit, the
// summaries of the current stream, a disconnect only when the node's current stream ends (not a
// replaced one), the node-summary capability in the HelloReply, and the gauge of connected LC
// versions.

#include <catch2/catch.hpp>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "globalmanager/edgehub/edge_hub.h"
#include "globalmanager/edgehub/server.h"
#include "prometheus/text_serializer.h"
#include "tests/common/net/test_certs.h"
#include "tests/fakes/eventually.h"
#include "tests/globalmanager/edgehub/test_node.h"

namespace nereid::gm {
namespace {

namespace v1 = edge::v1;
using ::nereid::fakes::Eventually;
using ::nereid::testing::TestCerts;
using ::nereid::testing::TestNode;

class RecordingNodeListener final : public NodeListener {
 public:
  struct Event {
    std::string what;  // connected, summary, disconnected
    std::string node;
    uint64_t stream = 0;
    std::string detail;  // version/commit, datasets
  };

  void OnNodeConnected(const NodeConnection& c) override {
    Add({"connected", std::string(c.node), c.stream,
         std::string(c.lc_version) + "/" + std::string(c.lc_commit)});
  }
  void OnNodeDisconnected(std::string_view node, uint64_t stream, absl::Time) override {
    Add({"disconnected", std::string(node), stream, ""});
  }
  void OnNodeSummary(std::string_view node, uint64_t stream,
                     const v1::NodeSummary& summary) override {
    Add({"summary", std::string(node), stream, std::to_string(summary.datasets())});
  }
  std::vector<Event> events() const {
    absl::MutexLock lock(&mu_);
    return events_;
  }

 private:
  void Add(Event event) {
    absl::MutexLock lock(&mu_);
    events_.push_back(std::move(event));
  }
  mutable absl::Mutex mu_;
  std::vector<Event> events_ ABSL_GUARDED_BY(mu_);
};

struct Fixture {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  RecordingNodeListener listener;
  std::unique_ptr<EdgeHub> hub;
  std::unique_ptr<EdgeHubServer> server;

  Fixture() {
    EdgeHub::Options options;
    options.registry = registry;
    options.node_listener = &listener;
    hub = std::make_unique<EdgeHub>(options);
    hub->MarkSynced();
    EdgeHubServerOptions server_options;
    server_options.listen = "127.0.0.1:0";
    server_options.tls = TestCerts().ServerTls();
    auto started = EdgeHubServer::Start(hub.get(), server_options);
    REQUIRE(started.ok());
    server = std::move(*started);
  }
  ~Fixture() { server->Stop(absl::Seconds(1)); }

  // Connects `node` as an LC of `version`/`commit`, through its ResyncDone; checks the reply
  // announces the summary capability.
  std::unique_ptr<TestNode> Connect(const std::string& node, const std::string& version,
                                    const std::string& commit) {
    auto stream = std::make_unique<TestNode>(server->port(), TestCerts(), node);
    v1::SyncRequest request;
    request.mutable_hello()->set_node_name(node);
    request.mutable_hello()->set_lc_version(version);
    request.mutable_hello()->set_lc_commit(commit);
    request.mutable_hello()->set_protocol_version(1);
    stream->Send(request);
    auto reply = stream->Next();
    REQUIRE(reply.has_value());
    REQUIRE(reply->has_hello_reply());
    CHECK(std::vector<std::string>(reply->hello_reply().capabilities().begin(),
                                   reply->hello_reply().capabilities().end()) ==
          std::vector<std::string>{"node-summary"});
    auto done = stream->Next();
    REQUIRE(done.has_value());
    REQUIRE(done->has_resync_done());
    return stream;
  }

  // The text of the hub's /metrics.
  std::string Metrics() const {
    std::ostringstream out;
    prometheus::TextSerializer().Serialize(out, registry->Collect());
    return out.str();
  }
};

std::string VersionSeries(const std::string& version, int count) {
  return "nereid_edgehub_connected_lc_versions{version=\"" + version + "\"} " +
         std::to_string(count);
}

TEST_CASE("the node listener hears connects, summaries and the current stream's end",
          "[edgehub]") {
  Fixture f;
  auto first = f.Connect("edge-a", "0.4.0", "0123456789ab");
  REQUIRE(Eventually([&] { return f.listener.events().size() == 1; }));
  const auto connected = f.listener.events()[0];
  CHECK(connected.what == "connected");
  CHECK(connected.node == "edge-a");
  CHECK(connected.detail == "0.4.0/0123456789ab");
  CHECK(f.Metrics().find(VersionSeries("0.4.0", 1)) != std::string::npos);

  v1::SyncRequest summary;
  summary.mutable_summary()->set_datasets(3);
  first->Send(summary);
  REQUIRE(Eventually([&] { return f.listener.events().size() == 2; }));
  CHECK(f.listener.events()[1].what == "summary");
  CHECK(f.listener.events()[1].stream == connected.stream);
  CHECK(f.listener.events()[1].detail == "3");

  // A newer stream replaces the first: a connect of a later stream, no disconnect for the first.
  auto second = f.Connect("edge-a", "0.5.0", "fedcba987654");
  REQUIRE(first->AwaitEnd().error_code() == grpc::StatusCode::ABORTED);
  REQUIRE(Eventually([&] { return f.listener.events().size() >= 3; }));
  const auto reconnected = f.listener.events()[2];
  CHECK(reconnected.what == "connected");
  CHECK(reconnected.stream > connected.stream);
  CHECK(f.Metrics().find(VersionSeries("0.4.0", 0)) != std::string::npos);
  CHECK(f.Metrics().find(VersionSeries("0.5.0", 1)) != std::string::npos);

  second->Cancel();
  REQUIRE(Eventually([&] { return f.listener.events().size() == 4; }));
  CHECK(f.listener.events()[3].what == "disconnected");
  CHECK(f.listener.events()[3].stream == reconnected.stream);
  CHECK(f.Metrics().find(VersionSeries("0.5.0", 0)) != std::string::npos);
}

TEST_CASE("the versions gauge is bounded: long names cut, many versions pooled", "[edgehub]") {
  prometheus::Registry registry;
  LcVersionGauge gauge(registry);
  CHECK(gauge.Label("") == "unknown");
  CHECK(gauge.Label(std::string(100, 'v')).size() == LcVersionGauge::kMaxVersionLength);
  for (std::size_t i = 0; i < LcVersionGauge::kMaxVersions + 5; ++i) {
    gauge.Connected(gauge.Label("1.0." + std::to_string(i)));
  }
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, registry.Collect());
  CHECK(out.str().find("nereid_edgehub_connected_lc_versions{version=\"other\"} 6") !=
        std::string::npos);
  CHECK(gauge.Label("1.0.0") == "1.0.0");  // one already counted keeps its label
}

}  // namespace
}  // namespace nereid::gm
