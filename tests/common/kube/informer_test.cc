#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/kube/resource.h"
#include "common/kube/shared_informer.h"
#include "common/kube/shared_informer_factory.h"
#include "common/time/fake_clock.h"
#include "tests/fakes/eventually.h"
#include "tests/fakes/fake_kube_client.h"

namespace nereid::kube {
namespace {

using fakes::Eventually;
using fakes::FakeKubeClient;
using fakes::Verb;

// What a handler was told, in order.
class HandlerLog {
 public:
  struct Entry {
    std::string op;  // add | update | delete | tombstone
    std::string key;
    ObjectPtr old_object;
    ObjectPtr object;
  };

  ResourceEventHandlerFuncs Funcs() {
    ResourceEventHandlerFuncs funcs;
    funcs.on_add = [this](const ObjectPtr& object) {
      Push({"add", Key(*object), nullptr, object});
    };
    funcs.on_update = [this](const ObjectPtr& old_object, const ObjectPtr& object) {
      Push({"update", Key(*object), old_object, object});
    };
    funcs.on_delete = [this](const DeletedObject& deleted) {
      const bool tombstone = std::holds_alternative<DeletedFinalStateUnknown>(deleted);
      Push({tombstone ? "tombstone" : "delete", DeletedKey(deleted), nullptr,
            LastKnownState(deleted)});
    };
    return funcs;
  }

  std::vector<Entry> Entries() const {
    absl::MutexLock lock(&mu_);
    return entries_;
  }
  size_t Size() const { return Entries().size(); }
  int Count(const std::string& op) const {
    int n = 0;
    for (const Entry& e : Entries()) n += e.op == op;
    return n;
  }
  std::vector<Entry> Of(const std::string& op) const {
    std::vector<Entry> out;
    for (const Entry& e : Entries()) {
      if (e.op == op) out.push_back(e);
    }
    return out;
  }

