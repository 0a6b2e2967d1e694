#include "common/kube/reflector.h"

#include <catch2/catch.hpp>
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
using fakes::Verb;

// Records what the reflector delivers.
class RecordingStore final : public ReflectorStore {
 public:
  struct Call {
    std::string op;
    std::vector<std::string> keys;
    std::string rv;
    ObjectPtr object;
  };

  void Replace(std::vector<ObjectPtr> objects, const std::string& rv) override {
    Call call{"replace", {}, rv, nullptr};
    for (const ObjectPtr& object : objects) call.keys.push_back(Key(*object));
    if (!objects.empty()) call.object = objects.front();
    Push(std::move(call));
  }
  void Add(ObjectPtr object) override { Push({"add", {Key(*object)}, "", object}); }
  void Update(ObjectPtr object) override { Push({"update", {Key(*object)}, "", object}); }
  void Delete(ObjectPtr object) override { Push({"delete", {Key(*object)}, "", object}); }

  std::vector<Call> Calls() const {
    absl::MutexLock lock(&mu_);
    return calls_;
  }
  int Count(const std::string& op) const {
    absl::MutexLock lock(&mu_);
    int n = 0;
    for (const Call& call : calls_) n += call.op == op;
    return n;
  }
  std::vector<std::string> LastReplaceKeys() const {
    absl::MutexLock lock(&mu_);
    for (auto it = calls_.rbegin(); it != calls_.rend(); ++it) {
      if (it->op == "replace") return it->keys;
    }
    return {};
  }

 private:
  void Push(Call call) {
    absl::MutexLock lock(&mu_);
    calls_.push_back(std::move(call));
  }
  mutable absl::Mutex mu_;
  std::vector<Call> calls_ ABSL_GUARDED_BY(mu_);
};

// Backoff delays the reflector announced.
class BackoffLog {
 public:
  std::function<void(absl::Duration)> Hook() {
    return [this](absl::Duration d) {
      absl::MutexLock lock(&mu_);
      delays_.push_back(d);
    };
  }
  std::vector<absl::Duration> Delays() const {
    absl::MutexLock lock(&mu_);
    return delays_;
  }
  size_t Size() const { return Delays().size(); }

 private:
  mutable absl::Mutex mu_;
  std::vector<absl::Duration> delays_ ABSL_GUARDED_BY(mu_);
};

Json Pod(const std::string& name) {
  return {{"metadata", {{"name", name}}}, {"spec", {{"nodeName", "n1"}}}};
}

ReflectorOptions TestOptions(BackoffLog* log) {
  ReflectorOptions options;
  options.uniform01 = [] { return 0.5; };  // Jitter factor exactly 1; watch timeout 450 s.
  options.on_backoff = log->Hook();
  return options;
}

struct Fixture {
  FakeClock clock;
  FakeKubeClient client{&clock};
  RecordingStore store;
  BackoffLog backoffs;

  void CreatePods(int n) {
    for (int i = 0; i < n; ++i) {
      REQUIRE(client.Create(resources::Pods(), "ns", Pod("p" + std::to_string(i))).ok());
    }
  }
  // Waits until the reflector is parked in a backoff wait (no watch open, one timed waiter).
  void AwaitBackoffs(size_t n) {
    REQUIRE(Eventually([&] { return backoffs.Size() == n && clock.timed_waiters() == 1; }));
  }
  int Watches() const { return client.CountActions(Verb::kWatch); }
};

