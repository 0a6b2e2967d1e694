#include "tools/devapiserver/patch.h"

#include <catch2/catch.hpp>

#include "common/kube/errors.h"

namespace nereid::devapi {
namespace {

Json J(const char* text) { return Json::parse(text); }

TEST_CASE("merge patch follows RFC 7386") {
  auto r = ApplyMergePatch(J(R"({"a":1,"b":{"c":2,"d":3},"l":[1,2]})"),
                           J(R"({"a":null,"b":{"c":5},"l":[3],"n":"x"})"));
  REQUIRE(r.ok());
  CHECK(*r == J(R"({"b":{"c":5,"d":3},"l":[3],"n":"x"})"));
  CHECK(kube::Reason(ApplyMergePatch(J("{}"), J("[1]")).status()) == "BadRequest");
}

TEST_CASE("json patch applies operations; failures are errors, not crashes") {
  auto r = ApplyJsonPatch(J(R"({"spec":{"a":1,"l":[1,2]}})"),
                          J(R"([{"op":"replace","path":"/spec/a","value":2},
                                {"op":"add","path":"/spec/l/-","value":3},
                                {"op":"remove","path":"/spec/l/0"},
                                {"op":"test","path":"/spec/a","value":2}])"));
  REQUIRE(r.ok());
  CHECK(*r == J(R"({"spec":{"a":2,"l":[2,3]}})"));
  auto failed = ApplyJsonPatch(J(R"({"a":1})"), J(R"([{"op":"test","path":"/a","value":9}])"));
  CHECK(kube::IsInvalid(failed.status()));
  auto missing = ApplyJsonPatch(J(R"({"a":1})"), J(R"([{"op":"remove","path":"/nope"}])"));
  CHECK(kube::IsInvalid(missing.status()));
  CHECK(kube::Reason(ApplyJsonPatch(J("{}"), J(R"({"op":"add"})")).status()) == "BadRequest");
  CHECK(kube::Reason(ApplyJsonPatch(J("{}"), J(R"([{"path":"/a"}])")).status()) == "BadRequest");
}

TEST_CASE("strategic merge: containers merge by name, ports by containerPort, env by name") {
  Json live = J(R"({"spec":{"containers":[
      {"name":"web","image":"nginx:1","ports":[{"containerPort":80,"name":"http"}],
       "env":[{"name":"A","value":"1"},{"name":"B","value":"2"}]},
      {"name":"side","image":"busybox"}]}})");
  auto r = ApplyStrategicMergePatch(live, J(R"({"spec":{
      "$setElementOrder/containers":[{"name":"web"},{"name":"side"}],
      "containers":[{"name":"web","image":"nginx:2",
                     "ports":[{"containerPort":443}],
                     "env":[{"name":"B","$patch":"delete"},{"name":"C","value":"3"}]}]}})"));
  REQUIRE(r.ok());
  const Json& web = (*r)["spec"]["containers"][0];
  CHECK(web["image"] == "nginx:2");
  CHECK(web["ports"] == J(R"([{"containerPort":80,"name":"http"},{"containerPort":443}])"));
  CHECK(web["env"] == J(R"([{"name":"A","value":"1"},{"name":"C","value":"3"}])"));
  CHECK((*r)["spec"]["containers"][1]["name"] == "side");
}

TEST_CASE("strategic merge directives: replace, delete, retainKeys, deleteFromPrimitiveList, order") {
  Json live = J(R"({"metadata":{"finalizers":["a","b"],"labels":{"x":"1","y":"2"}},
                    "spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1}},
                            "args":["--a","--b"],
                            "volumes":[{"name":"v1"},{"name":"v2"},{"name":"v3"}],
                            "selector":{"a":"b"}}})");
  auto r = ApplyStrategicMergePatch(live, J(R"({
      "metadata":{"finalizers":["c"],"$deleteFromPrimitiveList/finalizers":["a"],"labels":{"x":null}},
      "spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"},
              "args":["--c"],
              "$setElementOrder/volumes":[{"name":"v3"},{"name":"v1"}],
              "volumes":[{"name":"v2","$patch":"delete"}],
              "selector":{"$patch":"replace","c":"d"}}})"));
  REQUIRE(r.ok());
  CHECK((*r)["metadata"]["finalizers"] == J(R"(["b","c"])"));
  CHECK((*r)["metadata"]["labels"] == J(R"({"y":"2"})"));
  CHECK((*r)["spec"]["strategy"] == J(R"({"type":"Recreate"})"));
  CHECK((*r)["spec"]["args"] == J(R"(["--c"])"));  // atomic list: replaced
  CHECK((*r)["spec"]["volumes"] == J(R"([{"name":"v3"},{"name":"v1"}])"));
  CHECK((*r)["spec"]["selector"] == J(R"({"c":"d"})"));
  auto list_replace = ApplyStrategicMergePatch(live, J(R"({"spec":{"volumes":[{"name":"only"},{"$patch":"replace"}]}})"));
  REQUIRE(list_replace.ok());
  CHECK((*list_replace)["spec"]["volumes"] == J(R"([{"name":"only"}])"));
  auto whole_delete = ApplyStrategicMergePatch(live, J(R"({"spec":{"strategy":{"$patch":"delete"}}})"));
  REQUIRE(whole_delete.ok());
  CHECK_FALSE((*whole_delete)["spec"].contains("strategy"));
}

TEST_CASE("strategic merge: service ports merge by port; bad input is BadRequest") {
  Json svc = J(R"({"spec":{"ports":[{"port":80,"targetPort":8080},{"port":443}]}})");
  auto r = ApplyStrategicMergePatch(svc, J(R"({"spec":{"ports":[{"port":80,"targetPort":9090}]}})"));
  REQUIRE(r.ok());
  CHECK((*r)["spec"]["ports"] == J(R"([{"port":80,"targetPort":9090},{"port":443}])"));
  auto no_key = ApplyStrategicMergePatch(svc, J(R"({"spec":{"ports":[{"targetPort":1}]}})"));
  CHECK(kube::Reason(no_key.status()) == "BadRequest");
  CHECK(kube::Reason(ApplyStrategicMergePatch(svc, J(R"({"spec":{"$patch":"explode"}})")).status()) ==
        "BadRequest");
}

}  // namespace
}  // namespace nereid::devapi
