#include "common/kube/leader_election.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "common/kube/errors.h"
#include "common/kube/resource.h"
#include "common/time/fake_clock.h"
#include "tests/fakes/eventually.h"
#include "tests/fakes/fake_kube_client.h"
#include "tests/fakes/intercepting_kube_client.h"

namespace nereid::kube {
namespace {

using fakes::Eventually;
using fakes::FakeKubeClient;
using fakes::InterceptingKubeClient;
using fakes::Verb;

constexpr char kNs[] = "nereid-system";
constexpr char kLease[] = "globalmanager";

std::string MicroTime(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone());
}

// One candidate with its own view of the API server and a record of its callbacks.
struct Candidate {
  Candidate(FakeKubeClient* server, FakeClock* clock, std::string identity, double jitter = 0.0,
            bool release_on_cancel = true,
            std::map<std::string, std::string> holder_annotations = {})
      : client(server), server(server) {
    LeaderElectionConfig config;
    config.lease_namespace = kNs;
    config.lease_name = kLease;
    config.identity = std::move(identity);
    config.release_on_cancel = release_on_cancel;
    config.holder_annotations = std::move(holder_annotations);
    config.uniform01 = [jitter] { return jitter; };
    config.on_started_leading = [this] { ++started; };
    config.on_stopped_leading = [this] {
      ++stopped;
      // What the Lease said when we were told to stop (release comes after this callback).
      auto lease = this->server->Get(resources::Leases(), kNs, kLease);
      holder_when_stopped = lease.ok() ? StringAt(*lease, "spec.holderIdentity") : "?";
    };
    config.on_new_leader = [this](const std::string& leader) {
      absl::MutexLock lock(&mu);
      leaders.push_back(leader);
    };
    auto created = LeaderElector::Create(&client, config, clock);
    REQUIRE(created.ok());
    elector = *std::move(created);
  }

  std::vector<std::string> Leaders() {
    absl::MutexLock lock(&mu);
    return leaders;
  }

