#include <catch2/catch.hpp>

#include "common/kube/cache_transform.h"
#include "common/kube/object.h"

namespace nereid::kube {
namespace {

const Json kPod = Json::parse(R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {
    "name": "p1", "namespace": "ns1", "uid": "u-1", "resourceVersion": "42", "generation": 3,
    "labels": {"app": "x", "n": 5},
    "annotations": {"a": "b"},
    "creationTimestamp": "2024-05-01T10:00:00Z",
    "ownerReferences": [
      {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "uid": "u-cm"},
      {"apiVersion": "sedna.io/v1alpha1", "kind": "Dataset", "name": "d", "uid": "u-d",
       "controller": true}
    ]
  },
  "spec": {"nodeName": "edge-0"},
  "status": {"phase": "Running"}
})");

TEST_CASE("metadata accessors read the standard fields") {
  CHECK(Name(kPod) == "p1");
  CHECK(Namespace(kPod) == "ns1");
  CHECK(Uid(kPod) == "u-1");
  CHECK(ResourceVersion(kPod) == "42");
  CHECK(Generation(kPod) == 3);
  CHECK(Labels(kPod) == std::map<std::string, std::string>{{"app", "x"}});  // Non-strings skipped.
  CHECK(Label(kPod, "app") == "x");
  CHECK_FALSE(Label(kPod, "missing").has_value());
  CHECK(Annotation(kPod, "a") == "b");
  CHECK(Key(kPod) == "ns1/p1");
  CHECK(CreationTimestamp(kPod) == absl::FromUnixSeconds(1714557600));
  CHECK_FALSE(IsBeingDeleted(kPod));
}

TEST_CASE("cache transforms drop the server's bookkeeping and nothing else") {
  Json object = kPod;
  object["metadata"]["managedFields"] = Json::array({{{"manager", "kubectl"}}});
  object["metadata"]["annotations"][std::string(kLastAppliedAnnotation)] = R"({"kind":"Pod"})";
  Json managed_only = object;
  DropManagedFields(managed_only);
  CHECK_FALSE(managed_only["metadata"].contains("managedFields"));
  CHECK(managed_only["metadata"]["annotations"].contains(std::string(kLastAppliedAnnotation)));
  DropManagedFieldsAndLastApplied(object);
  CHECK(object == kPod);

  // Malformed metadata is left as it is.
  for (Json odd : {Json{{"metadata", "x"}}, Json{{"metadata", {{"annotations", 3}}}},
                   Json::object(), Json{{"metadata", nullptr}}}) {
    const Json before = odd;
    DropManagedFieldsAndLastApplied(odd);
    CHECK(odd == before);
  }
}

TEST_CASE("ControllerOf picks the controlling owner") {
  REQUIRE(OwnerReferences(kPod).size() == 2);
  auto controller = ControllerOf(kPod);
  REQUIRE(controller.has_value());
  CHECK(controller->kind == "Dataset");
  CHECK(controller->uid == "u-d");
  CHECK(OwnerReference::FromJson(controller->ToJson()).controller);
}

TEST_CASE("accessors tolerate malformed objects") {
  for (const Json& bad : {Json(), Json(5), Json::parse(R"({"metadata": "x"})"),
                          Json::parse(R"({"metadata": {"name": 7, "labels": []}})")}) {
    CHECK(Name(bad).empty());
    CHECK(Labels(bad).empty());
    CHECK(OwnerReferences(bad).empty());
    CHECK(Generation(bad) == 0);
  }
}

TEST_CASE("keys round-trip") {
  std::string ns, name;
  SplitKey("a/b", &ns, &name);
  CHECK((ns == "a" && name == "b"));
  SplitKey("node-1", &ns, &name);
  CHECK((ns.empty() && name == "node-1"));
  CHECK(MakeKey("", "n") == "n");
}

TEST_CASE("paths and times") {
  CHECK(StringAt(kPod, "spec.nodeName") == "edge-0");
  CHECK(StringAt(kPod, "status.phase") == "Running");
  CHECK(FindPath(kPod, "spec.missing.deeper") == nullptr);
  absl::Time t = absl::FromUnixSeconds(1714557600);
  CHECK(FormatTimestamp(t) == "2024-05-01T10:00:00Z");
  CHECK(ParseTimestamp(FormatTimestamp(t)) == t);
  CHECK_FALSE(ParseTimestamp("yesterday").has_value());
}

}  // namespace
}  // namespace nereid::kube