 private:
  void Push(Entry entry) {
    absl::MutexLock lock(&mu_);
    entries_.push_back(std::move(entry));
  }
  mutable absl::Mutex mu_;
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mu_);
};

Json Pod(const std::string& name, const std::string& app = "web", const std::string& node = "n1") {
  return {{"metadata", {{"name", name}, {"labels", {{"app", app}}}}},
          {"spec", {{"nodeName", node}}}};
}

InformerOptions TestOptions() {
  InformerOptions options;
  options.reflector.uniform01 = [] { return 0.5; };
  return options;
}

// The cache matches the server: same keys at the same resourceVersions.
bool Converged(const SharedInformer& informer, const FakeKubeClient& client,
               const Resource& resource) {
  std::map<std::string, std::string> server;
  for (const Json& object : client.Objects(resource)) server[Key(object)] = ResourceVersion(object);
  std::map<std::string, std::string> cache;
  for (const ObjectPtr& object : informer.GetIndexer().List()) {
    cache[Key(*object)] = ResourceVersion(*object);
  }
  return server == cache;
}

TEST_CASE("informer converges through add, update and delete", "[informer]") {
  FakeClock clock;
  FakeKubeClient client(&clock);
  REQUIRE(client.Create(resources::Pods(), "ns", Pod("a")).ok());
  REQUIRE(client.Create(resources::Pods(), "ns", Pod("b")).ok());
  HandlerLog log;
  SharedInformer informer(&client, resources::Pods(), TestOptions(), &clock);
  informer.AddEventHandler(log.Funcs());
  CHECK_FALSE(informer.HasSynced());
  informer.Start();
  REQUIRE(informer.WaitForSync(clock.Now() + absl::Hours(1)));
  // Synced means the initial objects were delivered, not merely cached.
  CHECK(log.Count("add") == 2);
  auto cached = informer.GetLister().Get("ns", "a");
  REQUIRE(cached.ok());
  CHECK(informer.GetLister().Get("ns", "a").value() == *cached);  // Shared, not copied.

  Json a = client.Get(resources::Pods(), "ns", "a").value();
  a["spec"]["nodeName"] = "n2";
  REQUIRE(client.Update(resources::Pods(), a).ok());
  REQUIRE(client.Delete(resources::Pods(), "ns", "b").ok());
  REQUIRE(client.Create(resources::Pods(), "ns", Pod("c")).ok());
  REQUIRE(Eventually([&] { return log.Size() == 5; }));
  auto entries = log.Entries();
  CHECK(entries[2].op == "update");
  CHECK(entries[2].key == "ns/a");
  CHECK(entries[2].old_object == *cached);
  CHECK(StringAt(*entries[2].object, "spec.nodeName") == "n2");
  CHECK(entries[3].op == "delete");
  CHECK(entries[3].key == "ns/b");
  CHECK(entries[4].op == "add");
  CHECK(entries[4].key == "ns/c");
  CHECK(Converged(informer, client, resources::Pods()));
  // The reflector records the resourceVersion after it hands the event to the queue (client-go's
  // order), so a handler can run before the version moves: wait for it rather than race it.
  CHECK(Eventually([&] {
    return informer.LastSyncResourceVersion() == std::to_string(client.CurrentResourceVersion());
  }));
  // The object we held is untouched by the update (immutable snapshots).
  CHECK(StringAt(**cached, "spec.nodeName") == "n1");
}

TEST_CASE("informer relist after 410 delivers a missed delete as a tombstone", "[informer]") {
  FakeClock clock;
  FakeKubeClient client(&clock);
  for (const char* name : {"p0", "p1", "p2"}) {
    REQUIRE(client.Create(resources::Pods(), "ns", Pod(name)).ok());
  }
  InformerOptions options = TestOptions();
  std::atomic<int> backoffs{0};
  options.reflector.on_backoff = [&](absl::Duration) { ++backoffs; };
  HandlerLog log;
  SharedInformer informer(&client, resources::Pods(), options, &clock);
  informer.AddEventHandler(log.Funcs());
  informer.Start();
  REQUIRE(informer.WaitForSync(clock.Now() + absl::Hours(1)));
  const ObjectPtr last_known_p1 = informer.GetLister().Get("ns", "p1").value();
  const ObjectPtr old_p2 = informer.GetLister().Get("ns", "p2").value();
  REQUIRE(Eventually([&] { return client.OpenWatches() == 1; }));

  // The watch drops and cannot come back before history is compacted past it.
  client.FailNext(Verb::kWatch, 1, absl::UnavailableError("connection reset"));
  clock.Advance(absl::Seconds(5));
  client.CloseWatches();
  REQUIRE(Eventually([&] { return backoffs.load() == 1 && clock.timed_waiters() == 1; }));
  REQUIRE(client.Delete(resources::Pods(), "ns", "p1").ok());
  REQUIRE(client
              .Patch(resources::Pods(), "ns", "p2", PatchType::kMerge,
                     {{"metadata", {{"labels", {{"tier", "1"}}}}}})
              .ok());
  REQUIRE(client.Create(resources::Pods(), "ns", Pod("p3")).ok());
  client.CompactHistory();
  clock.Advance(absl::Seconds(1));

  REQUIRE(Eventually([&] { return log.Count("tombstone") == 1 && log.Count("add") == 4; }));
  auto tombstone = log.Of("tombstone")[0];
  CHECK(tombstone.key == "ns/p1");
  CHECK(tombstone.object == last_known_p1);  // The last state the cache knew.
  bool saw_p2_update = false;
  for (const auto& entry : log.Of("update")) {
    if (entry.key == "ns/p2") {
      saw_p2_update = entry.old_object == old_p2 && Label(*entry.object, "tier") == "1";
    }
  }
  CHECK(saw_p2_update);
  CHECK(log.Of("add").back().key == "ns/p3");
  CHECK(informer.ReflectorStats().gone == 1);
  REQUIRE(Eventually([&] { return Converged(informer, client, resources::Pods()); }));
  CHECK(absl::IsNotFound(informer.GetLister().Get("ns", "p1").status()));
}

TEST_CASE("informer relist after a 410 ERROR event converges", "[informer]") {
  FakeClock clock;
  FakeKubeClient client(&clock);
  REQUIRE(client.Create(resources::Pods(), "ns", Pod("a")).ok());
  HandlerLog log;
  SharedInformer informer(&client, resources::Pods(), TestOptions(), &clock);
  informer.AddEventHandler(log.Funcs());
  informer.Start();
  REQUIRE(informer.WaitForSync(clock.Now() + absl::Hours(1)));
  REQUIRE(Eventually([&] { return client.OpenWatches() == 1; }));
  client.ExpireWatches();
  REQUIRE(Eventually([&] { return informer.ReflectorStats().lists == 2; }));
  REQUIRE(client.Create(resources::Pods(), "ns", Pod("b")).ok());
  REQUIRE(Eventually([&] { return Converged(informer, client, resources::Pods()); }));
  CHECK(log.Count("tombstone") == 0);
}

// Creates pods ns/a and ns/b; returns options that resync every 30 s.
InformerOptions TwoPodsResyncing(FakeKubeClient& client) {
  REQUIRE(client.Create(resources::Pods(), "ns", Pod("a")).ok());
  REQUIRE(client.Create(resources::Pods(), "ns", Pod("b")).ok());
  InformerOptions options = TestOptions();
  options.resync_period = absl::Seconds(30);
  return options;
}

TEST_CASE("informer resync replays the cache as updates every period", "[informer]") {
  FakeClock clock;
  FakeKubeClient client(&clock);
  InformerOptions options = TwoPodsResyncing(client);
  HandlerLog log;
  SharedInformer informer(&client, resources::Pods(), options, &clock);
  informer.AddEventHandler(log.Funcs());
  informer.Start();
  REQUIRE(informer.WaitForSync(clock.Now() + absl::Hours(1)));
  // Dispatcher (resync timer) and reflector (watch timeout) are both parked on the clock.
  REQUIRE(Eventually([&] { return clock.timed_waiters() == 2; }));
  CHECK(log.Count("update") == 0);
  clock.Advance(absl::Seconds(30));
  REQUIRE(Eventually([&] { return log.Count("update") == 2; }));
  for (const auto& entry : log.Of("update")) {
    CHECK(entry.old_object == entry.object);  // Resync: no change, same object.
  }
  CHECK(client.CountActions(Verb::kList) == 1);  // A replay of the cache, not a relist.
  REQUIRE(Eventually([&] { return clock.timed_waiters() == 2; }));
  clock.Advance(absl::Seconds(30));
  REQUIRE(Eventually([&] { return log.Count("update") == 4; }));
}

TEST_CASE("informer resync delivers the watch's news between chunks of its replay",
          "[informer]") {
  FakeClock clock;
  FakeKubeClient client(&clock);
  constexpr int kPods = 1000;
  for (int i = 0; i < kPods; ++i) {
    REQUIRE(client.Create(resources::Pods(), "ns", Pod("p" + std::to_string(i))).ok());
  }
  InformerOptions options = TestOptions();
  options.resync_period = absl::Seconds(30);
  SharedInformer informer(&client, resources::Pods(), options, &clock);
  HandlerLog log;
  informer.AddEventHandler(log.Funcs());
  // On the first replayed object, a change comes through the watch and reaches the cache.
  std::atomic<bool> news_made{false};
  std::atomic<bool> news_cached{false};
  ResourceEventHandlerFuncs news;
  news.on_update = [&](const ObjectPtr& old_object, const ObjectPtr& object) {
    if (old_object != object || news_made.exchange(true)) return;
    if (!client.Create(resources::Pods(), "ns", Pod("news")).ok()) return;
    news_cached = Eventually([&] { return informer.GetIndexer().Get("ns/news") != nullptr; });
  };
  informer.AddEventHandler(news);
  informer.Start();
  REQUIRE(informer.WaitForSync(clock.Now() + absl::Hours(1)));
  REQUIRE(Eventually([&] { return clock.timed_waiters() == 2; }));
  clock.Advance(absl::Seconds(30));
  REQUIRE(Eventually([&] { return log.Count("update") == kPods && log.Count("add") == kPods + 1; }));
  REQUIRE(news_cached);
  int updates_before_news = 0;
  for (const auto& entry : log.Entries()) {
    if (entry.op == "add" && entry.key == "ns/news") break;
    updates_before_news += entry.op == "update";
  }
  // Delivered after the chunk under way (128 keys), not after the whole replay.
  CHECK(updates_before_news <= 128);
}

TEST_CASE("informer resync hands on_resync handlers the key, the others the cached object",
          "[informer]") {
  FakeClock clock;
  FakeKubeClient client(&clock);
  InformerOptions options = TwoPodsResyncing(client);
  options.cache_encoding = GENERATE(CacheEncoding::kDecoded, CacheEncoding::kCompact);
  SharedInformer informer(&client, resources::Pods(), options, &clock);
  absl::Mutex mu;
  std::vector<std::string> resynced;
  int keyed_updates = 0;
  ResourceEventHandlerFuncs keyed;
  keyed.on_update = [&](const ObjectPtr&, const ObjectPtr&) {
    absl::MutexLock lock(&mu);
    ++keyed_updates;
  };
  keyed.on_resync = [&](const std::string& key) {
    absl::MutexLock lock(&mu);
    resynced.push_back(key);
  };
  informer.AddEventHandler(keyed);
  informer.Start();
  REQUIRE(informer.WaitForSync(clock.Now() + absl::Hours(1)));
  REQUIRE(Eventually([&] { return clock.timed_waiters() == 2; }));
  auto resynced_count = [&] {
    absl::MutexLock lock(&mu);
    return resynced.size();
  };

  SECTION("every handler takes keys: the replay reads no object") {
    clock.Advance(absl::Seconds(30));
    REQUIRE(Eventually([&] { return resynced_count() == 2; }));
    absl::MutexLock lock(&mu);
    std::sort(resynced.begin(), resynced.end());
    CHECK(resynced == std::vector<std::string>{"ns/a", "ns/b"});
    CHECK(keyed_updates == 0);
  }
  SECTION("a handler without on_resync still gets on_update with the cached object twice") {
    HandlerLog log;
    informer.AddEventHandler(log.Funcs());
    REQUIRE(Eventually([&] { return log.Count("add") == 2; }));
    clock.Advance(absl::Seconds(30));
    REQUIRE(Eventually([&] { return resynced_count() == 2 && log.Count("update") == 2; }));
    for (const auto& entry : log.Of("update")) {
      CHECK(entry.old_object == entry.object);
      CHECK(entry.object == informer.GetIndexer().Get(entry.key));  // shared while held
    }
    absl::MutexLock lock(&mu);
    CHECK(keyed_updates == 0);
  }
}

TEST_CASE("informer with resync disabled never replays", "[informer]") {
  FakeClock clock;
  FakeKubeClient client(&clock);
  REQUIRE(client.Create(resources::Pods(), "ns", Pod("a")).ok());
  HandlerLog log;
  SharedInformer informer(&client, resources::Pods(), TestOptions(), &clock);
  informer.AddEventHandler(log.Funcs());
  informer.Start();
  REQUIRE(informer.WaitForSync(clock.Now() + absl::Hours(1)));
  clock.Advance(absl::Hours(1));
  REQUIRE(client.Create(resources::Pods(), "ns", Pod("b")).ok());
  // Notifications are delivered in order: a replay before this add would be seen first.
  REQUIRE(Eventually([&] { return log.Count("add") == 2; }));
  CHECK(log.Count("update") == 0);
}

TEST_CASE("a handler added late is caught up with adds for the cached objects", "[informer]") {
  FakeClock clock;
  FakeKubeClient client(&clock);
  for (const char* name : {"a", "b", "c"}) {
    REQUIRE(client.Create(resources::Pods(), "ns", Pod(name)).ok());
  }
  HandlerLog early;
  HandlerLog late;
  SharedInformer informer(&client, resources::Pods(), TestOptions(), &clock);
  informer.AddEventHandler(early.Funcs());
  informer.Start();
  REQUIRE(informer.WaitForSync(clock.Now() + absl::Hours(1)));
  informer.AddEventHandler(late.Funcs());
  REQUIRE(client.Create(resources::Pods(), "ns", Pod("d")).ok());
  REQUIRE(Eventually([&] { return late.Count("add") == 4 && early.Count("add") == 4; }));
  CHECK(early.Size() == 4);
  CHECK(late.Size() == 4);
  CHECK(late.Entries().back().key == "ns/d");
}

TEST_CASE("a label-selected informer sees objects leave and join its selection", "[informer]") {
  FakeClock clock;
  FakeKubeClient client(&clock);
  REQUIRE(client.Create(resources::Pods(), "ns", Pod("web1", "web")).ok());
  REQUIRE(client.Create(resources::Pods(), "ns", Pod("db1", "db")).ok());
  InformerOptions options = TestOptions();
  options.label_selector = "app=web";
  HandlerLog log;
  SharedInformer informer(&client, resources::Pods(), options, &clock);
  informer.AddEventHandler(log.Funcs());
  informer.Start();
  REQUIRE(informer.WaitForSync(clock.Now() + absl::Hours(1)));
  CHECK(informer.GetIndexer().ListKeys() == std::vector<std::string>{"ns/web1"});
  REQUIRE(client
              .Patch(resources::Pods(), "ns", "web1", PatchType::kMerge,
                     {{"metadata", {{"labels", {{"app", "db"}}}}}})
              .ok());
  REQUIRE(client
              .Patch(resources::Pods(), "ns", "db1", PatchType::kMerge,
                     {{"metadata", {{"labels", {{"app", "web"}}}}}})
              .ok());
  REQUIRE(Eventually([&] { return log.Size() == 3; }));
  CHECK(log.Entries()[1].op == "delete");
  CHECK(log.Entries()[2].op == "add");
  CHECK(informer.GetIndexer().ListKeys() == std::vector<std::string>{"ns/db1"});
}

TEST_CASE("informer indexes by custom functions and serves them through the lister", "[informer]") {
  FakeClock clock;
  FakeKubeClient client(&clock);
  REQUIRE(client.Create(resources::Pods(), "ns", Pod("a", "web", "edge-1")).ok());
  REQUIRE(client.Create(resources::Pods(), "ns", Pod("b", "web", "edge-2")).ok());
  InformerOptions options = TestOptions();
  options.indexers = {{"node", FieldIndexFunc("spec.nodeName")}};
  SharedInformer informer(&client, resources::Pods(), options, &clock);
  informer.Start();
  REQUIRE(informer.WaitForSync(clock.Now() + absl::Hours(1)));
  auto on_edge1 = informer.GetLister().ByIndex("node", "edge-1");
  REQUIRE(on_edge1.ok());
  REQUIRE(on_edge1->size() == 1);
  CHECK(Name(*(*on_edge1)[0]) == "a");
  REQUIRE(client
              .Patch(resources::Pods(), "ns", "b", PatchType::kMerge,
                     {{"spec", {{"nodeName", "edge-1"}}}})
              .ok());
  REQUIRE(Eventually([&] { return informer.GetLister().ByIndex("node", "edge-1")->size() == 2; }));
  CHECK(informer.GetLister().ByIndex("node", "edge-2")->empty());
}

TEST_CASE("a throwing handler does not stop delivery", "[informer]") {
  FakeClock clock;
  FakeKubeClient client(&clock);
  std::atomic<int> calls{0};
  SharedInformer informer(&client, resources::Pods(), TestOptions(), &clock);
  ResourceEventHandlerFuncs funcs;
  funcs.on_add = [&](const ObjectPtr&) {
    if (++calls == 1) throw std::runtime_error("handler bug");
  };
  informer.AddEventHandler(funcs);
  informer.Start();
  REQUIRE(informer.WaitForSync(clock.Now() + absl::Hours(1)));
  REQUIRE(client.Create(resources::Pods(), "ns", Pod("a")).ok());
  REQUIRE(client.Create(resources::Pods(), "ns", Pod("b")).ok());
  REQUIRE(Eventually([&] { return calls.load() == 2; }));
}

TEST_CASE("WaitForCacheSync gives up at the deadline when lists keep failing", "[informer]") {
  FakeKubeClient client;
  client.FailNext(Verb::kList, 1000, absl::UnavailableError("down"), "pods");
  REQUIRE(client.Create(resources::ConfigMaps(), "ns", {{"metadata", {{"name", "c"}}}}).ok());
  SharedInformer pods(&client, resources::Pods(), {}, Clock::Real());
  SharedInformer configmaps(&client, resources::ConfigMaps(), {}, Clock::Real());
  pods.Start();
  configmaps.Start();
  CHECK(configmaps.WaitForSync(absl::Now() + absl::Seconds(10)));
  const absl::Time start = absl::Now();
  CHECK_FALSE(WaitForCacheSync({&configmaps, &pods}, absl::Now() + absl::Milliseconds(200)));
  CHECK(absl::Now() - start < absl::Seconds(5));
  CHECK_FALSE(pods.HasSynced());
}

TEST_CASE("informer factory shares one informer per resource and selection", "[informer]") {
  FakeClock clock;
  FakeKubeClient client(&clock);
  REQUIRE(client.Create(resources::Pods(), "ns", Pod("a")).ok());
  SharedInformerFactory factory(&client, &clock);
  SharedInformer* pods = factory.Informer(resources::Pods());
  CHECK(factory.Informer(resources::Pods()) == pods);
  InformerOptions selected;
  selected.label_selector = "app=web";
  SharedInformer* web = factory.Informer(resources::Pods(), selected);
  CHECK(web != pods);
  factory.Start();
  SharedInformer* late = factory.Informer(resources::ConfigMaps());  // Started on creation.
  CHECK(factory.WaitForCacheSync(clock.Now() + absl::Hours(1)));
  CHECK(late->HasSynced());
  CHECK(pods->GetIndexer().Size() == 1);
  CHECK(client.CountActions(Verb::kList, "pods") == 2);  // One per distinct informer.
  factory.Stop();
}

TEST_CASE("informer factory gives each resource its default cache transform and encoding",
          "[informer]") {
  FakeClock clock;
  FakeKubeClient client(&clock);
  Json pod = Pod("a");
  pod["metadata"]["managedFields"] = Json::array({{{"manager", "kubectl"}}});
  REQUIRE(client.Create(resources::Pods(), "ns", pod).ok());
  REQUIRE(client.Create(resources::ConfigMaps(), "ns", pod).ok());
  std::vector<std::string> asked;
  SharedInformerFactory factory(&client, &clock, absl::ZeroDuration(),
                                [&](const Resource& resource) {
                                  asked.push_back(resource.resource);
                                  SharedInformerFactory::CachePolicy policy;
                                  if (resource.resource == "pods") {
                                    policy = {DropManagedFields, CacheEncoding::kCompact};
                                  }
                                  return policy;
                                });
  SharedInformer* pods = factory.Informer(resources::Pods());
  SharedInformer* configmaps = factory.Informer(resources::ConfigMaps());
  InformerOptions own;
  own.label_selector = "app=web";
  own.reflector.transform = [](Json& object) { object["metadata"]["labels"]["seen"] = "own"; };
  SharedInformer* web = factory.Informer(resources::Pods(), own);
  InformerOptions decoded;
  decoded.label_selector = "app=db";
  decoded.cache_encoding = CacheEncoding::kDecoded;
  SharedInformer* db = factory.Informer(resources::Pods(), decoded);
  factory.Start();
  REQUIRE(factory.WaitForCacheSync(clock.Now() + absl::Hours(1)));
  CHECK(asked == std::vector<std::string>{"pods", "configmaps", "pods", "pods"});
  CHECK(pods->GetIndexer().encoding() == CacheEncoding::kCompact);
  CHECK(web->GetIndexer().encoding() == CacheEncoding::kCompact);  // Its transform only is its own.
  CHECK(db->GetIndexer().encoding() == CacheEncoding::kDecoded);
  CHECK(configmaps->GetIndexer().encoding() == CacheEncoding::kDecoded);
  auto cached = [](SharedInformer* informer) {
    absl::StatusOr<ObjectPtr> object = informer->GetLister().Get("ns", "a");
    REQUIRE(object.ok());
    return (**object)["metadata"];
  };
  CHECK_FALSE(cached(pods).contains("managedFields"));
  CHECK(cached(configmaps).contains("managedFields"));
  const Json web_pod = cached(web);  // Its own transform instead of the default.
  CHECK(web_pod["labels"]["seen"] == "own");
  CHECK(web_pod.contains("managedFields"));
  factory.Stop();
}

}  // namespace
}  // namespace nereid::kube

