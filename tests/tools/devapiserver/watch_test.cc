#include "tools/devapiserver/watch.h"

#include <catch2/catch.hpp>

#include "common/kube/errors.h"
#include "tests/tools/devapiserver/test_util.h"

namespace nereid::devapi {
namespace {

using testing::ConfigMap;
using testing::StoreFixture;
using Type = kube::WatchEvent::Type;

// Next event without waiting (the fake clock's deadline is already now).
std::optional<kube::WatchEvent> Poll(Watcher& w, FakeClock& clock) {
  kube::WatchEvent e;
  if (w.Next(&clock, clock.Now(), &e) != Watcher::Result::kEvent) return std::nullopt;
  return e;
}

TEST_CASE("watch without a version starts with the current state as ADDED") {
  StoreFixture f;
  REQUIRE(f.store->Create(f.ConfigMaps(), "default", ConfigMap("a")).ok());
  REQUIRE(f.store->Create(f.ConfigMaps(), "kube-system", ConfigMap("other")).ok());
  ListRequest r;
  r.ns = "default";
  auto w = f.store->Watch(f.ConfigMaps(), r, "v1");
  REQUIRE(w.ok());
  auto e1 = Poll(**w, f.clock);
  REQUIRE(e1);
  CHECK(e1->type == Type::kAdded);
  CHECK(kube::Name(e1->object) == "a");
  CHECK_FALSE(Poll(**w, f.clock));
  Json a = *f.store->Get(f.ConfigMaps(), "default", "a");
  a["data"] = {{"k", "v"}};
  REQUIRE(f.store->Update(f.ConfigMaps(), "default", "a", a).ok());
  REQUIRE(f.store->Delete(f.ConfigMaps(), "default", "a").ok());
  auto e2 = Poll(**w, f.clock);
  auto e3 = Poll(**w, f.clock);
  REQUIRE(e2);
  REQUIRE(e3);
  CHECK(e2->type == Type::kModified);
  CHECK(kube::StringAt(e2->object, "data.k") == "v");
  CHECK(e3->type == Type::kDeleted);
  CHECK(std::stoll(kube::ResourceVersion(e3->object)) > std::stoll(kube::ResourceVersion(e2->object)));
}

TEST_CASE("watch from a version replays what came after it; too old is 410") {
  StoreFixture f(/*history=*/3);
  auto a = f.store->Create(f.ConfigMaps(), "default", ConfigMap("a"));
  REQUIRE(a.ok());
  REQUIRE(f.store->Create(f.ConfigMaps(), "default", ConfigMap("b")).ok());
  ListRequest r;
  r.resource_version = kube::ResourceVersion(*a);
  auto w = f.store->Watch(f.ConfigMaps(), r, "v1");
  REQUIRE(w.ok());
  auto e = Poll(**w, f.clock);
  REQUIRE(e);
  CHECK(e->type == Type::kAdded);
  CHECK(kube::Name(e->object) == "b");
  CHECK_FALSE(Poll(**w, f.clock));
  for (const char* n : {"c", "d", "e"}) REQUIRE(f.store->Create(f.ConfigMaps(), "default", ConfigMap(n)).ok());
  auto gone = f.store->Watch(f.ConfigMaps(), r, "v1");
  REQUIRE(kube::IsGone(gone.status()));
  CHECK(kube::HttpCodeFor(gone.status()) == 410);
  CHECK(kube::Reason(gone.status()) == "Expired");
  r.resource_version = std::to_string(f.store->CurrentVersion() + 100);  // from a previous life
  CHECK(kube::IsGone(f.store->Watch(f.ConfigMaps(), r, "v1").status()));
  r.resource_version = "abc";
  CHECK(kube::Reason(f.store->Watch(f.ConfigMaps(), r, "v1").status()) == "BadRequest");
}

TEST_CASE("objects entering or leaving a selection are ADDED or DELETED") {
  StoreFixture f;
  ListRequest r;
  r.label_selector = "app=web";
  r.resource_version = std::to_string(f.store->CurrentVersion());
  auto w = f.store->Watch(f.ConfigMaps(), r, "v1");
  REQUIRE(w.ok());
  auto a = f.store->Create(f.ConfigMaps(), "default", ConfigMap("a"));
  REQUIRE(a.ok());
  CHECK_FALSE(Poll(**w, f.clock));
  Json in = *a;
  in["metadata"]["labels"] = {{"app", "web"}};
  auto in_r = f.store->Update(f.ConfigMaps(), "default", "a", in);
  REQUIRE(in_r.ok());
  auto e1 = Poll(**w, f.clock);
  REQUIRE(e1);
  CHECK(e1->type == Type::kAdded);
  Json out = *in_r;
  out["metadata"]["labels"] = {{"app", "db"}};
  REQUIRE(f.store->Update(f.ConfigMaps(), "default", "a", out).ok());
  auto e2 = Poll(**w, f.clock);
  REQUIRE(e2);
  CHECK(e2->type == Type::kDeleted);
}

TEST_CASE("watch session: bookmarks carry the current version, deadline ends the stream") {
  StoreFixture f;
  ListRequest r;
  r.resource_version = "0";
  auto w = f.store->Watch(f.ConfigMaps(), r, "v1");
  REQUIRE(w.ok());
  WatchSessionOptions o;
  o.allow_bookmarks = true;
  o.bookmark_interval = absl::Seconds(5);
  o.deadline = f.clock.Now() + absl::Seconds(12);
  WatchSession session(*w, &f.clock, o, "ConfigMap", "v1");
  // A write elsewhere (another collection) still advances the bookmark version.
  REQUIRE(f.store->Create(f.Pods(), "default", Json{{"metadata", {{"name", "p"}}}}).ok());
  f.clock.Advance(absl::Seconds(5));
  kube::WatchEvent e;
  REQUIRE(session.Next(&e) == WatchSession::Step::kBookmark);
  CHECK(e.type == Type::kBookmark);
  CHECK(kube::ResourceVersion(e.object) == std::to_string(f.store->CurrentVersion()));
  CHECK(e.object["kind"] == "ConfigMap");
  REQUIRE(f.store->Create(f.ConfigMaps(), "default", ConfigMap("x")).ok());
  REQUIRE(session.Next(&e) == WatchSession::Step::kEvent);
  CHECK(e.type == Type::kAdded);
  f.clock.Advance(absl::Seconds(8));
  CHECK(session.Next(&e) == WatchSession::Step::kEnd);
}

TEST_CASE("watch session: heartbeats on idle streams without bookmarks; shutdown ends it") {
  StoreFixture f;
  auto w = f.store->Watch(f.ConfigMaps(), ListRequest{}, "v1");
  REQUIRE(w.ok());
  WatchSessionOptions o;
  o.heartbeat_interval = absl::Seconds(3);
  WatchSession session(*w, &f.clock, o, "ConfigMap", "v1");
  f.clock.Advance(absl::Seconds(3));
  kube::WatchEvent e;
  CHECK(session.Next(&e) == WatchSession::Step::kHeartbeat);
  CHECK(f.store->WatcherCount() == 1);
  f.store->Shutdown();
  CHECK(session.Next(&e) == WatchSession::Step::kEnd);
}

TEST_CASE("a watcher that falls too far behind is closed") {
  Selection sel;
  sel.storage_key = "/configmaps";
  Watcher w(sel, "v1", /*max_queue=*/2, 0);
  auto obj = std::make_shared<const Json>(ConfigMap("a"));
  for (int i = 1; i <= 3; ++i) w.Offer({Type::kAdded, i, "/configmaps", obj, nullptr});
  CHECK(w.closed());
  CHECK(absl::IsResourceExhausted(w.close_reason()));
  FakeClock clock;
  kube::WatchEvent e;
  CHECK(w.Next(&clock, clock.Now(), &e) == Watcher::Result::kEvent);
  CHECK(w.Next(&clock, clock.Now(), &e) == Watcher::Result::kEvent);
  CHECK(w.Next(&clock, clock.Now(), &e) == Watcher::Result::kClosed);
}

}  // namespace
}  // namespace nereid::devapi
