#include "tools/devapiserver/storage.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <set>

#include "absl/strings/match.h"
#include "common/kube/errors.h"
#include "tests/tools/devapiserver/test_util.h"

namespace nereid::devapi {
namespace {

using testing::ConfigMap;
using testing::StoreFixture;
using testing::Widget;

int64_t Rv(const Json& obj) { return std::stoll(kube::ResourceVersion(obj)); }

Json Owned(Json obj, const Json& owner, bool block = false) {
  obj["metadata"]["ownerReferences"] = Json::array(
      {{{"apiVersion", owner.value("apiVersion", "")}, {"kind", owner.value("kind", "")},
        {"name", kube::Name(owner)}, {"uid", kube::Uid(owner)}, {"blockOwnerDeletion", block}}});
  return obj;
}

TEST_CASE("create assigns uid, global resourceVersion, timestamps, generation") {
  StoreFixture f;
  REQUIRE(f.status.ok());
  int64_t start = f.store->CurrentVersion();
  auto a = f.store->Create(f.ConfigMaps(), "default", ConfigMap("a"));
  auto b = f.store->Create(f.ConfigMaps(), "default", ConfigMap("b"));
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(Rv(*a) == start + 1);
  CHECK(Rv(*b) == start + 2);
  CHECK(kube::Uid(*a).size() == 36);
  CHECK(kube::Uid(*a) != kube::Uid(*b));
  CHECK(kube::Generation(*a) == 1);
  CHECK(kube::StringAt(*a, "metadata.creationTimestamp") == kube::FormatTimestamp(f.clock.Now()));
  CHECK(kube::Namespace(*a) == "default");
  auto dup = f.store->Create(f.ConfigMaps(), "default", ConfigMap("a"));
  CHECK(absl::IsAlreadyExists(dup.status()));
  CHECK(kube::HttpCodeFor(dup.status()) == 409);
}

TEST_CASE("create validates namespace and name") {
  StoreFixture f;
  CHECK(absl::IsNotFound(f.store->Create(f.ConfigMaps(), "nope", ConfigMap("a")).status()));
  auto bad = f.store->Create(f.ConfigMaps(), "default", ConfigMap("Bad_Name"));
  REQUIRE(kube::IsInvalid(bad.status()));
  CHECK(kube::Causes(bad.status()).at(0).field == "metadata.name");
  Json no_name = ConfigMap("");
  no_name["metadata"].erase("name");
  CHECK(kube::IsInvalid(f.store->Create(f.ConfigMaps(), "default", no_name).status()));
  Json wrong_kind = ConfigMap("x");
  wrong_kind["kind"] = "Secret";
  CHECK(kube::Reason(f.store->Create(f.ConfigMaps(), "default", wrong_kind).status()) == "BadRequest");
  Json other_ns = ConfigMap("x");
  other_ns["metadata"]["namespace"] = "kube-system";
  CHECK(kube::Reason(f.store->Create(f.ConfigMaps(), "default", other_ns).status()) == "BadRequest");
}

TEST_CASE("secrets: stringData is folded into base64 data") {
  StoreFixture f;
  Json secret = {{"metadata", {{"name", "s"}}}, {"stringData", {{"user", "admin"}}}, {"data", {{"x", "eA=="}}}};
  auto created = f.store->Create(f.Type("/secrets"), "default", secret);
  REQUIRE(created.ok());
  CHECK(kube::StringAt(*created, "data.user") == "YWRtaW4=");
  CHECK(kube::StringAt(*created, "data.x") == "eA==");
  CHECK(kube::FindPath(*created, "stringData") == nullptr);
}

TEST_CASE("generateName makes unique names") {
  StoreFixture f;
  std::set<std::string> names;
  for (int i = 0; i < 20; ++i) {
    Json obj = ConfigMap("");
    obj["metadata"].erase("name");
    obj["metadata"]["generateName"] = "job-";
    auto created = f.store->Create(f.ConfigMaps(), "default", obj);
    REQUIRE(created.ok());
    std::string name = kube::Name(*created);
    CHECK(name.rfind("job-", 0) == 0);
    CHECK(name.size() == 9);
    names.insert(name);
  }
  CHECK(names.size() == 20);
}

TEST_CASE("update: optimistic concurrency and unconditional updates") {
  StoreFixture f;
  auto created = f.store->Create(f.ConfigMaps(), "default", ConfigMap("a", {{"k", "1"}}));
  REQUIRE(created.ok());
  Json v2 = *created;
  v2["data"]["k"] = "2";
  auto updated = f.store->Update(f.ConfigMaps(), "default", "a", v2);
  REQUIRE(updated.ok());
  CHECK(Rv(*updated) > Rv(*created));
  // The same (now stale) resourceVersion again: 409.
  v2["data"]["k"] = "3";
  auto stale = f.store->Update(f.ConfigMaps(), "default", "a", v2);
  CHECK(kube::IsConflict(stale.status()));
  CHECK(kube::HttpCodeFor(stale.status()) == 409);
  // Built-ins accept an update without resourceVersion.
  v2["metadata"].erase("resourceVersion");
  CHECK(f.store->Update(f.ConfigMaps(), "default", "a", v2).ok());
  CHECK(absl::IsNotFound(f.store->Update(f.ConfigMaps(), "default", "zz", ConfigMap("zz")).status()));
  // A name in the body that contradicts the URL.
  CHECK(kube::Reason(f.store->Update(f.ConfigMaps(), "default", "b", v2).status()) == "BadRequest");
}

TEST_CASE("custom resources and leases refuse updates without resourceVersion") {
  StoreFixture f;
  const ResourceType& leases = f.Type("coordination.k8s.io/leases");
  auto lease = f.store->Create(leases, "default", Json{{"metadata", {{"name", "leader"}}},
                                                      {"spec", {{"holderIdentity", "a"}}}});
  REQUIRE(lease.ok());
  Json steal = *lease;
  steal["metadata"].erase("resourceVersion");
  steal["spec"]["holderIdentity"] = "b";
  CHECK(kube::IsInvalid(f.store->Update(leases, "default", "leader", steal).status()));
  f.InstallWidgets();
  auto w = f.store->Create(f.Widgets(), "default", Widget("w1"));
  REQUIRE(w.ok());
  Json next = *w;
  next["metadata"].erase("resourceVersion");
  auto r = f.store->Update(f.Widgets(), "default", "w1", next);
  REQUIRE(kube::IsInvalid(r.status()));
  CHECK(kube::Causes(r.status()).at(0).field == "metadata.resourceVersion");
}

TEST_CASE("generation bumps on spec changes only; no-op writes keep the version") {
  StoreFixture f;
  f.InstallWidgets();
  auto w = f.store->Create(f.Widgets(), "default", Widget("w1"));
  REQUIRE(w.ok());
  Json labeled = *w;
  labeled["metadata"]["labels"] = {{"a", "b"}};
  auto r1 = f.store->Update(f.Widgets(), "default", "w1", labeled);
  REQUIRE(r1.ok());
  CHECK(kube::Generation(*r1) == 1);
  Json spec = *r1;
  spec["spec"]["format"] = "json";
  auto r2 = f.store->Update(f.Widgets(), "default", "w1", spec);
  REQUIRE(r2.ok());
  CHECK(kube::Generation(*r2) == 2);
  // Same content again: nothing is written.
  auto r3 = f.store->Update(f.Widgets(), "default", "w1", *r2);
  REQUIRE(r3.ok());
  CHECK(kube::ResourceVersion(*r3) == kube::ResourceVersion(*r2));
  // Status changes through the status subresource do not bump generation.
  Json st = *r3;
  st["status"] = {{"phase", "Running"}};
  auto r4 = f.store->Update(f.Widgets(), "default", "w1", st, "status");
  REQUIRE(r4.ok());
  CHECK(kube::Generation(*r4) == 2);
  CHECK(kube::StringAt(*r4, "status.phase") == "Running");
}

TEST_CASE("nodes keep the status they are created with; pods start Pending") {
  StoreFixture f;
  Json node = {{"metadata", {{"name", "edge-1"}}},
               {"status", {{"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
  auto n = f.store->Create(f.Type("/nodes"), "", node);
  REQUIRE(n.ok());
  CHECK(kube::FindPath(*n, "status.conditions") != nullptr);
  CHECK(kube::Namespace(*n).empty());
  Json pod = {{"metadata", {{"name", "p"}}},
              {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"},
                                         {"ports", {{{"containerPort", 80}}}}}}}}},
              {"status", {{"phase", "Running"}}}};
  auto p = f.store->Create(f.Pods(), "default", pod);
  REQUIRE(p.ok());
  CHECK(kube::StringAt(*p, "status.phase") == "Pending");
  // Upstream's defaults for what controllers compare.
  CHECK(kube::StringAt(*p, "spec.restartPolicy") == "Always");
  const Json& c = (*p)["spec"]["containers"][0];
  CHECK(c["imagePullPolicy"] == "Always");
  CHECK(c["ports"][0]["protocol"] == "TCP");
  // An update that drops a defaulted field gets it back, so re-applying is stable.
  Json again = *p;
  again["spec"].erase("restartPolicy");
  auto u = f.store->Update(f.Pods(), "default", "p", again);
  REQUIRE(u.ok());
  CHECK(kube::ResourceVersion(*u) == kube::ResourceVersion(*p));
}

TEST_CASE("status subresource ignores spec; main resource ignores status") {
  StoreFixture f;
  f.InstallWidgets();
  Json in = Widget("w1");
  in["status"] = {{"phase", "Bogus"}};
  auto w = f.store->Create(f.Widgets(), "default", in);
  REQUIRE(w.ok());
  CHECK(kube::FindPath(*w, "status") == nullptr);  // dropped on create
  Json st = *w;
  st["status"] = {{"phase", "Running"}};
  st["spec"]["format"] = "txt";  // ignored by the status subresource
  auto s = f.store->Update(f.Widgets(), "default", "w1", st, "status");
  REQUIRE(s.ok());
  CHECK(kube::StringAt(*s, "status.phase") == "Running");
  CHECK(kube::StringAt(*s, "spec.format") == "csv");
  Json main = *s;
  main["status"]["phase"] = "Failed";  // ignored by the main resource
  main["spec"]["format"] = "json";
  auto m = f.store->Update(f.Widgets(), "default", "w1", main);
  REQUIRE(m.ok());
  CHECK(kube::StringAt(*m, "status.phase") == "Running");
  CHECK(kube::StringAt(*m, "spec.format") == "json");
}

TEST_CASE("patch applies to the current object; a resourceVersion in it is a precondition") {
  StoreFixture f;
  auto a = f.store->Create(f.ConfigMaps(), "default", ConfigMap("a", {{"k", "1"}}));
  REQUIRE(a.ok());
  auto p = f.store->Patch(f.ConfigMaps(), "default", "a", [](const Json& cur) -> absl::StatusOr<Json> {
    Json next = cur;
    next["data"]["k"] = "2";
    next["metadata"].erase("resourceVersion");
    return next;
  });
  REQUIRE(p.ok());
  CHECK(kube::StringAt(*p, "data.k") == "2");
  std::string old_rv = kube::ResourceVersion(*a);
  auto stale = f.store->Patch(f.ConfigMaps(), "default", "a", [&](const Json& cur) -> absl::StatusOr<Json> {
    Json next = cur;
    next["data"]["k"] = "3";
    next["metadata"]["resourceVersion"] = old_rv;
    return next;
  });
  CHECK(kube::IsConflict(stale.status()));
  auto rename = f.store->Patch(f.ConfigMaps(), "default", "a", [](const Json& cur) -> absl::StatusOr<Json> {
    Json next = cur;
    next["metadata"]["name"] = "b";
    return next;
  });
  CHECK(kube::IsInvalid(rename.status()));
}

TEST_CASE("finalizers: delete marks, removing the last finalizer deletes") {
  StoreFixture f;
  Json cm = ConfigMap("a");
  cm["metadata"]["finalizers"] = {"test/one", "test/two"};
  auto a = f.store->Create(f.ConfigMaps(), "default", cm);
  REQUIRE(a.ok());
  auto d = f.store->Delete(f.ConfigMaps(), "default", "a");
  REQUIRE(d.ok());
  CHECK(d->pending);
  CHECK(kube::IsBeingDeleted(d->object));
  CHECK(kube::Generation(d->object) == 2);
  // Deleting again is harmless.
  CHECK(f.store->Delete(f.ConfigMaps(), "default", "a").ok());
  Json cur = *f.store->Get(f.ConfigMaps(), "default", "a");
  // No new finalizers once deletion started.
  Json add = cur;
  add["metadata"]["finalizers"] = {"test/one", "test/two", "test/three"};
  CHECK(kube::IsInvalid(f.store->Update(f.ConfigMaps(), "default", "a", add).status()));
  cur["metadata"]["finalizers"] = {"test/two"};
  auto u = f.store->Update(f.ConfigMaps(), "default", "a", cur);
  REQUIRE(u.ok());
  CHECK(f.store->Get(f.ConfigMaps(), "default", "a").ok());
  Json last = *u;
  last["metadata"].erase("finalizers");
  REQUIRE(f.store->Update(f.ConfigMaps(), "default", "a", last).ok());
  CHECK(absl::IsNotFound(f.store->Get(f.ConfigMaps(), "default", "a").status()));
}

TEST_CASE("delete preconditions") {
  StoreFixture f;
  auto a = f.store->Create(f.ConfigMaps(), "default", ConfigMap("a"));
  REQUIRE(a.ok());
  DeleteRequest wrong_uid;
  wrong_uid.precondition_uid = "nope";
  CHECK(kube::IsConflict(f.store->Delete(f.ConfigMaps(), "default", "a", wrong_uid).status()));
  DeleteRequest wrong_rv;
  wrong_rv.precondition_resource_version = "1";
  CHECK(kube::IsConflict(f.store->Delete(f.ConfigMaps(), "default", "a", wrong_rv).status()));
  DeleteRequest right;
  right.precondition_uid = kube::Uid(*a);
  right.precondition_resource_version = kube::ResourceVersion(*a);
  auto d = f.store->Delete(f.ConfigMaps(), "default", "a", right);
  REQUIRE(d.ok());
  CHECK_FALSE(d->pending);
  CHECK(absl::IsNotFound(f.store->Delete(f.ConfigMaps(), "default", "a").status()));
  DeleteRequest bogus;
  bogus.propagation_policy = "Sometimes";
  CHECK(f.store->Create(f.ConfigMaps(), "default", ConfigMap("b")).ok());
  CHECK(kube::IsInvalid(f.store->Delete(f.ConfigMaps(), "default", "b", bogus).status()));
}

TEST_CASE("garbage collection: background cascade and shared owners") {
  StoreFixture f;
  auto owner = f.store->Create(f.ConfigMaps(), "default", ConfigMap("owner"));
  auto other = f.store->Create(f.ConfigMaps(), "default", ConfigMap("other"));
  REQUIRE(owner.ok());
  REQUIRE(other.ok());
  REQUIRE(f.store->Create(f.ConfigMaps(), "default", Owned(ConfigMap("child"), *owner)).ok());
  REQUIRE(f.store->Create(f.ConfigMaps(), "default", Owned(ConfigMap("grandchild"),
                                                           *f.store->Get(f.ConfigMaps(), "default", "child"))).ok());
  Json shared = Owned(ConfigMap("shared"), *owner);
  shared["metadata"]["ownerReferences"].push_back(
      {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"name", "other"}, {"uid", kube::Uid(*other)}});
  REQUIRE(f.store->Create(f.ConfigMaps(), "default", shared).ok());
  REQUIRE(f.store->Delete(f.ConfigMaps(), "default", "owner").ok());
  CHECK(absl::IsNotFound(f.store->Get(f.ConfigMaps(), "default", "child").status()));
  CHECK(absl::IsNotFound(f.store->Get(f.ConfigMaps(), "default", "grandchild").status()));
  auto kept = f.store->Get(f.ConfigMaps(), "default", "shared");
  REQUIRE(kept.ok());
  REQUIRE(kube::OwnerReferences(*kept).size() == 1);
  CHECK(kube::OwnerReferences(*kept)[0].name == "other");
}

TEST_CASE("garbage collection: a dependent created after its owners are gone is collected") {
  StoreFixture f;
  auto owner = f.store->Create(f.ConfigMaps(), "default", ConfigMap("owner"));
  REQUIRE(owner.ok());
  const Json stale_owner = *owner;  // what a controller's stale cache still holds
  REQUIRE(f.store->Delete(f.ConfigMaps(), "default", "owner").ok());
  // Created (the client gets it back), then collected at once.
  auto late = f.store->Create(f.ConfigMaps(), "default", Owned(ConfigMap("late"), stale_owner));
  REQUIRE(late.ok());
  CHECK(kube::Name(*late) == "late");
  CHECK(absl::IsNotFound(f.store->Get(f.ConfigMaps(), "default", "late").status()));
  // One live owner among gone ones keeps it.
  auto other = f.store->Create(f.ConfigMaps(), "default", ConfigMap("other"));
  REQUIRE(other.ok());
  Json shared = Owned(ConfigMap("shared"), stale_owner);
  shared["metadata"]["ownerReferences"].push_back(
      {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"name", "other"}, {"uid", kube::Uid(*other)}});
  REQUIRE(f.store->Create(f.ConfigMaps(), "default", shared).ok());
  CHECK(f.store->Get(f.ConfigMaps(), "default", "shared").ok());
  // No owner references: kept.
  REQUIRE(f.store->Create(f.ConfigMaps(), "default", ConfigMap("free")).ok());
  CHECK(f.store->Get(f.ConfigMaps(), "default", "free").ok());
}

