// Fan-out measurement, hidden from the default run (Catch tag [.]):
//   ./lc_cloudlink_test "[perf]"   (env NEREID_PERF_NODES, NEREID_PERF_OBJECTS to scale)
// N CloudLinks (one per node, each with its own certificate) against one hub over mTLS in one
// process: time from the controller's Upsert to the node's ACK for every object, and upstream
// reports absorbed per second when the handler completes at once.

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "globalmanager/edgehub/edge_hub.h"
#include "globalmanager/edgehub/server.h"
#include "localcontroller/cloudlink/cloud_link.h"
#include "tests/common/net/test_certs.h"
#include "tests/fakes/eventually.h"
#include "tests/globalmanager/edgehub/test_node.h"
#include "tests/localcontroller/cloudlink/fakes.h"

namespace nereid::lc {
namespace {

namespace v1 = edge::v1;

int EnvInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value == nullptr ? fallback : std::max(1, std::atoi(value));
}

class AckClock final : public gm::DeliveryListener {
 public:
  void OnChangeAcked(std::string_view node, const v1::ObjectRef& ref, std::string_view,
                     bool) override {
    absl::MutexLock lock(&mu_);
    acked_[std::string(node) + "/" + ref.name()] = absl::Now();
  }
  void OnChangeNacked(std::string_view, const v1::ObjectRef&, std::string_view,
                      const absl::Status&) override {}
  std::size_t count() {
    absl::MutexLock lock(&mu_);
    return acked_.size();
  }
  absl::flat_hash_map<std::string, absl::Time> acked() {
    absl::MutexLock lock(&mu_);
    return acked_;
  }

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, absl::Time> acked_ ABSL_GUARDED_BY(mu_);
};

class InstantHandler final : public gm::ReportHandler {
 public:
  void HandleReport(std::string_view, std::shared_ptr<const v1::StatusReport>,
                    gm::ReportCompletion done) override {
    count_.fetch_add(1);
    done(gm::ReportOutcome::Accepted());
  }
  int count() const { return count_.load(); }

 private:
  std::atomic<int> count_{0};
};

double Percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(p * (values.size() - 1))];
}

TEST_CASE("fan-out: create-to-ack latency and reports absorbed", "[.][perf]") {
  const int nodes = EnvInt("NEREID_PERF_NODES", 50);
  const int objects = EnvInt("NEREID_PERF_OBJECTS", 10);
  std::string names;
  for (int n = 0; n < nodes; ++n) names += " node-" + std::to_string(n);
  auto certs = ::nereid::testing::MakeCertSet(names);

  AckClock acks;
  InstantHandler handler;
  gm::EdgeHub::Options hub_options;
  hub_options.delivery_listener = &acks;
  hub_options.report_handler = &handler;
  gm::EdgeHub hub(hub_options);
  hub.MarkSynced();
  gm::EdgeHubServerOptions server_options;
  server_options.listen = "127.0.0.1:0";
  server_options.tls = certs->set().ServerTls();
  auto server = gm::EdgeHubServer::Start(&hub, server_options);
  REQUIRE(server.ok());

  std::vector<std::unique_ptr<testing::FakeStore>> stores;
  std::vector<std::unique_ptr<testing::FakeOutbox>> outboxes;
  std::vector<std::unique_ptr<CloudLink>> links;
  for (int n = 0; n < nodes; ++n) {
    const std::string node = "node-" + std::to_string(n);
    stores.push_back(std::make_unique<testing::FakeStore>());
    outboxes.push_back(std::make_unique<testing::FakeOutbox>());
    CloudLinkOptions options;
    options.gm_address = "127.0.0.1:" + std::to_string((*server)->port());
    options.node_name = node;
    options.tls = certs->set().ClientTls(node);
    auto link = CloudLink::Create(options, stores.back().get(), outboxes.back().get());
    REQUIRE(link.ok());
    links.push_back(std::move(*link));
    links.back()->Start();
  }
  const auto wait = [](const std::function<bool()>& pred, absl::Duration limit) {
    return fakes::Eventually(pred, limit, absl::Milliseconds(2));
  };
  REQUIRE(
      wait([&] { return hub.metrics().connected_nodes().Value() == nodes; }, absl::Seconds(60)));

  // Downstream: create every object, measure Upsert -> ACK.
  absl::flat_hash_map<std::string, absl::Time> created;
  const absl::Time start = absl::Now();
  for (int o = 0; o < objects; ++o) {
    for (int n = 0; n < nodes; ++n) {
      const std::string node = "node-" + std::to_string(n);
      const std::string name = "ds-" + std::to_string(o);
      created[node + "/" + name] = absl::Now();
      REQUIRE(hub.Upsert(node, ::nereid::testing::DatasetResource(name, "1", node)).ok());
    }
  }
  const std::size_t total = static_cast<std::size_t>(nodes) * objects;
  REQUIRE(wait([&] { return acks.count() == total; }, absl::Seconds(120)));
  const absl::Duration downstream = absl::Now() - start;
  std::vector<double> latencies_ms;
  for (const auto& [key, at] : acks.acked()) {
    latencies_ms.push_back(absl::ToDoubleMilliseconds(at - created[key]));
  }

  // Upstream: every node reports on every object; the handler completes at once.
  const absl::Time up_start = absl::Now();
  for (int n = 0; n < nodes; ++n) {
    for (int o = 0; o < objects; ++o) {
      outboxes[n]->Enqueue(::nereid::testing::DatasetReport(0, "ds-" + std::to_string(o), o));
    }
  }
  REQUIRE(wait(
      [&] {
        for (auto& outbox : outboxes) {
          if (outbox->depth() != 0) return false;
        }
        return true;
      },
      absl::Seconds(120)));
  const absl::Duration upstream = absl::Now() - up_start;

  WARN("fan-out over mTLS, " << nodes << " nodes x " << objects << " datasets: " << total
                             << " changes in " << downstream << " ("
                             << static_cast<int>(total / absl::ToDoubleSeconds(downstream))
                             << "/s), create->ack p50 " << Percentile(latencies_ms, 0.5)
                             << " ms p99 " << Percentile(latencies_ms, 0.99) << " ms; "
                             << handler.count() << " reports absorbed in " << upstream << " ("
                             << static_cast<int>(handler.count() / absl::ToDoubleSeconds(upstream))
                             << "/s)");
  for (auto& link : links) link->Stop();
  (*server)->Stop(absl::Seconds(1));
}

}  // namespace
}  // namespace nereid::lc