TEST_CASE("reflector lists in pages, replaces the store, then watches from the list version",
          "[reflector]") {
  Fixture f;
  f.CreatePods(7);
  ReflectorOptions options = TestOptions(&f.backoffs);
  options.page_size = 3;
  Reflector reflector(&f.client, resources::Pods(), &f.store, &f.clock, options);
  CHECK_FALSE(reflector.HasSynced());
  reflector.Start();
  REQUIRE(Eventually([&] { return f.Watches() == 1; }));

  auto lists = f.client.ActionsOf(Verb::kList);
  REQUIRE(lists.size() == 3);
  CHECK(lists[0].body["limit"] == 3);
  CHECK(lists[0].body["resourceVersion"] == "0");
  CHECK(lists[1].body["continue"].is_string());
  CHECK(lists[1].body["resourceVersion"] == "");  // Not allowed together with a token.
  auto calls = f.store.Calls();
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].op == "replace");
  CHECK(calls[0].keys.size() == 7);
  CHECK(calls[0].rv == "7");
  CHECK((*calls[0].object)["kind"] == "Pod");  // Filled in when list items omit it.
  CHECK(reflector.HasSynced());
  CHECK(reflector.LastSyncResourceVersion() == "7");

  auto watch = f.client.ActionsOf(Verb::kWatch)[0].body;
  CHECK(watch["resourceVersion"] == "7");
  CHECK(watch["allowWatchBookmarks"] == true);
  CHECK(watch["timeoutSeconds"] == 450);
  CHECK(f.backoffs.Size() == 0);
}

TEST_CASE("reflector watch timeouts are random in [300, 600) seconds", "[reflector]") {
  for (double u : {0.0, 0.999}) {
    Fixture f;
    ReflectorOptions options = TestOptions(&f.backoffs);
    options.uniform01 = [u] { return u; };
    Reflector reflector(&f.client, resources::Pods(), &f.store, &f.clock, options);
    reflector.Start();
    REQUIRE(Eventually([&] { return f.Watches() == 1; }));
    const int64_t timeout = f.client.ActionsOf(Verb::kWatch)[0].body["timeoutSeconds"];
    CHECK(timeout >= 300);
    CHECK(timeout < 600);
    CHECK(timeout == (u == 0.0 ? 300 : 599));
  }
}

TEST_CASE("reflector applies watch events and follows bookmarks", "[reflector]") {
  Fixture f;
  Reflector reflector(&f.client, resources::Pods(), &f.store, &f.clock, TestOptions(&f.backoffs));
  reflector.Start();
  REQUIRE(Eventually([&] { return f.Watches() == 1; }));

  auto created = f.client.Create(resources::Pods(), "ns", Pod("x"));
  REQUIRE(created.ok());
  Json changed = *created;
  changed["metadata"]["labels"] = {{"a", "b"}};
  REQUIRE(f.client.Update(resources::Pods(), changed).ok());
  REQUIRE(f.client.Delete(resources::Pods(), "ns", "x").ok());
  REQUIRE(Eventually([&] { return f.store.Count("delete") == 1; }));
  auto calls = f.store.Calls();
  REQUIRE(calls.size() == 4);
  CHECK(calls[1].op == "add");
  CHECK(calls[2].op == "update");
  CHECK(calls[3].op == "delete");
  CHECK(calls[3].keys[0] == "ns/x");
  // The version is recorded just after the store call (client-go's order): wait, do not race it.
  CHECK(Eventually([&] {
    return reflector.LastSyncResourceVersion() == std::to_string(f.client.CurrentResourceVersion());
  }));

  // Changes elsewhere move the global version; a bookmark carries it to us without events.
  REQUIRE(f.client.Create(resources::ConfigMaps(), "ns", {{"metadata", {{"name", "c"}}}}).ok());
  const std::string now = std::to_string(f.client.CurrentResourceVersion());
  CHECK(reflector.LastSyncResourceVersion() != now);
  f.client.SendBookmark();
  REQUIRE(Eventually([&] { return reflector.LastSyncResourceVersion() == now; }));
  CHECK(f.store.Calls().size() == 4);
}

TEST_CASE("reflector hands the store transformed objects, listed and watched", "[reflector]") {
  Fixture f;
  auto with_bookkeeping = [](const std::string& name) {
    Json pod = Pod(name);
    pod["metadata"]["managedFields"] = Json::array({{{"manager", "kubectl"}}});
    pod["metadata"]["annotations"] = {{std::string(kLastAppliedAnnotation), "{}"}, {"keep", "1"}};
    return pod;
  };
  REQUIRE(f.client.Create(resources::Pods(), "ns", with_bookkeeping("listed")).ok());
  ReflectorOptions options = TestOptions(&f.backoffs);
  options.transform = DropManagedFieldsAndLastApplied;
  Reflector reflector(&f.client, resources::Pods(), &f.store, &f.clock, options);
  reflector.Start();
  REQUIRE(Eventually([&] { return f.Watches() == 1; }));
  REQUIRE(f.client.Create(resources::Pods(), "ns", with_bookkeeping("watched")).ok());
  REQUIRE(Eventually([&] { return f.store.Count("add") == 1; }));

  const auto calls = f.store.Calls();
  REQUIRE(calls.size() == 2);
  for (const ObjectPtr& object : {calls[0].object, calls[1].object}) {
    INFO(object->dump());
    CHECK_FALSE((*object)["metadata"].contains("managedFields"));
    CHECK((*object)["metadata"]["annotations"] == Json{{"keep", "1"}});
    CHECK((*object)["spec"]["nodeName"] == "n1");
  }
}