TEST_CASE("garbage collection: orphan keeps dependents without the reference") {
  StoreFixture f;
  auto owner = f.store->Create(f.ConfigMaps(), "default", ConfigMap("owner"));
  REQUIRE(f.store->Create(f.ConfigMaps(), "default", Owned(ConfigMap("child"), *owner)).ok());
  DeleteRequest orphan;
  orphan.propagation_policy = "Orphan";
  REQUIRE(f.store->Delete(f.ConfigMaps(), "default", "owner", orphan).ok());
  auto child = f.store->Get(f.ConfigMaps(), "default", "child");
  REQUIRE(child.ok());
  CHECK(kube::OwnerReferences(*child).empty());
}

TEST_CASE("garbage collection: foreground waits for blocking dependents") {
  StoreFixture f;
  auto owner = f.store->Create(f.ConfigMaps(), "default", ConfigMap("owner"));
  Json child = Owned(ConfigMap("child"), *owner, /*block=*/true);
  child["metadata"]["finalizers"] = {"test/hold"};
  REQUIRE(f.store->Create(f.ConfigMaps(), "default", child).ok());
  REQUIRE(f.store->Create(f.ConfigMaps(), "default", Owned(ConfigMap("free"), *owner, true)).ok());
  DeleteRequest fg;
  fg.propagation_policy = "Foreground";
  auto d = f.store->Delete(f.ConfigMaps(), "default", "owner", fg);
  REQUIRE(d.ok());
  CHECK(d->pending);
  auto o = f.store->Get(f.ConfigMaps(), "default", "owner");
  REQUIRE(o.ok());
  CHECK(kube::IsBeingDeleted(*o));
  CHECK(kube::FindPath(*o, "metadata.finalizers")->at(0) == "foregroundDeletion");
  CHECK(absl::IsNotFound(f.store->Get(f.ConfigMaps(), "default", "free").status()));
  auto c = f.store->Get(f.ConfigMaps(), "default", "child");
  REQUIRE(c.ok());
  CHECK(kube::IsBeingDeleted(*c));
  // Releasing the dependent's finalizer lets both go.
  Json release = *c;
  release["metadata"].erase("finalizers");
  REQUIRE(f.store->Update(f.ConfigMaps(), "default", "child", release).ok());
  CHECK(absl::IsNotFound(f.store->Get(f.ConfigMaps(), "default", "child").status()));
  CHECK(absl::IsNotFound(f.store->Get(f.ConfigMaps(), "default", "owner").status()));
}

