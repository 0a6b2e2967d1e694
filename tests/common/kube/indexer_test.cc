#include "common/kube/indexer.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <catch2/catch.hpp>
#include <stdexcept>
#include <thread>

#include "common/kube/lister.h"
#include "common/kube/resource.h"

namespace nereid::kube {
namespace {

ObjectPtr Pod(const std::string& ns, const std::string& name, const std::string& node = "",
              const std::string& owner_uid = "", std::map<std::string, std::string> labels = {}) {
  Json pod = {{"metadata", {{"name", name}, {"namespace", ns}}}, {"spec", Json::object()}};
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  if (!owner_uid.empty()) {
    pod["metadata"]["ownerReferences"] = Json::array(
        {{{"apiVersion", "sedna.io/v1alpha1"},
          {"kind", "FederatedLearningJob"},
          {"name", "job"},
          {"uid", owner_uid},
          {"controller", true}},
         {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"name", "x"}, {"uid", "not-controller"}}});
  }
  if (!labels.empty()) pod["metadata"]["labels"] = labels;
  return std::make_shared<const Json>(std::move(pod));
}

std::vector<std::string> Keys(const std::vector<ObjectPtr>& objects) {
  std::vector<std::string> keys;
  for (const ObjectPtr& object : objects) keys.push_back(Key(*object));
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::vector<std::string> ByIndexKeys(const Indexer& indexer, const std::string& index,
                                     const std::string& value) {
  auto objects = indexer.ByIndex(index, value);
  REQUIRE(objects.ok());
  return Keys(*objects);
}

using Strings = std::vector<std::string>;

TEST_CASE("indexer stores immutable shared objects by key", "[indexer]") {
  Indexer indexer(DefaultIndexers(), GENERATE(CacheEncoding::kDecoded, CacheEncoding::kCompact));
  ObjectPtr a = Pod("ns1", "a");
  CHECK(indexer.Upsert(a) == nullptr);
  CHECK(indexer.Get("ns1/a") == a);  // The same shared object, not a copy.
  ObjectPtr a2 = Pod("ns1", "a", "n1");
  CHECK(indexer.Upsert(a2) == a);
  CHECK(indexer.Get("ns1/a") == a2);
  CHECK(indexer.Size() == 1);
  CHECK(indexer.Remove("ns1/a") == a2);
  CHECK(indexer.Remove("ns1/a") == nullptr);
  CHECK(indexer.Get("ns1/a") == nullptr);
  CHECK(indexer.List().empty());
}

TEST_CASE("indexer maintains namespace, controller-uid and custom indexes", "[indexer]") {
  Indexer indexer(DefaultIndexers(), GENERATE(CacheEncoding::kDecoded, CacheEncoding::kCompact));
  REQUIRE(indexer.AddIndexers({{"node", FieldIndexFunc("spec.nodeName")}}).ok());
  indexer.Upsert(Pod("ns1", "a", "n1", "uid-1"));
  indexer.Upsert(Pod("ns1", "b", "n2", "uid-1"));
  indexer.Upsert(Pod("ns2", "c", "n1"));
  indexer.Upsert(std::make_shared<const Json>(Json{{"metadata", {{"name", "cluster-wide"}}}}));

  CHECK(ByIndexKeys(indexer, kNamespaceIndex, "ns1") == Strings{"ns1/a", "ns1/b"});
  CHECK(ByIndexKeys(indexer, kNamespaceIndex, "ns2") == Strings{"ns2/c"});
  CHECK(ByIndexKeys(indexer, kControllerUidIndex, "uid-1") == Strings{"ns1/a", "ns1/b"});
  CHECK(ByIndexKeys(indexer, kControllerUidIndex, "not-controller").empty());
  CHECK(ByIndexKeys(indexer, "node", "n1") == Strings{"ns1/a", "ns2/c"});

  // An update moves the object between index values.
  indexer.Upsert(Pod("ns1", "a", "n2"));
  CHECK(ByIndexKeys(indexer, "node", "n1") == Strings{"ns2/c"});
  CHECK(ByIndexKeys(indexer, "node", "n2") == Strings{"ns1/a", "ns1/b"});
  CHECK(ByIndexKeys(indexer, kControllerUidIndex, "uid-1") == Strings{"ns1/b"});

  indexer.Remove("ns1/b");
  CHECK(ByIndexKeys(indexer, "node", "n2") == Strings{"ns1/a"});
  auto values = indexer.IndexValues(kControllerUidIndex);
  REQUIRE(values.ok());
  CHECK(values->empty());  // Emptied values do not linger.

  CHECK(absl::IsInvalidArgument(indexer.ByIndex("nope", "x").status()));
  CHECK(absl::IsAlreadyExists(indexer.AddIndexers({{"node", FieldIndexFunc("x")}})));
}

TEST_CASE("indexers added later index the existing objects; a throwing one indexes nothing",
          "[indexer]") {
  Indexer indexer(DefaultIndexers(), GENERATE(CacheEncoding::kDecoded, CacheEncoding::kCompact));
  indexer.Upsert(Pod("ns", "a", "n1"));
  REQUIRE(indexer
              .AddIndexers({{"node", FieldIndexFunc("spec.nodeName")},
                            {"bad",
                             [](const Json&) -> std::vector<std::string> {
                               throw std::runtime_error("boom");
                             }}})
              .ok());
  CHECK(ByIndexKeys(indexer, "node", "n1") == Strings{"ns/a"});
  indexer.Upsert(Pod("ns", "b", "n1"));
  CHECK(ByIndexKeys(indexer, "node", "n1") == Strings{"ns/a", "ns/b"});
  CHECK(indexer.IndexValues("bad")->empty());
}

TEST_CASE("indexer Replace reports adds, updates and deletes and reindexes", "[indexer]") {
  Indexer indexer(DefaultIndexers(), GENERATE(CacheEncoding::kDecoded, CacheEncoding::kCompact));
  REQUIRE(indexer.AddIndexers({{"node", FieldIndexFunc("spec.nodeName")}}).ok());
  ObjectPtr a = Pod("ns", "a", "n1");
  ObjectPtr b = Pod("ns", "b", "n1");
  indexer.Upsert(a);
  indexer.Upsert(b);

  ObjectPtr a2 = Pod("ns", "a", "n2");
  ObjectPtr c = Pod("ns", "c", "n3");
  Indexer::ReplaceResult result = indexer.Replace({a2, c});
  CHECK(Keys(result.added) == Strings{"ns/c"});
  REQUIRE(result.updated.size() == 1);
  CHECK(result.updated[0].first == a);
  CHECK(result.updated[0].second == a2);
  REQUIRE(result.deleted.size() == 1);
  CHECK(result.deleted[0] == b);  // The last known state.
  CHECK(indexer.ListKeys() == Strings{"ns/a", "ns/c"});
  CHECK(ByIndexKeys(indexer, "node", "n1").empty());
  CHECK(ByIndexKeys(indexer, "node", "n2") == Strings{"ns/a"});
  CHECK(ByIndexKeys(indexer, kNamespaceIndex, "ns") == Strings{"ns/a", "ns/c"});
  CHECK(indexer.Contains("ns/a"));
  CHECK_FALSE(indexer.Contains("ns/b"));

  // The indexes are rebuilt from the new list: an empty relist leaves no value behind.
  result = indexer.Replace({});
  CHECK(Keys(result.deleted) == Strings{"ns/a", "ns/c"});
  CHECK(ByIndexKeys(indexer, "node", "n2").empty());
  CHECK(ByIndexKeys(indexer, kNamespaceIndex, "ns").empty());
  CHECK(*indexer.IndexValues("node") == Strings{});
}

TEST_CASE("lister reads the cache: Get, List by selector and namespace, ByIndex", "[lister]") {
  Indexer indexer(DefaultIndexers(), GENERATE(CacheEncoding::kDecoded, CacheEncoding::kCompact));
  ObjectPtr a = Pod("ns1", "a", "", "", {{"app", "web"}});
  indexer.Upsert(a);
  indexer.Upsert(Pod("ns1", "b", "", "", {{"app", "db"}}));
  indexer.Upsert(Pod("ns2", "c", "", "", {{"app", "web"}}));
  Lister lister(&indexer, resources::Pods());

  auto got = lister.Get("ns1", "a");
  REQUIRE(got.ok());
  CHECK(*got == a);
  CHECK(absl::IsNotFound(lister.Get("ns1", "zz").status()));
  CHECK(absl::IsNotFound(lister.GetByKey("ns9/a").status()));
  CHECK(lister.List().size() == 3);
  CHECK(lister.ListKeys() == Strings{"ns1/a", "ns1/b", "ns2/c"});
  auto web = LabelSelector::Parse("app=web");
  REQUIRE(web.ok());
  CHECK(Keys(lister.List(*web)) == Strings{"ns1/a", "ns2/c"});
  CHECK(Keys(lister.List("ns1", *web)) == Strings{"ns1/a"});
  CHECK(Keys(lister.List("ns1")) == Strings{"ns1/a", "ns1/b"});
  auto by_ns = lister.ByIndex(kNamespaceIndex, "ns2");
  REQUIRE(by_ns.ok());
  CHECK(Keys(*by_ns) == Strings{"ns2/c"});
}

TEST_CASE("a packed object decodes to the object it was made from, in fewer bytes than its JSON",
          "[packed]") {
  const Json original = {
      {"metadata", {{"name", "ds"}, {"namespace", "ns"}, {"labels", {{"app", "web"}}}}},
      {"spec", {{"url", "/data/\u00e9t\u00e9.txt"}, {"format", "txt"}, {"empty", Json::object()}}},
      {"status",
       {{"numberOfSamples", 12345},
        {"negative", -7},
        {"huge", std::numeric_limits<uint64_t>::max()},
        {"ratio", 0.1},
        {"tiny", 1e-300},
        {"flags", {true, false, nullptr}},
        {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
  ObjectPtr decoded;
  size_t packed_size = 0;
  {
    PackedObject packed(std::make_shared<const Json>(original));
    packed_size = packed.packed_size();
    decoded = packed.Unpack();  // The original is gone: a fresh decode.
  }
  CHECK(*decoded == original);
  CHECK(DumpCompact(*decoded) == DumpCompact(original));
  CHECK(packed_size < DumpCompact(original).size());
}

TEST_CASE("a packed cache shares an object while it is held and decodes it again once released",
          "[indexer][packed]") {
  Indexer indexer(DefaultIndexers(), CacheEncoding::kCompact);
  const Json content = *Pod("ns", "a", "n1");
  indexer.Upsert(Pod("ns", "a", "n1"));  // Nobody holds the upserted object.

  ObjectPtr first = indexer.Get("ns/a");
  REQUIRE(first != nullptr);
  CHECK(*first == content);
  CHECK(indexer.Get("ns/a") == first);  // Held: the same copy, not a second decode.
  CHECK(indexer.List().front() == first);
  first.reset();
  ObjectPtr again = indexer.Get("ns/a");
  REQUIRE(again != nullptr);
  CHECK(*again == content);
  ObjectPtr other = Pod("ns", "b");
  CHECK(indexer.Upsert(other) == nullptr);
  CHECK(indexer.Get("ns/b") == other);  // The upserted object is shared while its holder keeps it.

  // Readers on several threads at once, none holding the object beforehand: they may decode at
  // the same time.
  again.reset();
  std::vector<std::thread> readers;
  std::atomic<int> seen{0};
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&] {
      for (int i = 0; i < 500; ++i) {
        ObjectPtr got = indexer.Get("ns/a");
        if (got != nullptr && Name(*got) == "a") seen.fetch_add(1);
      }
    });
  }
  for (std::thread& reader : readers) reader.join();
  CHECK(seen.load() == 2000);
}

}  // namespace
}  // namespace nereid::kube
