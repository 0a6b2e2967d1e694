// Integration, fault injection between the GM and its API server: the real
// `globalmanager` and `localcontroller` against devapiserver with --enable-debug-faults, which
// fails the GM's requests on demand (tools/devapiserver/fault_injector.h) while kubectl goes on:
//   - every GM request answered 429 with Retry-After for a while, its watches expired at the start
//     so every informer relists into the 429s;
//   - then 500 for a while, again from expired watches;
//   - then a plain watch 410 (resourceVersion too old) with the server healthy.
// Meanwhile the node's count grows and a Dataset is created. The GM's request rate stays bounded
// while it is refused (measured with devapiserver's /debug/requests), each informer relists once
// after the 410, and afterwards `kubectl get` shows the node's counts, written once.

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "tests/integration/edge_cluster.h"
#include "tests/integration/loopback_helpers.h"

namespace nereid {
namespace {

using Json = nlohmann::json;
using testing::AppendLines;
using testing::DatasetYaml;
using testing::EdgeCluster;
using testing::Lc;
using testing::WaitFor;

constexpr absl::Duration kPoll = testing::kEdgePoll;
constexpr char kGmAgent[] = "nereid-globalmanager";

// The GM's requests so far by "verb resource" (devapiserver's /debug/requests).
std::map<std::string, int64_t> GmRequests(const EdgeCluster& cluster) {
  std::map<std::string, int64_t> out;
  Json counts = Json::parse(testing::HttpGet(cluster.api_port(), "/debug/requests").body,
                            nullptr, false);
  if (!counts.is_object()) return out;
  for (const Json& row : counts["requests"]) {
    if (!absl::StrContains(row.value("userAgent", ""), kGmAgent)) continue;
    out[absl::StrCat(row.value("verb", ""), " ", row.value("resource", ""))] +=
        row.value("count", int64_t{0});
  }
  return out;
}

int64_t Total(const std::map<std::string, int64_t>& counts) {
  int64_t total = 0;
  for (const auto& [key, n] : counts) total += n;
  return total;
}

// `after` minus `before`, per key.
std::map<std::string, int64_t> Since(const std::map<std::string, int64_t>& before,
                                     const std::map<std::string, int64_t>& after) {
  std::map<std::string, int64_t> out;
  for (const auto& [key, n] : after) {
    auto it = before.find(key);
    const int64_t d = n - (it == before.end() ? 0 : it->second);
    if (d != 0) out[key] = d;
  }
  return out;
}

Json PostFaults(const EdgeCluster& cluster, const Json& body) {
  testing::HttpReply reply = testing::HttpPost(cluster.api_port(), "/debug/faults", body.dump());
  REQUIRE(reply.status == 200);
  return Json::parse(reply.body, nullptr, false);
}

bool FaultsActive(const EdgeCluster& cluster) {
  Json state = Json::parse(testing::HttpGet(cluster.api_port(), "/debug/faults").body, nullptr,
                           false);
  return state.is_object() && state.value("active", true);
}

std::string DatasetResourceVersion(EdgeCluster& cluster, const std::string& name) {
  Json d = Json::parse(cluster.Kubectl({"get", "dataset", name, "-o", "json"}), nullptr, false);
  return d.is_object() ? d["metadata"].value("resourceVersion", "") : "";
}

struct Window {
  std::map<std::string, int64_t> sent;  // by "verb resource"
  double seconds = 0;
  int64_t requests = 0;
  int64_t injected = 0;
  double rate() const { return seconds > 0 ? static_cast<double>(requests) / seconds : 0; }
};

// Retry-After: 1 honoured means about one request a second per informer (its list) and per
// object written (a status, an Event), plus the one in flight when the window opens: not a hot
// loop, whose rate only round trips would bound. Checks that for every kind of request in `w`,
// with `objects` objects being written.
void CheckPacedByRetryAfter(const Window& w, int objects) {
  for (const auto& [key, n] : w.sent) {
    const bool informer = absl::StartsWith(key, "list ") || absl::StartsWith(key, "watch ");
    INFO(key << ": " << n << " requests in " << w.seconds << " s");
    CHECK(static_cast<double>(n) <= (informer ? 1 : objects) * (w.seconds + 2));
  }
}

// Fails every GM request with `code` for `seconds` after expiring every watch; returns what the
// GM sent meanwhile.
Window RefuseGm(EdgeCluster& cluster, int code, int seconds) {
  const auto before = GmRequests(cluster);
  const absl::Time start = absl::Now();
  PostFaults(cluster, {{"code", code},
                       {"retryAfterSeconds", 1},
                       {"durationSeconds", seconds},
                       {"userAgent", kGmAgent},
                       {"expireWatches", true}});
  REQUIRE(WaitFor([&] { return !FaultsActive(cluster); }, absl::Seconds(seconds + 10), kPoll));
  Window w;
  w.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  w.sent = Since(before, GmRequests(cluster));
  w.requests = Total(w.sent);
  Json state = Json::parse(testing::HttpGet(cluster.api_port(), "/debug/faults").body);
  w.injected = state.value("injected", int64_t{0});
  return w;
}

TEST_CASE("the GM rides out 429s, 500s and expired watches without a hot loop and converges",
          "[integration][faults]") {
  EdgeCluster cluster(testing::BuiltEdgeBinaries(), "api-faults-", "", {"--enable-debug-faults"});
  const std::string data = cluster.dir().File("root-edge-a/data");
  std::filesystem::create_directories(data);
  AppendLines(data + "/a.txt", 1, 10);
  AppendLines(data + "/b.txt", 1, 7);
  // One replica without leader election: refused Lease renewals past the renew deadline end the
  // process by design (client-go's choice), which is not this case.
  cluster.StartGm({"--leader-elect=false"});
  Lc lc = cluster.StartNodeLc("edge-a");
  REQUIRE(WaitFor([&] { return lc.Synced(); }, absl::Seconds(20), kPoll));
  cluster.Kubectl({"apply", "-f", "-"}, DatasetYaml("da", "edge-a", "/data/a.txt"));
  REQUIRE(cluster.WaitSamples("da", 10, absl::Seconds(30)));
  // The steady state, for scale: what the GM sends the API server when nothing happens.
  const auto idle_before = GmRequests(cluster);
  const absl::Time idle_start = absl::Now();
  REQUIRE_FALSE(WaitFor([] { return false; }, absl::Seconds(3), kPoll));
  const double idle_rate = static_cast<double>(Total(Since(idle_before, GmRequests(cluster)))) /
                           absl::ToDoubleSeconds(absl::Now() - idle_start);

  // 429 with Retry-After: 1 for 6 s, every informer relisting into it; the node's count grows and
  // a Dataset is created (kubectl is not refused).
  AppendLines(data + "/a.txt", 11, 20);
  cluster.Kubectl({"apply", "-f", "-"}, DatasetYaml("db", "edge-a", "/data/b.txt"));
  const Window throttled = RefuseGm(cluster, 429, 6);
  // 500 for 6 s, again from expired watches; the count grows again.
  AppendLines(data + "/a.txt", 21, 30);
  const Window failing = RefuseGm(cluster, 500, 6);

  // A plain 410 with the server healthy: every informer relists once and watches again.
  const auto before_gone = GmRequests(cluster);
  const absl::Time healthy_since = absl::Now();
  PostFaults(cluster, {{"expireWatches", true}});
  CHECK(cluster.WaitSamples("da", 30, absl::Seconds(60)));
  CHECK(cluster.WaitSamples("db", 7, absl::Seconds(60)));
  const double converge_seconds = absl::ToDoubleSeconds(absl::Now() - healthy_since);
  CHECK(WaitFor([&] { return lc.OutboxDepth() == 0; }, absl::Seconds(30), kPoll));
  CHECK(lc.LocalSamples("da") == 30);
  CHECK(cluster.GmDatasetReports("rejected") == 0);

  // Converged: a count that did not change is not written again.
  const std::string settled = DatasetResourceVersion(cluster, "da");
  REQUIRE_FALSE(settled.empty());
  CHECK_FALSE(WaitFor([&] { return DatasetResourceVersion(cluster, "da") != settled; },
                      absl::Seconds(4), kPoll));
  const auto after_gone = Since(before_gone, GmRequests(cluster));

  INFO("GM requests/s: idle " << idle_rate << "; 429 window " << throttled.rate() << " ("
                              << throttled.requests << " in " << throttled.seconds << " s, "
                              << throttled.injected << " refused); 500 window " << failing.rate()
                              << " (" << failing.requests << " in " << failing.seconds << " s, "
                              << failing.injected << " refused); converged " << converge_seconds
                              << " s after the 410");
  CHECK(throttled.injected > 0);
  CHECK(failing.injected > 0);
  CheckPacedByRetryAfter(throttled, /*objects=*/2);  // da and db
  CheckPacedByRetryAfter(failing, /*objects=*/2);
  // After the 410 every informer relisted — once, not in a loop.
  int64_t lists = 0;
  for (const auto& [key, n] : after_gone) {
    if (!absl::StartsWith(key, "list ")) continue;
    INFO(key << ": " << n << " lists after the 410");
    CHECK(n <= 2);
    lists += n;
  }
  CHECK(lists > 0);
  WARN("api faults: GM requests/s idle " << idle_rate << ", during 429 " << throttled.rate()
                                         << ", during 500 " << failing.rate() << "; converged "
                                         << converge_seconds << " s after the 410; lists after "
                                         << "the 410: " << lists);
}

}  // namespace
}  // namespace nereid