TEST_CASE("namespace deletion: Terminating, contents removed, then gone") {
  StoreFixture f;
  REQUIRE(f.store->Create(f.Namespaces(), "", Json{{"metadata", {{"name", "team"}}}}).ok());
  REQUIRE(f.store->Create(f.ConfigMaps(), "team", ConfigMap("plain")).ok());
  Json held = ConfigMap("held");
  held["metadata"]["finalizers"] = {"test/hold"};
  REQUIRE(f.store->Create(f.ConfigMaps(), "team", held).ok());
  auto d = f.store->Delete(f.Namespaces(), "", "team");
  REQUIRE(d.ok());
  CHECK(d->pending);
  auto ns = f.store->Get(f.Namespaces(), "", "team");
  REQUIRE(ns.ok());
  CHECK(kube::StringAt(*ns, "status.phase") == "Terminating");
  CHECK(absl::IsNotFound(f.store->Get(f.ConfigMaps(), "team", "plain").status()));
  // Labelling the terminating namespace does not finish it early.
  Json labeled = *ns;
  labeled["metadata"]["labels"] = {{"x", "y"}};
  REQUIRE(f.store->Update(f.Namespaces(), "", "team", labeled).ok());
  CHECK(f.store->Get(f.Namespaces(), "", "team").ok());
  auto forbidden = f.store->Create(f.ConfigMaps(), "team", ConfigMap("late"));
  CHECK(kube::IsForbidden(forbidden.status()));
  Json release = *f.store->Get(f.ConfigMaps(), "team", "held");
  CHECK(kube::IsBeingDeleted(release));
  release["metadata"].erase("finalizers");
  REQUIRE(f.store->Update(f.ConfigMaps(), "team", "held", release).ok());
  CHECK(absl::IsNotFound(f.store->Get(f.Namespaces(), "", "team").status()));
  // Default namespaces exist from the start.
  CHECK(f.store->Get(f.Namespaces(), "", "default").ok());
  CHECK(f.store->Get(f.Namespaces(), "", "kube-system").ok());
}

