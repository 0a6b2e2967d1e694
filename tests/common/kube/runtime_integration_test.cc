// Integration: the kube runtime over the real RestClient against a devapiserver process on a free
// loopback port — informer convergence (add/update/delete, a server restart with --data that
// forces a 410 relist with a tombstone), optimistic-concurrency retry, and two candidate processes
// handing a Lease over when the leader stops or dies.

#include <signal.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/kube/config.h"
#include "common/kube/errors.h"
#include "common/kube/leader_election.h"
#include "common/kube/rest_client.h"
#include "common/kube/retry.h"
#include "common/kube/shared_informer.h"
#include "tests/fakes/intercepting_kube_client.h"
#include "tests/support/subprocess.h"

namespace nereid::kube {
namespace {

using testing::Subprocess;
using testing::TempDir;
using testing::WaitFor;

const std::string kServerBin = NEREID_DEVAPISERVER_BIN;
const std::string kCandidateBin = NEREID_LEASE_CANDIDATE_BIN;

// A devapiserver process persisting to a file in `dir`; Restart() keeps its port and data.
class Server {
 public:
  explicit Server(const TempDir& dir) : dir_(dir) { Start("127.0.0.1:0"); }

  void Start(const std::string& listen) {
    Subprocess::Options options;
    // A short watch history, so a reflector that misses a few changes must relist.
    options.argv = {kServerBin,
                    "--listen",
                    listen,
                    "--data",
                    dir_.File("data.db"),
                    "--kubeconfig-out",
                    Kubeconfig(),
                    "--watch-history",
                    "3",
                    "--log-level",
                    "warning"};
    auto started = Subprocess::Start(std::move(options));
    REQUIRE(started.ok());
    process_ = *std::move(started);
    auto line = process_->ReadLine(absl::Seconds(20));
    INFO(line.status().ToString());
    REQUIRE(line.ok());
    url_ = testing::ListenUrl(*line);
    REQUIRE(url_.rfind("http://127.0.0.1:", 0) == 0);
  }

  void Restart() {
    REQUIRE(process_->Stop(absl::Seconds(10)).ok());
    Start(url_.substr(std::string("http://").size()));
  }

  std::string Kubeconfig() const { return dir_.File("kubeconfig"); }

  std::unique_ptr<RestClient> Client() {
    auto config = LoadKubeConfigFile(Kubeconfig());
    REQUIRE(config.ok());
    RestClient::Options options;
    options.timeout = absl::Seconds(10);
    auto client = RestClient::Create(*config, options);
    REQUIRE(client.ok());
    return *std::move(client);
  }