TEST_CASE("reflector resumes a normally closed watch from the last version without relisting",
          "[reflector]") {
  Fixture f;
  f.CreatePods(2);
  Reflector reflector(&f.client, resources::Pods(), &f.store, &f.clock, TestOptions(&f.backoffs));
  reflector.Start();
  REQUIRE(Eventually([&] { return f.Watches() == 1; }));
  REQUIRE(f.client.Create(resources::Pods(), "ns", Pod("late")).ok());
  REQUIRE(Eventually([&] { return f.store.Count("add") == 1; }));
  const std::string rv = reflector.LastSyncResourceVersion();

  f.clock.Advance(absl::Seconds(2));  // A healthy watch: longer than min_healthy_watch.
  f.client.CloseWatches();
  REQUIRE(Eventually([&] { return f.Watches() == 2; }));
  CHECK(f.client.ActionsOf(Verb::kWatch)[1].body["resourceVersion"] == rv);
  CHECK(f.client.CountActions(Verb::kList) == 1);
  CHECK(f.store.Count("replace") == 1);
  CHECK(f.backoffs.Size() == 0);
}

TEST_CASE("reflector backs off when a watch closes at once with no events", "[reflector]") {
  Fixture f;
  Reflector reflector(&f.client, resources::Pods(), &f.store, &f.clock, TestOptions(&f.backoffs));
  reflector.Start();
  REQUIRE(Eventually([&] { return f.Watches() == 1; }));
  f.client.CloseWatches();
  f.AwaitBackoffs(1);
  CHECK(f.backoffs.Delays()[0] == absl::Milliseconds(800));
  CHECK(f.Watches() == 1);
  f.clock.Advance(absl::Milliseconds(800));
  REQUIRE(Eventually([&] { return f.Watches() == 2; }));
  CHECK(f.client.CountActions(Verb::kList) == 1);
}

TEST_CASE("reflector resumes the watch after a non-410 ERROR event, with backoff", "[reflector]") {
  Fixture f;
  Reflector reflector(&f.client, resources::Pods(), &f.store, &f.clock, TestOptions(&f.backoffs));
  reflector.Start();
  REQUIRE(Eventually([&] { return f.Watches() == 1; }));
  f.client.SendRawEvent(
      resources::Pods(),
      {WatchEvent::Type::kError, StatusToJson(MakeError("InternalError", "etcd leader changed"))});
  f.AwaitBackoffs(1);
  f.clock.Advance(absl::Milliseconds(800));
  REQUIRE(Eventually([&] { return f.Watches() == 2; }));
  CHECK(f.client.CountActions(Verb::kList) == 1);
  CHECK(reflector.GetStats().gone == 0);
}

TEST_CASE("reflector relists at once on a 410 ERROR event", "[reflector]") {
  Fixture f;
  f.CreatePods(3);
  Reflector reflector(&f.client, resources::Pods(), &f.store, &f.clock, TestOptions(&f.backoffs));
  reflector.Start();
  REQUIRE(Eventually([&] { return f.Watches() == 1; }));
  f.client.ExpireWatches();
  REQUIRE(Eventually([&] { return f.Watches() == 2; }));
  CHECK(f.store.Count("replace") == 2);
  CHECK(reflector.GetStats().lists == 2);
  CHECK(reflector.GetStats().gone == 1);
  CHECK(f.backoffs.Size() == 0);
}