TEST_CASE("list: label and field selectors through the store") {
  StoreFixture f;
  auto pod = [](std::string name, std::string node, std::string tier) {
    return Json{{"metadata", {{"name", name}, {"labels", {{"tier", tier}}}}},
                {"spec", {{"nodeName", node}, {"containers", Json::array()}}}};
  };
  REQUIRE(f.store->Create(f.Pods(), "default", pod("p1", "n1", "web")).ok());
  REQUIRE(f.store->Create(f.Pods(), "default", pod("p2", "n2", "web")).ok());
  REQUIRE(f.store->Create(f.Pods(), "kube-system", pod("p3", "n1", "db")).ok());
  ListRequest r;
  r.label_selector = "tier in (web)";
  auto l = f.store->List(f.Pods(), r);
  REQUIRE(l.ok());
  CHECK(l->items.size() == 2);
  r = {};
  r.field_selector = "spec.nodeName=n1";
  l = f.store->List(f.Pods(), r);
  REQUIRE(l.ok());
  CHECK(l->items.size() == 2);
  r.ns = "default";
  l = f.store->List(f.Pods(), r);
  REQUIRE(l.ok());
  REQUIRE(l->items.size() == 1);
  CHECK(kube::Name(l->items[0]) == "p1");
  r = {};
  r.field_selector = "status.phase=Pending,metadata.name!=p2";
  l = f.store->List(f.Pods(), r);
  REQUIRE(l.ok());
  CHECK(l->items.size() == 2);
  r.field_selector = "spec.bogus=x";
  CHECK(kube::Reason(f.store->List(f.Pods(), r).status()) == "BadRequest");
  r = {};
  r.label_selector = "tier in (";
  CHECK(kube::Reason(f.store->List(f.Pods(), r).status()) == "BadRequest");
}