  InterceptingKubeClient client;
  FakeKubeClient* server;
  std::unique_ptr<LeaderElector> elector;
  std::atomic<int> started{0};
  std::atomic<int> stopped{0};
  std::string holder_when_stopped;
  absl::Mutex mu;
  std::vector<std::string> leaders ABSL_GUARDED_BY(mu);
};

void AwaitParked(std::initializer_list<Candidate*> candidates) {
  REQUIRE(Eventually([&] {
    for (Candidate* c : candidates) {
      if (!c->elector->ParkedForTest()) return false;
    }
    return true;
  }));
}

Json LeaseSpec(FakeKubeClient& server) {
  auto lease = server.Get(resources::Leases(), kNs, kLease);
  REQUIRE(lease.ok());
  return (*lease)["spec"];
}

TEST_CASE("leader election config is validated as client-go does", "[leader]") {
  FakeKubeClient server;
  LeaderElectionConfig config;
  config.lease_namespace = kNs;
  config.lease_name = kLease;
  config.identity = "a";
  CHECK(ValidateLeaderElectionConfig(config).ok());
  LeaderElectionConfig bad = config;
  bad.renew_deadline = absl::Seconds(15);
  CHECK(absl::IsInvalidArgument(ValidateLeaderElectionConfig(bad)));
  bad = config;
  bad.retry_period = absl::Seconds(9);  // 9 × 1.2 > 10
  CHECK(absl::IsInvalidArgument(ValidateLeaderElectionConfig(bad)));
  bad = config;
  bad.identity = "";
  CHECK(absl::IsInvalidArgument(LeaderElector::Create(&server, bad).status()));
}

TEST_CASE("leader election: acquires a free lease and renews it every retry period", "[leader]") {
  FakeClock clock;
  FakeKubeClient server(&clock);
  Candidate a(&server, &clock, "a");
  const absl::Time t0 = clock.Now();
  a.elector->Start();
  REQUIRE(Eventually([&] { return a.elector->IsLeader() && a.started.load() == 1; }));
  Json spec = LeaseSpec(server);
  CHECK(spec["holderIdentity"] == "a");
  CHECK(spec["leaseDurationSeconds"] == 15);
  CHECK(spec["leaseTransitions"] == 0);
  CHECK(spec["acquireTime"] == MicroTime(t0));
  CHECK(spec["renewTime"] == MicroTime(t0));
  CHECK(a.elector->GetLeader() == "a");

  for (int i = 1; i <= 3; ++i) {
    AwaitParked({&a});
    clock.Advance(absl::Seconds(2));
    AwaitParked({&a});
    spec = LeaseSpec(server);
    CHECK(spec["renewTime"] == MicroTime(t0 + absl::Seconds(2 * i)));
    CHECK(spec["acquireTime"] == MicroTime(t0));
    CHECK(spec["leaseTransitions"] == 0);
  }
  CHECK(server.CountActions(Verb::kUpdate, "leases.coordination.k8s.io") == 3);
  CHECK(a.Leaders() == std::vector<std::string>{"a"});
}

TEST_CASE("leader election: the holder's annotations travel with the Lease and leave on release",
          "[leader]") {
  constexpr char kAddress[] = "example.io/edge-address";
  FakeClock clock;
  FakeKubeClient server(&clock);
  Candidate a(&server, &clock, "a", 0.0, true, {{kAddress, "10.0.0.1:7600"}});
  Candidate b(&server, &clock, "b", 0.0, true, {{kAddress, "10.0.0.2:7600"}});
  a.elector->Start();
  REQUIRE(Eventually([&] { return a.elector->IsLeader(); }));
  b.elector->Start();
  AwaitParked({&a, &b});
  CHECK(b.elector->GetLeader() == "a");
  CHECK(b.elector->LeaderAnnotation(kAddress) == "10.0.0.1:7600");
  CHECK(b.elector->LeaderAnnotation("example.io/other").empty());
  clock.Advance(absl::Seconds(2));  // a renews: its annotation stays
  AwaitParked({&a, &b});
  CHECK(b.elector->LeaderAnnotation(kAddress) == "10.0.0.1:7600");

  a.elector->Stop();  // releases: the Lease keeps no address of a replica that left
  auto lease = server.Get(resources::Leases(), kNs, kLease);
  REQUIRE(lease.ok());
  CHECK_FALSE((*lease)["metadata"]["annotations"].contains(kAddress));
  clock.Advance(absl::Seconds(2));  // b's next try finds the Lease free
  REQUIRE(Eventually([&] { return b.elector->IsLeader(); }));
  lease = server.Get(resources::Leases(), kNs, kLease);
  REQUIRE(lease.ok());
  CHECK((*lease)["metadata"]["annotations"][kAddress] == "10.0.0.2:7600");
  CHECK(b.elector->LeaderAnnotation(kAddress) == "10.0.0.2:7600");
}

TEST_CASE("leader election: its labels are written into the Lease and stay after release",
          "[leader]") {
  FakeClock clock;
  FakeKubeClient server(&clock);
  LeaderElectionConfig config;
  config.lease_namespace = kNs;
  config.lease_name = kLease;
  config.identity = "a";
  config.labels = {{"example.io/family", "gm"}};
  config.uniform01 = [] { return 0.0; };
  auto elector = LeaderElector::Create(&server, config, &clock);
  REQUIRE(elector.ok());
  (*elector)->Start();
  REQUIRE(Eventually([&] { return (*elector)->IsLeader(); }));
  auto lease = server.Get(resources::Leases(), kNs, kLease);
  REQUIRE(lease.ok());
  CHECK((*lease)["metadata"]["labels"]["example.io/family"] == "gm");
  (*elector)->Stop();  // a label selector still finds the released Lease
  lease = server.Get(resources::Leases(), kNs, kLease);
  REQUIRE(lease.ok());
  CHECK(StringAt(*lease, "spec.holderIdentity").empty());
  CHECK((*lease)["metadata"]["labels"]["example.io/family"] == "gm");
}

TEST_CASE("leader election: a leader that cannot renew stops leading at the renew deadline",
          "[leader]") {
  FakeClock clock;
  FakeKubeClient server(&clock);
  Candidate a(&server, &clock, "a");
  a.elector->Start();
  REQUIRE(Eventually([&] { return a.elector->IsLeader(); }));
  AwaitParked({&a});
  a.client.SetDown(true);
  // Last renewal at t0; the next cycle starts at t0+2 s and gives up at t0+12 s.
  for (int second = 1; second <= 11; ++second) {
    clock.Advance(absl::Seconds(1));
    AwaitParked({&a});
    INFO("t0 + " << second << " s");
    CHECK(a.elector->IsLeader());
  }
  clock.Advance(absl::Seconds(1));
  REQUIRE(Eventually([&] { return a.stopped.load() == 1; }));
  CHECK_FALSE(a.elector->IsLeader());
  a.elector->Stop();
  CHECK(a.stopped.load() == 1);  // Not told twice.
}

TEST_CASE("leader election: a candidate takes over a lease left to expire", "[leader]") {
  FakeClock clock;
  FakeKubeClient server(&clock);
  Candidate a(&server, &clock, "a", 0.0, /*release_on_cancel=*/false);
  a.elector->Start();
  REQUIRE(Eventually([&] { return a.elector->IsLeader(); }));
  a.elector->Stop();  // A crash: nothing released.
  CHECK(LeaseSpec(server)["holderIdentity"] == "a");

  Candidate b(&server, &clock, "b");  // Jitter 0: tries every 2 s exactly.
  b.elector->Start();
  AwaitParked({&b});
  CHECK_FALSE(b.elector->IsLeader());
  CHECK(b.elector->GetLeader() == "a");
  // b first saw the record at t1; it is expired once unchanged for 15 s on b's clock.
  for (int second = 2; second <= 14; second += 2) {
    clock.Advance(absl::Seconds(2));
    AwaitParked({&b});
    INFO("t1 + " << second << " s");
    CHECK_FALSE(b.elector->IsLeader());
  }
  clock.Advance(absl::Seconds(2));
  REQUIRE(Eventually([&] { return b.elector->IsLeader(); }));
  Json spec = LeaseSpec(server);
  CHECK(spec["holderIdentity"] == "b");
  CHECK(spec["leaseTransitions"] == 1);
  CHECK(b.Leaders() == std::vector<std::string>{"a", "b"});
}

TEST_CASE("leader election: release on stop lets a successor take over at once", "[leader]") {
  FakeClock clock;
  FakeKubeClient server(&clock);
  Candidate a(&server, &clock, "a");
  a.elector->Start();
  REQUIRE(Eventually([&] { return a.elector->IsLeader(); }));
  Candidate b(&server, &clock, "b");
  b.elector->Start();
  AwaitParked({&a, &b});
  CHECK_FALSE(b.elector->IsLeader());

  a.elector->Stop();
  CHECK(a.stopped.load() == 1);
  CHECK(a.holder_when_stopped == "a");  // Told to stop before the lease was released.
  Json spec = LeaseSpec(server);
  CHECK(spec["holderIdentity"] == "");
  CHECK(spec["leaseDurationSeconds"] == 1);
  CHECK_FALSE(a.elector->IsLeader());

  clock.Advance(absl::Seconds(2));  // b's next retry, far sooner than the 15 s lease.
  REQUIRE(Eventually([&] { return b.elector->IsLeader(); }));
  CHECK(LeaseSpec(server)["leaseTransitions"] == 1);
}

TEST_CASE("leader election: a 409 on update means another candidate won", "[leader]") {
  FakeClock clock;
  FakeKubeClient server(&clock);
  // A lease held by someone who stopped renewing.
  Json lease = {{"metadata", {{"name", kLease}, {"namespace", kNs}}},
                {"spec",
                 {{"holderIdentity", "old"},
                  {"leaseDurationSeconds", 15},
                  {"renewTime", MicroTime(clock.Now())},
                  {"leaseTransitions", 4}}}};
  REQUIRE(server.Create(resources::Leases(), kNs, lease).ok());
  Candidate b(&server, &clock, "b");
  bool raced = false;
  b.client.SetInterceptor(
      [&](Verb verb, const Resource& resource, const ListOptions*) -> std::optional<absl::Status> {
        if (verb == Verb::kUpdate && resource == resources::Leases() && !raced) {
          raced = true;  // Candidate "c" writes first: b's resourceVersion is now stale.
          Json current = server.Get(resources::Leases(), kNs, kLease).value();
          current["spec"]["holderIdentity"] = "c";
          current["spec"]["renewTime"] = MicroTime(clock.Now());
          REQUIRE(server.Update(resources::Leases(), current).ok());
        }
        return std::nullopt;
      });
  b.elector->Start();
  AwaitParked({&b});
  for (int i = 0; i < 8; ++i) {  // 16 s: past the old holder's expiry.
    clock.Advance(absl::Seconds(2));
    AwaitParked({&b});
  }
  CHECK(raced);
  CHECK_FALSE(b.elector->IsLeader());
  CHECK(b.started.load() == 0);
  CHECK(LeaseSpec(server)["holderIdentity"] == "c");
  auto updates = server.ActionsOf(Verb::kUpdate, "leases.coordination.k8s.io");
  REQUIRE(updates.size() == 2);  // c's write, then b's refused one.
  CHECK(updates[1].body["spec"]["holderIdentity"] == "b");
  clock.Advance(absl::Seconds(2));
  AwaitParked({&b});
  CHECK(b.elector->GetLeader() == "c");
}

TEST_CASE("leader election: two candidates are never both leading", "[leader]") {
  FakeClock clock;
  FakeKubeClient server(&clock);
  Candidate a(&server, &clock, "a", 0.3);
  Candidate b(&server, &clock, "b", 0.7);
  a.elector->Start();
  REQUIRE(Eventually([&] { return a.elector->IsLeader(); }));
  b.elector->Start();
  const absl::Time t0 = clock.Now();
  int changes = 0;
  std::string last_leader = "a";
  int steps_without_leader = 0;
  // 120 s in 250 ms steps; the leader of the moment is cut off at 10-30 s and at 60-80 s.
  for (int step = 0; step < 480; ++step) {
    AwaitParked({&a, &b});
    const absl::Duration t = clock.Now() - t0;
    const bool a_leads = a.elector->IsLeader();
    const bool b_leads = b.elector->IsLeader();
    INFO("t = " << absl::FormatDuration(t));
    REQUIRE_FALSE((a_leads && b_leads));
    const std::string leader = a_leads ? "a" : b_leads ? "b" : "";
    if (leader.empty()) {
      ++steps_without_leader;
    } else if (leader != last_leader) {
      ++changes;
      last_leader = leader;
    }
    if (t == absl::Seconds(10) || t == absl::Seconds(60)) {
      (leader == "a" ? a : b).client.SetDown(true);
    }
    if (t == absl::Seconds(30) || t == absl::Seconds(80)) {
      a.client.SetDown(false);
      b.client.SetDown(false);
    }
    clock.Advance(absl::Milliseconds(250));
  }
  CHECK(changes == 2);
  // Each hand-over leaves a gap: from the old leader's deadline to the new one's takeover.
  CHECK(steps_without_leader > 0);
  CHECK(steps_without_leader < 2 * 10 * 4);  // Under 10 s per hand-over.
  CHECK(a.started.load() + b.started.load() == 3);
}

}  // namespace
}  // namespace nereid::kube