TEST_CASE("reflector relists when the watch's resourceVersion is gone at watch start",
          "[reflector]") {
  Fixture f;
  f.CreatePods(3);
  Reflector reflector(&f.client, resources::Pods(), &f.store, &f.clock, TestOptions(&f.backoffs));
  reflector.Start();
  REQUIRE(Eventually([&] { return f.Watches() == 1; }));
  const std::string old_rv = reflector.LastSyncResourceVersion();

  // Hold the reflector in a backoff while the world moves on and history is compacted.
  f.client.FailNext(Verb::kWatch, 1, absl::UnavailableError("apiserver restarting"));
  f.clock.Advance(absl::Seconds(2));
  f.client.CloseWatches();
  f.AwaitBackoffs(1);
  REQUIRE(f.client.Delete(resources::Pods(), "ns", "p1").ok());
  REQUIRE(f.client.Create(resources::Pods(), "ns", Pod("p9")).ok());
  f.client.CompactHistory();

  f.clock.Advance(absl::Milliseconds(800));
  REQUIRE(Eventually([&] { return f.Watches() == 4 && f.store.Count("replace") == 2; }));
  auto watches = f.client.ActionsOf(Verb::kWatch);
  CHECK(watches[2].body["resourceVersion"] == old_rv);  // Refused with 410...
  CHECK(f.store.LastReplaceKeys() == std::vector<std::string>{"ns/p0", "ns/p2", "ns/p9"});
  CHECK(watches[3].body["resourceVersion"] ==
        std::to_string(f.client.CurrentResourceVersion()));  // ...then resumed from the relist.
  CHECK(reflector.GetStats().gone == 1);
  CHECK(f.backoffs.Size() == 1);  // Only the injected Unavailable backed off.
}

TEST_CASE("reflector backs off 0.8 s doubling to 30 s, and resets after 2 healthy minutes",
          "[reflector]") {
  Fixture f;
  f.client.FailNext(Verb::kList, 8, absl::UnavailableError("down"));
  Reflector reflector(&f.client, resources::Pods(), &f.store, &f.clock, TestOptions(&f.backoffs));
  reflector.Start();
  const std::vector<absl::Duration> expected = {
      absl::Milliseconds(800),  absl::Milliseconds(1600),  absl::Milliseconds(3200),
      absl::Milliseconds(6400), absl::Milliseconds(12800), absl::Milliseconds(25600),
      absl::Seconds(30),        absl::Seconds(30)};
  for (size_t i = 0; i < expected.size(); ++i) {
    f.AwaitBackoffs(i + 1);
    CHECK(f.backoffs.Delays()[i] == expected[i]);
    CHECK(f.client.CountActions(Verb::kList) == static_cast<int>(i + 1));
    // Not a moment early.
    f.clock.Advance(expected[i] - absl::Milliseconds(1));
    CHECK(f.client.CountActions(Verb::kList) == static_cast<int>(i + 1));
    f.clock.Advance(absl::Milliseconds(1));
  }
  REQUIRE(Eventually([&] { return reflector.HasSynced() && f.Watches() == 1; }));

  SECTION("a failure soon after keeps growing the delay") {
    f.clock.Advance(absl::Seconds(10));
    f.client.FailNext(Verb::kWatch, 1, absl::UnavailableError("down"));
    f.client.CloseWatches();
    f.AwaitBackoffs(9);
    CHECK(f.backoffs.Delays()[8] == absl::Seconds(30));
  }
  SECTION("a failure after two healthy minutes starts again from 0.8 s") {
    f.clock.Advance(absl::Minutes(2));
    f.client.FailNext(Verb::kWatch, 2, absl::UnavailableError("down"));
    f.client.CloseWatches();
    f.AwaitBackoffs(9);
    CHECK(f.backoffs.Delays()[8] == absl::Milliseconds(800));
    f.clock.Advance(absl::Milliseconds(800));
    f.AwaitBackoffs(10);
    CHECK(f.backoffs.Delays()[9] == absl::Milliseconds(1600));
  }
}