TEST_CASE("list paging serves a consistent snapshot; an expired token is 410") {
  StoreFixture f(/*history=*/4);
  for (const char* n : {"a", "b", "c", "d", "e"}) {
    REQUIRE(f.store->Create(f.ConfigMaps(), "default", ConfigMap(n, {{"v", "1"}})).ok());
  }
  ListRequest r;
  r.ns = "default";
  r.limit = 2;
  auto p1 = f.store->List(f.ConfigMaps(), r);
  REQUIRE(p1.ok());
  REQUIRE(p1->items.size() == 2);
  REQUIRE_FALSE(p1->continue_token.empty());
  CHECK(p1->remaining_item_count == 3);
  // Changes after the first page are invisible to the rest of this list.
  Json c = *f.store->Get(f.ConfigMaps(), "default", "c");
  c["data"]["v"] = "2";
  REQUIRE(f.store->Update(f.ConfigMaps(), "default", "c", c).ok());
  REQUIRE(f.store->Delete(f.ConfigMaps(), "default", "d").ok());
  r.continue_token = p1->continue_token;
  auto p2 = f.store->List(f.ConfigMaps(), r);
  REQUIRE(p2.ok());
  REQUIRE(p2->items.size() == 2);
  CHECK(kube::Name(p2->items[0]) == "c");
  CHECK(kube::StringAt(p2->items[0], "data.v") == "1");
  CHECK(kube::Name(p2->items[1]) == "d");
  CHECK(p2->resource_version == p1->resource_version);
  // Enough writes push the snapshot out of history.
  for (int i = 0; i < 5; ++i) {
    REQUIRE(f.store->Create(f.ConfigMaps(), "default", ConfigMap("x" + std::to_string(i))).ok());
  }
  r.continue_token = p2->continue_token;
  auto expired = f.store->List(f.ConfigMaps(), r);
  CHECK(kube::IsGone(expired.status()));
  CHECK(kube::HttpCodeFor(expired.status()) == 410);
  r.continue_token = "garbage!";
  CHECK(kube::Reason(f.store->List(f.ConfigMaps(), r).status()) == "BadRequest");
}