 private:
  const TempDir& dir_;
  std::unique_ptr<Subprocess> process_;
  std::string url_;
};

Json ConfigMap(const std::string& name, const std::string& value = "v") {
  return {{"metadata", {{"name", name}}}, {"data", {{"k", value}}}};
}

// The informer's cache holds exactly what the server holds (keys and resourceVersions).
bool Converged(KubeClient& client, const SharedInformer& informer) {
  auto list = client.List(resources::ConfigMaps(), "default", {});
  if (!list.ok()) return false;
  std::map<std::string, std::string> server;
  for (const Json& object : list->items) server[Key(object)] = ResourceVersion(object);
  std::map<std::string, std::string> cache;
  for (const ObjectPtr& object : informer.GetIndexer().List()) {
    cache[Key(*object)] = ResourceVersion(*object);
  }
  return server == cache;
}

TEST_CASE("informer over HTTP converges, also across a server restart (410 relist)",
          "[integration]") {
  auto dir = TempDir::Create("kube-runtime-it");
  REQUIRE(dir.ok());
  Server server(*dir);
  std::unique_ptr<RestClient> client = server.Client();
  for (int i = 0; i < 3; ++i) {
    REQUIRE(client->Create(resources::ConfigMaps(), "default", ConfigMap("cm" + std::to_string(i)))
                .ok());
  }

  std::atomic<int> adds{0}, updates{0}, deletes{0}, tombstones{0};
  InformerOptions options;
  options.ns = "default";
  options.reflector.page_size = 2;  // Exercise paging against the server.
  // The informer's own view of the server, so the test can cut it off.
  fakes::InterceptingKubeClient informer_client(client.get());
  SharedInformer informer(&informer_client, resources::ConfigMaps(), options, Clock::Real());
  ResourceEventHandlerFuncs handler;
  handler.on_add = [&](const ObjectPtr&) { ++adds; };
  handler.on_update = [&](const ObjectPtr&, const ObjectPtr&) { ++updates; };
  handler.on_delete = [&](const DeletedObject& deleted) {
    ++deletes;
    if (std::holds_alternative<DeletedFinalStateUnknown>(deleted)) ++tombstones;
  };
  informer.AddEventHandler(handler);
  informer.Start();
  REQUIRE(informer.WaitForSync(absl::Now() + absl::Seconds(20)));
  CHECK(adds.load() == 3);

  REQUIRE(client
              ->Patch(resources::ConfigMaps(), "default", "cm0", PatchType::kMerge,
                      {{"data", {{"k", "v2"}}}})
              .ok());
  REQUIRE(client->Delete(resources::ConfigMaps(), "default", "cm1").ok());
  REQUIRE(client->Create(resources::ConfigMaps(), "default", ConfigMap("cm3")).ok());
  REQUIRE(WaitFor([&] { return Converged(*client, informer); }, absl::Seconds(20)));
  CHECK(adds.load() == 4);
  CHECK(updates.load() == 1);
  CHECK(deletes.load() == 1);
  CHECK(tombstones.load() == 0);
  CHECK(StringAt(*informer.GetLister().Get("default", "cm0").value(), "data.k") == "v2");

  // Restart with the same data: the open watch drops. While the informer cannot reach the server,
  // more changes happen than the server's watch history keeps, so its resume is refused with 410
  // and it relists; the delete it missed can only show up as a tombstone.
  informer_client.SetDown(true);
  server.Restart();
  REQUIRE(client->Delete(resources::ConfigMaps(), "default", "cm2").ok());
  for (int i = 0; i < 5; ++i) {
    REQUIRE(client->Create(resources::ConfigMaps(), "default", ConfigMap("n" + std::to_string(i)))
                .ok());
  }
  informer_client.SetDown(false);
  REQUIRE(WaitFor([&] { return Converged(*client, informer); }, absl::Seconds(60)));
  CHECK(informer.ReflectorStats().gone >= 1);
  CHECK(informer.ReflectorStats().lists >= 2);
  CHECK(deletes.load() == 2);
  CHECK(tombstones.load() == 1);
  CHECK(absl::IsNotFound(informer.GetLister().Get("default", "cm2").status()));

  // And it keeps following the stream afterwards.
  REQUIRE(client->Create(resources::ConfigMaps(), "default", ConfigMap("after")).ok());
  REQUIRE(WaitFor([&] { return informer.GetLister().Get("default", "after").ok(); },
                  absl::Seconds(20)));
  informer.Stop();
}

TEST_CASE("conflicting writers over HTTP: 409 on a stale version, retried on a fresh read",
          "[integration]") {
  auto dir = TempDir::Create("kube-runtime-it");
  REQUIRE(dir.ok());
  Server server(*dir);
  std::unique_ptr<RestClient> client = server.Client();
  auto created = client->Create(resources::ConfigMaps(), "default", ConfigMap("counter", "0"));
  REQUIRE(created.ok());
  Json stale = *created;
  Json fresh = *created;
  fresh["data"]["k"] = "1";
  REQUIRE(client->Update(resources::ConfigMaps(), fresh).ok());
  stale["data"]["k"] = "stale";
  CHECK(IsConflict(client->Update(resources::ConfigMaps(), stale).status()));

  int attempts = 0;
  absl::Status status = RetryOnConflict(
      [&]() -> absl::Status {
        ++attempts;
        auto current = client->Get(resources::ConfigMaps(), "default", "counter");
        if (!current.ok()) return current.status();
        Json next = attempts == 1 ? stale : *current;  // The first attempt writes a stale copy.
        next["data"]["k"] = "2";
        return client->Update(resources::ConfigMaps(), next).status();
      },
      Clock::Real());
  CHECK(status.ok());
  CHECK(attempts == 2);
  CHECK(StringAt(client->Get(resources::ConfigMaps(), "default", "counter").value(), "data.k") ==
        "2");
}

std::unique_ptr<Subprocess> StartCandidate(const Server& server, const std::string& identity) {
  Subprocess::Options options;
  options.argv = {kCandidateBin, server.Kubeconfig(), "default", "gm-leader", identity};
  auto started = Subprocess::Start(std::move(options));
  REQUIRE(started.ok());
  return *std::move(started);
}

bool Leading(Subprocess& candidate) {
  const std::string out = candidate.Stdout();
  const size_t leading = out.rfind("leading");
  return leading != std::string::npos && out.find("stopped", leading) == std::string::npos;
}

TEST_CASE("two candidate processes hand a Lease over when the leader stops or dies",
          "[integration]") {
  auto dir = TempDir::Create("kube-runtime-it");
  REQUIRE(dir.ok());
  Server server(*dir);
  std::unique_ptr<RestClient> client = server.Client();
  auto holder = [&] {
    auto lease = client->Get(resources::Leases(), "default", "gm-leader");
    return lease.ok() ? StringAt(*lease, "spec.holderIdentity") : std::string("?");
  };

  auto a = StartCandidate(server, "a");
  REQUIRE(a->WaitForStdoutContaining("leading", absl::Seconds(20)));
  auto b = StartCandidate(server, "b");
  REQUIRE(WaitFor([&] { return holder() == "a"; }, absl::Seconds(10)));
  CHECK_FALSE(Leading(*b));

  SECTION("graceful stop releases the lease: the other takes over at its next retry") {
    const absl::Time stop = absl::Now();
    auto code = a->Stop(absl::Seconds(10));
    REQUIRE(code.ok());
    CHECK(*code == 0);
    CHECK(a->Stdout().find("stopped") != std::string::npos);
    REQUIRE(b->WaitForStdoutContaining("leading", absl::Seconds(15)));
    // Retry period 2 s with jitter 1.2: at most 4.4 s, far below the 15 s lease.
    CHECK(absl::Now() - stop < absl::Seconds(6));
    CHECK(holder() == "b");
  }
  SECTION("a killed leader's lease expires: the other takes over within the lease duration") {
    const absl::Time kill_time = absl::Now();
    REQUIRE(::kill(a->pid(), SIGKILL) == 0);
    REQUIRE(b->WaitForStdoutContaining("leading", absl::Seconds(30)));
    const absl::Duration took = absl::Now() - kill_time;
    INFO("took " << absl::FormatDuration(took));
    // Expired 15 s after b last saw a renewal (≤ 2 s before the kill), found at b's next retry.
    CHECK(took > absl::Seconds(10));
    CHECK(took < absl::Seconds(15) + absl::Seconds(5));
    CHECK(holder() == "b");
  }
  REQUIRE(b->Stop(absl::Seconds(10)).ok());
}

}  // namespace
}  // namespace nereid::kube