TEST_CASE("reflector retries a 410 list at once with a quorum read", "[reflector]") {
  Fixture f;
  f.CreatePods(2);
  f.client.FailNext(Verb::kList, 1, GoneError("too old resource version"));
  Reflector reflector(&f.client, resources::Pods(), &f.store, &f.clock, TestOptions(&f.backoffs));
  reflector.Start();
  REQUIRE(Eventually([&] { return f.Watches() == 1; }));
  auto lists = f.client.ActionsOf(Verb::kList);
  REQUIRE(lists.size() == 2);
  CHECK(lists[0].body["resourceVersion"] == "0");
  CHECK(lists[1].body["resourceVersion"] == "");
  CHECK(f.backoffs.Size() == 0);
}

TEST_CASE("reflector falls back to a full list when a continue token expires", "[reflector]") {
  Fixture f;
  f.CreatePods(5);
  fakes::InterceptingKubeClient client(&f.client);
  bool expired_once = false;
  client.SetInterceptor(
      [&](Verb verb, const Resource&, const ListOptions* options) -> std::optional<absl::Status> {
        if (verb == Verb::kList && !options->continue_token.empty() && !expired_once) {
          expired_once = true;
          return GoneError("The provided continue parameter is too old");
        }
        return std::nullopt;
      });
  ReflectorOptions options = TestOptions(&f.backoffs);
  options.page_size = 2;
  Reflector reflector(&client, resources::Pods(), &f.store, &f.clock, options);
  reflector.Start();
  REQUIRE(Eventually([&] { return f.Watches() == 1; }));
  auto lists = f.client.ActionsOf(Verb::kList);  // What reached the server.
  REQUIRE(lists.size() == 2);
  CHECK(lists[0].body["limit"] == 2);
  CHECK_FALSE(lists[1].body.contains("limit"));
  CHECK(f.store.Count("replace") == 1);
  CHECK(f.store.LastReplaceKeys().size() == 5);
  CHECK(f.backoffs.Size() == 0);
}

TEST_CASE("reflector Stop is prompt while watching and while backing off", "[reflector]") {
  FakeKubeClient client;  // Real clock: the watch would otherwise run for 5-10 minutes.
  RecordingStore store;
  SECTION("watching") {
    Reflector reflector(&client, resources::Pods(), &store, Clock::Real());
    reflector.Start();
    REQUIRE(Eventually([&] { return client.OpenWatches() == 1; }));
    const absl::Time start = absl::Now();
    reflector.Stop();
    CHECK(absl::Now() - start < absl::Seconds(1));
    CHECK(client.OpenWatches() == 0);
  }
  SECTION("backing off") {
    client.FailNext(Verb::kList, 100, absl::UnavailableError("down"));
    ReflectorOptions options;
    options.backoff.initial = absl::Seconds(30);
    Reflector reflector(&client, resources::Pods(), &store, Clock::Real(), options);
    reflector.Start();
    REQUIRE(Eventually([&] { return reflector.GetStats().backoffs == 1; }));
    const absl::Time start = absl::Now();
    reflector.Stop();
    CHECK(absl::Now() - start < absl::Seconds(1));
  }
}

TEST_CASE("reflector skips malformed watch events without losing the stream", "[reflector]") {
  // A server (or proxy) sending an object without a name must not crash or wedge the reflector.
  Fixture f;
  Reflector reflector(&f.client, resources::Pods(), &f.store, &f.clock, TestOptions(&f.backoffs));
  reflector.Start();
  REQUIRE(Eventually([&] { return f.Watches() == 1; }));
  f.client.SendRawEvent(resources::Pods(), {WatchEvent::Type::kAdded, Json{{"metadata", {}}}});
  f.client.SendRawEvent(resources::Pods(), {WatchEvent::Type::kModified, Json("garbage")});
  f.client.SendRawEvent(resources::Pods(), {WatchEvent::Type::kBookmark, Json::array()});
  REQUIRE(f.client.Create(resources::Pods(), "ns", Pod("ok")).ok());
  REQUIRE(Eventually([&] { return f.store.Count("add") == 1; }));
  CHECK(f.store.Calls().size() == 2);  // The initial replace and the valid add.
  CHECK(f.backoffs.Size() == 0);
  CHECK(f.Watches() == 1);
}

}  // namespace
}  // namespace nereid::kube
