#include "globalmanager/edge_shards.h"

#include <catch2/catch.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/kube/resource.h"
#include "common/time/fake_clock.h"
#include "tests/fakes/eventually.h"
#include "tests/fakes/fake_kube_client.h"

namespace nereid::gm {
namespace {

using fakes::Eventually;
using fakes::FakeKubeClient;

constexpr char kNs[] = "sedna";
constexpr char kGroup[] = "nereid-gm";

std::unique_ptr<EdgeShards> Replica(FakeKubeClient* server, FakeClock* clock,
                                    const std::string& identity) {
  EdgeShards::Options options;
  options.client = server;
  options.lease.lease_namespace = kNs;
  options.group = kGroup;
  options.lease.identity = identity;
  options.clock = clock;
  auto created = EdgeShards::Create(std::move(options));
  REQUIRE(created.ok());
  return *std::move(created);
}

bool Sees(const EdgeShards& shards, const std::vector<std::string>& replicas) {
  return shards.Replicas() == replicas;
}

// Steps the fake clock in small steps (the Leases renew every 2 s) until `condition` holds.
bool Stepping(FakeClock& clock, const std::function<bool()>& condition) {
  return Eventually(
      [&] {
        if (condition()) return true;
        clock.Advance(absl::Milliseconds(500));
        return false;
      },
      absl::Seconds(20), absl::Milliseconds(5));
}

bool LeaseExists(FakeKubeClient& server, const std::string& name) {
  return server.Get(kube::resources::Leases(), kNs, name).ok();
}

TEST_CASE("edge shards: the replicas agree on every node's owner; one that leaves gives its "
          "nodes to the others and its Lease is collected",
          "[shards]") {
  FakeClock clock;
  FakeKubeClient server(&clock);
  auto a = Replica(&server, &clock, "gm-a");
  auto b = Replica(&server, &clock, "gm-b");
  CHECK(a->OwnerElsewhere("edge-c").empty());  // not started: serves whoever comes
  a->Start("10.0.0.1:9000", nullptr, nullptr);
  b->Start("10.0.0.2:9000", nullptr, nullptr);
  // Each counts the other once it has seen its Lease renewed.
  REQUIRE(Stepping(clock, [&] { return Sees(*a, {"gm-a", "gm-b"}) && Sees(*b, {"gm-a", "gm-b"}); }));

  auto lease = server.Get(kube::resources::Leases(), kNs, b->lease_name());
  REQUIRE(lease.ok());
  CHECK(b->lease_name() == "nereid-gm-edge-gm-b");
  CHECK((*lease)["metadata"]["labels"]["nereid.io/edge-shard"] == kGroup);
  CHECK((*lease)["metadata"]["annotations"][kEdgeAddressAnnotation] == "10.0.0.2:9000");
  CHECK((*lease)["spec"]["holderIdentity"] == "gm-b");

  int owned_by_b = 0;
  for (int i = 0; i < 200; ++i) {
    const std::string node = absl::StrCat("edge-", i);
    const std::string from_a = a->OwnerElsewhere(node);
    const std::string from_b = b->OwnerElsewhere(node);
    INFO(node << ": a says " << from_a << ", b says " << from_b);
    // Exactly one of them owns it, and the other sends it there.
    REQUIRE((from_a.empty() != from_b.empty()));
    if (from_a.empty()) {
      CHECK(from_b == "10.0.0.1:9000");
    } else {
      CHECK(from_a == "10.0.0.2:9000");
      ++owned_by_b;
    }
  }
  CHECK(owned_by_b > 60);
  CHECK(owned_by_b < 140);

  // b stops: it releases its Lease, a owns every node at once, and collects the Lease at its next
  // sweep.
  b->Stop();
  REQUIRE(Eventually([&] { return Sees(*a, {"gm-a"}); }));
  CHECK(a->OwnerElsewhere("edge-c").empty());
  REQUIRE(Eventually([&] {
    clock.Advance(absl::Seconds(1));
    return !LeaseExists(server, "nereid-gm-edge-gm-b");
  }));
  CHECK(LeaseExists(server, "nereid-gm-edge-gm-a"));
}

TEST_CASE("edge shards: a replica whose Lease stops changing is out after its lease duration, and "
          "its Lease is deleted after collect_after",
          "[shards]") {
  FakeClock clock;
  FakeKubeClient server(&clock);
  // The Lease of a replica that died: nobody renews it.
  kube::Json dead = {
      {"apiVersion", "coordination.k8s.io/v1"},
      {"kind", "Lease"},
      {"metadata",
       {{"name", "nereid-gm-edge-gm-b"},
        {"namespace", kNs},
        {"labels", {{"nereid.io/edge-shard", kGroup}}},
        {"annotations", {{kEdgeAddressAnnotation, "10.0.0.2:9000"}}}}},
      {"spec",
       {{"holderIdentity", "gm-b"},
        {"leaseDurationSeconds", 15},
        {"renewTime", "2026-11-29T10:00:00.000000Z"}}}};
  REQUIRE(server.Create(kube::resources::Leases(), kNs, dead).ok());
  // Another GM's replicas, under another leader Lease, are not ours to count.
  kube::Json other = dead;
  other["metadata"]["name"] = "other-gm-edge-gm-z";
  other["metadata"]["labels"]["nereid.io/edge-shard"] = "other-gm";
  other["spec"]["holderIdentity"] = "gm-z";
  REQUIRE(server.Create(kube::resources::Leases(), kNs, other).ok());

  auto a = Replica(&server, &clock, "gm-a");
  a->Start("10.0.0.1:9000", nullptr, nullptr);
  REQUIRE(Eventually([&] { return a->WatchSynced(); }));
  // Found at start, its age unknown: not counted until it changes (it may be a dead replica's).
  CHECK(Sees(*a, {"gm-a"}));
  CHECK(a->OwnerElsewhere("edge-c").empty());
  // gm-b renews once, then never again.
  const absl::Time start = clock.Now();
  auto lease = server.Get(kube::resources::Leases(), kNs, "nereid-gm-edge-gm-b");
  REQUIRE(lease.ok());
  (*lease)["spec"]["renewTime"] = "2026-11-29T10:00:02.000000Z";
  REQUIRE(server.Update(kube::resources::Leases(), *lease).ok());
  REQUIRE(Eventually([&] { return Sees(*a, {"gm-a", "gm-b"}); }));
  CHECK(a->OwnerElsewhere("edge-c") == "10.0.0.2:9000");

  // 15 s without a change, as a's clock measures it: gm-b is out, a serves its nodes.
  clock.Advance(absl::Seconds(16));
  CHECK(Sees(*a, {"gm-a"}));
  CHECK(a->OwnerElsewhere("edge-c").empty());
  CHECK(LeaseExists(server, "nereid-gm-edge-gm-b"));  // kept until collect_after (2 min)
  REQUIRE(Eventually(
      [&] {
        clock.Advance(absl::Seconds(1));
        return !LeaseExists(server, "nereid-gm-edge-gm-b");
      },
      absl::Seconds(20), absl::Milliseconds(5)));
  CHECK(clock.Now() - start >= absl::Minutes(2));
  CHECK(LeaseExists(server, "other-gm-edge-gm-z"));
}

TEST_CASE("edge shards: the Lease is named after the identity, made a valid object name",
          "[shards]") {
  FakeKubeClient server;
  auto named = [&](const std::string& identity,
                   const std::string& group = kGroup) -> absl::StatusOr<std::string> {
    EdgeShards::Options options;
    options.client = &server;
    options.lease.lease_namespace = kNs;
    options.group = group;
    options.lease.identity = identity;
    auto created = EdgeShards::Create(std::move(options));
    if (!created.ok()) return created.status();
    return (*created)->lease_name();
  };
  CHECK(*named("gm-7d9f-x2") == "nereid-gm-edge-gm-7d9f-x2");
  // The default identity (hostname_random) and a capitalised one: still two distinct Leases.
  const std::string a = *named("vm_ad8b3ad4");
  const std::string b = *named("VM_ad8b3ad4");
  CHECK(a.rfind("nereid-gm-edge-vm-ad8b3ad4-", 0) == 0);
  CHECK(a.size() == std::string("nereid-gm-edge-vm-ad8b3ad4-").size() + 8);
  CHECK(b.rfind("nereid-gm-edge-vm-ad8b3ad4-", 0) == 0);
  CHECK(a != b);
  absl::StatusOr<std::string> too_long = named(std::string(300, 'g'));
  REQUIRE_FALSE(too_long.ok());
  CHECK(too_long.status().message().find("not a valid Lease name") != std::string::npos);
  // Lease timings as the leader election's: renew deadline > 1.2 x retry period.
  EdgeShards::Options bad_timing;
  bad_timing.client = &server;
  bad_timing.lease.lease_namespace = kNs;
  bad_timing.group = kGroup;
  bad_timing.lease.identity = "gm-a";
  bad_timing.lease.retry_period = absl::Seconds(9);
  absl::StatusOr<std::unique_ptr<EdgeShards>> timing = EdgeShards::Create(bad_timing);
  REQUIRE_FALSE(timing.ok());
  CHECK(timing.status().message().find("edge shards: ") == 0);
  // The leader Lease's name labels the shard Leases: a label value has at most 63 characters.
  absl::StatusOr<std::string> long_group = named("gm-a", std::string(64, 'n'));
  REQUIRE_FALSE(long_group.ok());
  CHECK(long_group.status().message().find("at most 63 characters") != std::string::npos);
}

}  // namespace
}  // namespace nereid::gm
