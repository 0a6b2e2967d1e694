#include "tests/fakes/fake_kube_client.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "common/kube/errors.h"
#include "common/kube/resource.h"
#include "common/time/fake_clock.h"
#include "tests/fakes/eventually.h"

namespace nereid::fakes {
namespace {

using kube::Json;
using kube::WatchEvent;
namespace resources = kube::resources;

Json Pod(const std::string& name, std::map<std::string, std::string> labels = {},
         const std::string& node = "") {
  Json pod = {{"metadata", {{"name", name}}}, {"spec", {{"containers", Json::array()}}}};
  if (!labels.empty()) pod["metadata"]["labels"] = labels;
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  return pod;
}

TEST_CASE("fake client create assigns uid, resourceVersion, generation, timestamps", "[fake]") {
  FakeClock clock;
  FakeKubeClient client(&clock);
  auto pod = client.Create(resources::Pods(), "ns1", Pod("a"));
  REQUIRE(pod.ok());
  CHECK(kube::Namespace(*pod) == "ns1");
  CHECK_FALSE(kube::Uid(*pod).empty());
  CHECK(kube::ResourceVersion(*pod) == "1");
  CHECK(kube::Generation(*pod) == 1);
  CHECK(kube::CreationTimestamp(*pod) == absl::FromUnixSeconds(1'700'000'000));
  CHECK((*pod)["kind"] == "Pod");
  CHECK((*pod)["apiVersion"] == "v1");

  // One resourceVersion counter across resources.
  auto cm = client.Create(resources::ConfigMaps(), "ns1", {{"metadata", {{"name", "c"}}}});
  REQUIRE(cm.ok());
  CHECK(kube::ResourceVersion(*cm) == "2");
  CHECK(kube::Uid(*cm) != kube::Uid(*pod));

  CHECK(absl::IsAlreadyExists(client.Create(resources::Pods(), "ns1", Pod("a")).status()));
  Json generated = {{"metadata", {{"generateName", "worker-"}}}};
  auto gen = client.Create(resources::Pods(), "ns1", generated);
  REQUIRE(gen.ok());
  CHECK(kube::Name(*gen).rfind("worker-", 0) == 0);
  CHECK(kube::Name(*gen).size() > 7);
  CHECK(kube::IsInvalid(client.Create(resources::Pods(), "ns1", Json{{"metadata", {}}}).status()));
}

TEST_CASE("fake client update: optimistic concurrency, generation, status subresource", "[fake]") {
  FakeKubeClient client;
  auto created = client.Create(resources::Pods(), "ns", Pod("a"));
  REQUIRE(created.ok());

  Json stale = *created;
  Json next = *created;
  next["spec"]["nodeName"] = "n1";
  next["status"] = {{"phase", "Running"}};  // Ignored by the main resource.
  auto updated = client.Update(resources::Pods(), next);
  REQUIRE(updated.ok());
  CHECK(kube::Generation(*updated) == 2);
  CHECK_FALSE(updated->contains("status"));
  CHECK(kube::ResourceVersion(*updated) != kube::ResourceVersion(*created));

  stale["spec"]["nodeName"] = "n2";
  CHECK(kube::IsConflict(client.Update(resources::Pods(), stale).status()));

  Json with_status = *updated;
  with_status["status"] = {{"phase", "Running"}};
  with_status["spec"]["nodeName"] = "ignored";
  auto status = client.UpdateStatus(resources::Pods(), with_status);
  REQUIRE(status.ok());
  CHECK(kube::StringAt(*status, "status.phase") == "Running");
  CHECK(kube::StringAt(*status, "spec.nodeName") == "n1");
  CHECK(kube::Generation(*status) == 2);  // Status changes do not bump generation.

  // Label changes do not bump generation either; a no-op write keeps the resourceVersion.
  Json labeled = *status;
  labeled["metadata"]["labels"] = {{"x", "y"}};
  auto relabeled = client.Update(resources::Pods(), labeled);
  REQUIRE(relabeled.ok());
  CHECK(kube::Generation(*relabeled) == 2);
  auto same = client.Update(resources::Pods(), *relabeled);
  REQUIRE(same.ok());
  CHECK(kube::ResourceVersion(*same) == kube::ResourceVersion(*relabeled));
  CHECK(absl::IsNotFound(client.Update(resources::Pods(), Pod("missing")).status()));
}

TEST_CASE("fake client patch: merge, JSON patch, status subresource, rv precondition", "[fake]") {
  FakeKubeClient client;
  REQUIRE(client.Create(resources::Pods(), "ns", Pod("a", {{"app", "x"}})).ok());
  auto merged = client.Patch(resources::Pods(), "ns", "a", kube::PatchType::kMerge,
                             {{"metadata", {{"labels", {{"app", nullptr}, {"tier", "web"}}}}}});
  REQUIRE(merged.ok());
  CHECK(kube::Labels(*merged) == std::map<std::string, std::string>{{"tier", "web"}});
  auto json_patched =
      client.Patch(resources::Pods(), "ns", "a", kube::PatchType::kJson,
                   Json::array({{{"op", "add"}, {"path", "/spec/nodeName"}, {"value", "n9"}}}));
  REQUIRE(json_patched.ok());
  CHECK(kube::StringAt(*json_patched, "spec.nodeName") == "n9");
  auto bad = client.Patch(resources::Pods(), "ns", "a", kube::PatchType::kJson,
                          Json::array({{{"op", "remove"}, {"path", "/nope/x"}}}));
  CHECK(kube::IsInvalid(bad.status()));
  auto status =
      client.Patch(resources::Pods(), "ns", "a", kube::PatchType::kMerge,
                   {{"status", {{"phase", "Failed"}}}, {"spec", {{"nodeName", "zz"}}}}, "status");
  REQUIRE(status.ok());
  CHECK(kube::StringAt(*status, "status.phase") == "Failed");
  CHECK(kube::StringAt(*status, "spec.nodeName") == "n9");
  auto conflict = client.Patch(resources::Pods(), "ns", "a", kube::PatchType::kMerge,
                               {{"metadata", {{"resourceVersion", "1"}}}});
  CHECK(kube::IsConflict(conflict.status()));
}

TEST_CASE("fake client delete: finalizers, preconditions", "[fake]") {
  FakeKubeClient client;
  Json pod = Pod("a");
  pod["metadata"]["finalizers"] = {"nereid.io/cleanup"};
  auto created = client.Create(resources::Pods(), "ns", pod);
  REQUIRE(created.ok());
  kube::DeleteOptions wrong_uid;
  wrong_uid.precondition_uid = "nope";
  CHECK(kube::IsConflict(client.Delete(resources::Pods(), "ns", "a", wrong_uid)));

  REQUIRE(client.Delete(resources::Pods(), "ns", "a").ok());
  auto terminating = client.Get(resources::Pods(), "ns", "a");
  REQUIRE(terminating.ok());
  CHECK(kube::IsBeingDeleted(*terminating));
  Json cleared = *terminating;
  cleared["metadata"]["finalizers"] = Json::array();
  REQUIRE(client.Update(resources::Pods(), cleared).ok());
  CHECK(absl::IsNotFound(client.Get(resources::Pods(), "ns", "a").status()));
  CHECK(absl::IsNotFound(client.Delete(resources::Pods(), "ns", "a")));
}

TEST_CASE("fake client list: selectors and paging", "[fake]") {
  FakeKubeClient client;
  for (int i = 0; i < 5; ++i) {
    REQUIRE(client
                .Create(resources::Pods(), "ns",
                        Pod("p" + std::to_string(i), {{"app", i % 2 ? "odd" : "even"}},
                            "node" + std::to_string(i % 2)))
                .ok());
  }
  REQUIRE(client.Create(resources::Pods(), "other", Pod("q", {{"app", "even"}})).ok());

  kube::ListOptions by_label;
  by_label.label_selector = "app=even";
  auto even = client.List(resources::Pods(), "ns", by_label);
  REQUIRE(even.ok());
  CHECK(even->items.size() == 3);
  auto everywhere = client.List(resources::Pods(), "", by_label);
  REQUIRE(everywhere.ok());
  CHECK(everywhere->items.size() == 4);

  kube::ListOptions by_field;
  by_field.field_selector = "spec.nodeName=node1";
  auto on_node = client.List(resources::Pods(), "", by_field);
  REQUIRE(on_node.ok());
  CHECK(on_node->items.size() == 2);

  kube::ListOptions bad;
  bad.label_selector = "app in (";
  CHECK(kube::IsInvalid(client.List(resources::Pods(), "", bad).status()));

  kube::ListOptions paged;
  paged.limit = 2;
  std::vector<std::string> names;
  for (int page = 0; page < 10; ++page) {
    auto list = client.List(resources::Pods(), "", paged);
    REQUIRE(list.ok());
    CHECK(list->items.size() <= 2);
    for (const Json& item : list->items) names.push_back(kube::Name(item));
    if (list->continue_token.empty()) break;
    paged.continue_token = list->continue_token;
  }
  CHECK(names == std::vector<std::string>{"p0", "p1", "p2", "p3", "p4", "q"});
}

TEST_CASE("fake client watch: replay, selectors, 410 Gone, expiry, close, bookmarks", "[fake]") {
  FakeClock clock;
  FakeKubeClient client(&clock, /*history_limit=*/4);
  REQUIRE(client.Create(resources::Pods(), "ns", Pod("a", {{"app", "x"}})).ok());  // rv 1
  auto b = client.Create(resources::Pods(), "ns", Pod("b", {{"app", "y"}}));       // rv 2
  REQUIRE(b.ok());

  kube::ListOptions options;
  options.resource_version = "1";
  options.label_selector = "app=y";
  options.allow_watch_bookmarks = true;
  auto watch = client.Watch(resources::Pods(), "ns", options);
  REQUIRE(watch.ok());
  WatchEvent event;
  REQUIRE((*watch)->Next(&event));  // Replayed from history: b was added after rv 1.
  CHECK(event.type == WatchEvent::Type::kAdded);
  CHECK(kube::Name(event.object) == "b");

  // Relabeled out of the selection: the watcher sees a DELETED.
  Json moved = *b;
  moved["metadata"]["labels"]["app"] = "z";
  REQUIRE(client.Update(resources::Pods(), moved).ok());
  REQUIRE((*watch)->Next(&event));
  CHECK(event.type == WatchEvent::Type::kDeleted);

  client.SendBookmark();
  REQUIRE((*watch)->Next(&event));
  CHECK(event.type == WatchEvent::Type::kBookmark);
  CHECK(kube::ResourceVersion(event.object) == std::to_string(client.CurrentResourceVersion()));

  client.ExpireWatches();
  REQUIRE((*watch)->Next(&event));
  CHECK(event.type == WatchEvent::Type::kError);
  CHECK(event.object["code"] == 410);
  CHECK_FALSE((*watch)->Next(&event));

  // History holds 4 changes: older versions are gone.
  for (int i = 0; i < 5; ++i) {
    REQUIRE(client
                .Create(resources::ConfigMaps(), "ns",
                        {{"metadata", {{"name", "c" + std::to_string(i)}}}})
                .ok());
  }
  kube::ListOptions old;
  old.resource_version = "2";
  CHECK(kube::IsGone(client.Watch(resources::Pods(), "ns", old).status()));
  old.resource_version = std::to_string(client.CurrentResourceVersion());
  auto fresh = client.Watch(resources::Pods(), "ns", old);
  REQUIRE(fresh.ok());
  client.CompactHistory();
  kube::ListOptions from_three;
  from_three.resource_version = "3";
  CHECK(kube::IsGone(client.Watch(resources::Pods(), "ns", from_three).status()));

  client.CloseWatches();
  CHECK_FALSE((*fresh)->Next(&event));
  CHECK((*fresh)->Finish().ok());

  // timeoutSeconds elapses on the fake clock.
  kube::ListOptions timed;
  timed.resource_version = std::to_string(client.CurrentResourceVersion());
  timed.timeout_seconds = 300;
  auto timed_watch = client.Watch(resources::Pods(), "ns", timed);
  REQUIRE(timed_watch.ok());
  CHECK(client.OpenWatches() == 1);
  std::atomic<bool> ended{false};
  std::thread reader([&] {
    WatchEvent e;
    ended = !(*timed_watch)->Next(&e);
  });
  REQUIRE(Eventually([&] { return clock.timed_waiters() == 1; }));
  clock.Advance(absl::Seconds(300));
  REQUIRE(Eventually([&] { return ended.load(); }));
  reader.join();
}

TEST_CASE("fake client injects failures and records actions", "[fake]") {
  FakeKubeClient client;
  client.FailNext(Verb::kCreate, 2, absl::UnavailableError("down"), "pods");
  CHECK(absl::IsUnavailable(client.Create(resources::Pods(), "ns", Pod("a")).status()));
  // Another resource is not affected.
  CHECK(client.Create(resources::ConfigMaps(), "ns", {{"metadata", {{"name", "c"}}}}).ok());
  CHECK(absl::IsUnavailable(client.Create(resources::Pods(), "ns", Pod("a")).status()));
  CHECK(client.Create(resources::Pods(), "ns", Pod("a")).ok());
  CHECK(client.CountActions(Verb::kCreate, "pods") == 3);
  CHECK(client.CountActions(Verb::kCreate) == 4);
  auto actions = client.ActionsOf(Verb::kCreate, "configmaps");
  REQUIRE(actions.size() == 1);
  CHECK(actions[0].ns == "ns");
  CHECK(actions[0].name == "c");
  client.ClearActions();
  CHECK(client.Actions().empty());
  client.SetServed(resources::PodGroups(), false);
  CHECK(*client.IsServed(resources::PodGroups()) == false);
  CHECK(*client.IsServed(resources::Pods()) == true);
}

}  // namespace
}  // namespace nereid::fakes
