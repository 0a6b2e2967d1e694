#include "tools/devapiserver/event_ttl.h"

#include <catch2/catch.hpp>

#include "tests/tools/devapiserver/test_util.h"

namespace nereid::devapi {
namespace {

using testing::StoreFixture;

Json Event(const std::string& name, const std::string& last_timestamp) {
  Json event = {{"apiVersion", "v1"},
                {"kind", "Event"},
                {"metadata", {{"name", name}}},
                {"involvedObject", {{"kind", "Dataset"}, {"name", "d"}}},
                {"reason", "SamplesCounted"},
                {"count", 1}};
  if (!last_timestamp.empty()) event["lastTimestamp"] = last_timestamp;
  return event;
}

TEST_CASE("Events expire an hour after they last occurred, as in kube-apiserver") {
  StoreFixture f;
  REQUIRE(f.status.ok());
  const ResourceType& events = f.Type("/events");
  f.clock.SetTime(absl::FromUnixSeconds(1'800'000'000));
  const absl::Time start = f.clock.Now();
  auto at = [](absl::Time t) { return kube::FormatTimestamp(t); };
  REQUIRE(f.store->Create(events, "default", Event("once", "")).ok());
  REQUIRE(f.store->Create(events, "default", Event("repeated", at(start))).ok());
  f.clock.Advance(absl::Minutes(30));
  REQUIRE(f.store->Create(events, "default", Event("later", at(f.clock.Now()))).ok());
  f.clock.Advance(absl::Minutes(20));
  // The recorder counts another occurrence of "repeated" (client-go's EventCorrelator PATCH).
  Json repeated = *f.store->Get(events, "default", "repeated");
  repeated["count"] = 2;
  repeated["lastTimestamp"] = at(f.clock.Now());
  REQUIRE(f.store->Update(events, "default", "repeated", repeated).ok());
  f.clock.Advance(absl::Minutes(11));  // 61 minutes after the start

  EventExpirer expirer(f.store.get(), &f.registry, absl::Hours(1));
  CHECK(expirer.SweepOnce() == 1);
  CHECK_FALSE(f.store->Get(events, "default", "once").ok());  // by its creationTimestamp
  CHECK(f.store->Get(events, "default", "repeated").ok());
  CHECK(f.store->Get(events, "default", "later").ok());

  f.clock.Advance(absl::Minutes(50));
  CHECK(expirer.SweepOnce() == 2);
  CHECK(f.store->List(events, ListRequest{})->items.empty());
  CHECK(expirer.SweepOnce() == 0);
}

}  // namespace
}  // namespace nereid::devapi