TEST_CASE("CRD: registered at once; schema validates, defaults and prunes") {
  StoreFixture f;
  CHECK(f.registry.Find("test.nereid.io", "v1alpha1", "widgets") == nullptr);
  f.InstallWidgets();
  ResourceTypePtr t = f.registry.Find("test.nereid.io", "v1alpha1", "widgets");
  REQUIRE(t != nullptr);
  CHECK(t->has_status);
  CHECK(t->short_names == std::vector<std::string>{"wdg"});
  CHECK(t->columns.size() == 5);
  auto crd = f.store->Get(f.Type("apiextensions.k8s.io/customresourcedefinitions"), "", "widgets.test.nereid.io");
  REQUIRE(crd.ok());
  CHECK(kube::FindPath(*crd, "status.conditions") != nullptr);

  Json w = Widget("w1");
  w["spec"]["unknown"] = "pruned";
  w["spec"]["extra"] = {{"free", {{"form", 1}}}};
  w["spec"]["port"] = "http";
  std::vector<std::string> warnings;
  WriteOptions warn;
  warn.warnings = &warnings;
  auto created = f.store->Create(*t, "default", w, warn);
  REQUIRE(created.ok());
  CHECK(kube::FindPath(*created, "spec.unknown") == nullptr);
  CHECK(kube::FindPath(*created, "spec.extra.free.form") != nullptr);
  CHECK(kube::FindPath(*created, "spec.replicas")->get<int>() == 1);  // default
  CHECK(warnings == std::vector<std::string>{"unknown field \"spec.unknown\""});

  WriteOptions strict;
  strict.field_validation = "Strict";
  Json s = Widget("w2");
  s["spec"]["unknown"] = 1;
  auto refused = f.store->Create(*t, "default", s, strict);
  CHECK(kube::Reason(refused.status()) == "BadRequest");
  CHECK(std::string(refused.status().message()).find("spec.unknown") != std::string::npos);

  Json bad = Widget("w3", "xml");
  bad["spec"]["replicas"] = 42;
  bad["spec"]["owner"] = "Bob";
  bad["spec"]["tags"] = {"a", "b", "c"};
  bad["spec"]["port"] = 1.5;
  auto invalid = f.store->Create(*t, "default", bad);
  REQUIRE(kube::IsInvalid(invalid.status()));
  CHECK(kube::HttpCodeFor(invalid.status()) == 422);
  std::set<std::string> fields;
  for (const auto& c : kube::Causes(invalid.status())) fields.insert(c.field);
  CHECK(fields == std::set<std::string>{"spec.format", "spec.replicas", "spec.owner", "spec.tags", "spec.port"});
  CHECK(std::string(invalid.status().message()).find("Widget.test.nereid.io \"w3\" is invalid") == 0);

  Json missing = Widget("w4");
  missing["spec"].erase("format");
  auto req = f.store->Create(*t, "default", missing);
  REQUIRE(kube::IsInvalid(req.status()));
  CHECK(kube::Causes(req.status()).at(0).field == "spec.format");
  CHECK(kube::Causes(req.status()).at(0).reason == "FieldValueRequired");

  // Deleting the CRD removes its objects and stops serving the resource.
  REQUIRE(f.store->Delete(f.Type("apiextensions.k8s.io/customresourcedefinitions"), "", "widgets.test.nereid.io").ok());
  CHECK(f.registry.Find("test.nereid.io", "v1alpha1", "widgets") == nullptr);
  CHECK(absl::IsNotFound(f.store->Get(*t, "default", "w1").status()));
}