namespace nereid::kube {
namespace {

// Throughput, not correctness: run by hand with `kube_informer_test "[.perf]"`.
TEST_CASE("informer and indexer throughput", "[.perf]") {
  constexpr int kObjects = 20'000;
  {
    Indexer indexer;
    REQUIRE(indexer.AddIndexers({{"node", FieldIndexFunc("spec.nodeName")}}).ok());
    std::vector<ObjectPtr> objects;
    for (int i = 0; i < kObjects; ++i) {
      Json pod = Pod("p" + std::to_string(i), "web", "n" + std::to_string(i % 100));
      pod["metadata"]["namespace"] = "ns" + std::to_string(i % 10);
      objects.push_back(std::make_shared<const Json>(std::move(pod)));
    }
    absl::Time start = absl::Now();
    for (const ObjectPtr& object : objects) indexer.Upsert(object);
    WARN("indexer upsert (3 indexes): "
         << kObjects / absl::ToDoubleSeconds(absl::Now() - start) / 1e3 << " k/s");
    start = absl::Now();
    indexer.Replace(objects);
    WARN("indexer replace of " << kObjects << ": "
                               << absl::FormatDuration(absl::Now() - start));
    start = absl::Now();
    size_t found = 0;
    for (int i = 0; i < 1000; ++i) found += indexer.ByIndex("node", "n7")->size();
    WARN("ByIndex (200 hits): " << absl::ToDoubleMicroseconds(absl::Now() - start) / 1000
                                << " us/call, " << found / 1000 << " hits");
  }
  {
    FakeKubeClient client;
    std::atomic<int> adds{0};
    SharedInformer informer(&client, resources::Pods(), {}, Clock::Real());
    ResourceEventHandlerFuncs funcs;
    funcs.on_add = [&](const ObjectPtr&) { ++adds; };
    informer.AddEventHandler(funcs);
    informer.Start();
    REQUIRE(informer.WaitForSync(absl::Now() + absl::Seconds(10)));
    const absl::Time start = absl::Now();
    for (int i = 0; i < kObjects; ++i) {
      REQUIRE(client.Create(resources::Pods(), "ns", Pod("p" + std::to_string(i))).ok());
    }
    REQUIRE(Eventually([&] { return adds.load() == kObjects; }, absl::Seconds(60)));
    WARN("fake create → watch → cache → handler: "
         << kObjects / absl::ToDoubleSeconds(absl::Now() - start) / 1e3 << " k events/s");
  }
}

}  // namespace
}  // namespace nereid::kube