TEST_CASE("an invalid CRD is refused with its fields named") {
  StoreFixture f;
  Json crd = testing::WidgetCrd();
  crd["metadata"]["name"] = "wrong.name";
  crd["spec"].erase("scope");
  auto r = f.store->Create(f.Type("apiextensions.k8s.io/customresourcedefinitions"), "", crd);
  REQUIRE(kube::IsInvalid(r.status()));
  CHECK(kube::Causes(r.status()).at(0).field == "spec.scope");
}

TEST_CASE("persistence: state and the version counter survive a restart") {
  std::string path = std::filesystem::temp_directory_path() /
                     ("devapi_store_test_" + std::to_string(::getpid()) + ".db");
  std::filesystem::remove(path);
  int64_t before = 0;
  {
    auto p = SqlitePersistence::Open(path);
    REQUIRE(p.ok());
    StoreFixture f(1000, p->get());
    REQUIRE(f.status.ok());
    f.InstallWidgets();
    REQUIRE(f.store->Create(f.Widgets(), "default", Widget("w1")).ok());
    REQUIRE(f.store->Create(f.ConfigMaps(), "default", ConfigMap("gone")).ok());
    REQUIRE(f.store->Delete(f.ConfigMaps(), "default", "gone").ok());
    before = f.store->CurrentVersion();
  }
  {
    auto p = SqlitePersistence::Open(path);
    REQUIRE(p.ok());
    StoreFixture f(1000, p->get());
    REQUIRE(f.status.ok());
    CHECK(f.store->CurrentVersion() >= before);  // the delete's version is not reused
    REQUIRE(f.registry.Find("test.nereid.io", "v1alpha1", "widgets") != nullptr);
    auto w = f.store->Get(f.Widgets(), "default", "w1");
    REQUIRE(w.ok());
    CHECK(absl::IsNotFound(f.store->Get(f.ConfigMaps(), "default", "gone").status()));
    auto next = f.store->Create(f.ConfigMaps(), "default", ConfigMap("new"));
    REQUIRE(next.ok());
    CHECK(Rv(*next) > before);
    // History starts empty: resuming a watch from before the restart is 410.
    ListRequest old;
    old.resource_version = std::to_string(before - 1);
    CHECK(kube::IsGone(f.store->Watch(f.ConfigMaps(), old, "v1").status()));
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace nereid::devapi

namespace nereid::devapi {
namespace {

Json DeploymentWith(const Json& selector_labels, const Json& template_labels) {
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata", {{"name", "web"}}},
          {"spec",
           {{"selector", {{"matchLabels", selector_labels}}},
            {"template",
             {{"metadata", {{"labels", template_labels}}},
              {"spec", {{"containers", Json::array({{{"name", "c"}, {"image", "i:1"}}})}}}}}}}};
}

TEST_CASE("deployments: the selector is required, selects the template, and is immutable") {
  testing::StoreFixture f;
  const ResourceType& deployments = f.Type("apps/deployments");
  const Json labels = {{"app.sedna.io", "ji-Cloud-svc"}};

  Json no_selector = DeploymentWith(labels, labels);
  no_selector["spec"].erase("selector");
  auto refused = f.store->Create(deployments, "default", no_selector);
  REQUIRE(kube::IsInvalid(refused.status()));
  CHECK(kube::Causes(refused.status()).at(0).field == "spec.selector");

  auto mismatch = f.store->Create(deployments, "default",
                                  DeploymentWith(labels, {{"app.sedna.io", "ji-cloud-svc"}}));
  REQUIRE(kube::IsInvalid(mismatch.status()));
  CHECK(kube::Causes(mismatch.status()).at(0).field == "spec.template.metadata.labels");

  auto created = f.store->Create(deployments, "default", DeploymentWith(labels, labels));
  REQUIRE(created.ok());
  // The template may change (its labels still selected); the selector may not.
  Json relabelled = *created;
  relabelled["spec"]["template"]["metadata"]["labels"]["extra"] = "x";
  auto updated = f.store->Update(deployments, "default", "web", relabelled);
  REQUIRE(updated.ok());
  Json reselected = *updated;
  const Json lower = {{"app.sedna.io", "ji-cloud-svc"}};
  reselected["spec"]["selector"]["matchLabels"] = lower;
  reselected["spec"]["template"]["metadata"]["labels"] = lower;
  auto immutable = f.store->Update(deployments, "default", "web", reselected);
  REQUIRE(kube::IsInvalid(immutable.status()));
  CHECK(kube::Causes(immutable.status()).at(0).field == "spec.selector");
  CHECK(absl::StrContains(immutable.status().message(), "field is immutable"));
}

}  // namespace
}  // namespace nereid::devapi
