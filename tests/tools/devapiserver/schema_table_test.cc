#include <catch2/catch.hpp>

#include "tests/tools/devapiserver/test_util.h"
#include "tools/devapiserver/jsonpath.h"
#include "tools/devapiserver/schema.h"
#include "tools/devapiserver/table.h"

namespace nereid::devapi {
namespace {

Json J(const char* text) { return Json::parse(text); }

TEST_CASE("schema: nested defaults, nullable, additionalProperties, embedded resources") {
  Json schema = J(R"({"type":"object","properties":{"spec":{"type":"object","properties":{
      "a":{"type":"object","default":{},"properties":{"b":{"type":"string","default":"x"}}},
      "n":{"type":"string","nullable":true},
      "m":{"type":"object","additionalProperties":{"type":"integer"}},
      "t":{"type":"object","x-kubernetes-embedded-resource":true,
           "properties":{"spec":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}},
      "min":{"type":"string","minLength":2},
      "ex":{"type":"number","minimum":0,"exclusiveMinimum":true},
      "few":{"type":"array","minItems":1}}}}})");
  Json obj = J(R"({"apiVersion":"v","kind":"K","metadata":{"name":"n"},
      "spec":{"n":null,"m":{"x":1,"y":"bad"},
              "t":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"any":1},"junk":1},
              "min":"a","ex":0,"few":[]}})");
  SchemaOutcome out = ApplySchema(schema, &obj);
  CHECK(obj["spec"]["a"] == J(R"({"b":"x"})"));
  CHECK(obj["spec"]["n"].is_null());
  CHECK(obj["spec"]["t"]["metadata"]["name"] == "p");
  CHECK(obj["spec"]["t"]["spec"]["any"] == 1);
  CHECK_FALSE(obj["spec"]["t"].contains("junk"));
  CHECK(obj["metadata"]["name"] == "n");
  std::vector<std::string> fields;
  for (const auto& c : out.causes) fields.push_back(c.field);
  CHECK(fields == std::vector<std::string>{"spec.ex", "spec.few", "spec.m.y", "spec.min"});
  CHECK(out.unknown_fields == std::vector<std::string>{"spec.t.junk"});
}

TEST_CASE("schema: type errors name the field and both types") {
  Json schema = J(R"({"type":"object","properties":{"spec":{"type":"object","properties":{
      "r":{"type":"integer"},"s":{"type":"string"}}}}})");
  Json obj = J(R"({"spec":{"r":"three","s":null}})");
  SchemaOutcome out = ApplySchema(schema, &obj);
  REQUIRE(out.causes.size() == 2);
  CHECK(out.causes[0].field == "spec.r");
  CHECK(out.causes[0].message.find("must be of type integer") != std::string::npos);
  CHECK(out.causes[1].field == "spec.s");
}

TEST_CASE("jsonpath subset") {
  Json obj = J(R"({"status":{"conditions":[{"type":"A","status":"False"},{"type":"Ready","status":"True"}]},
                  "spec":{"l":[{"n":1},{"n":2}],"k.x":"dotted"}})");
  auto ready = EvalJsonPath(obj, R"(.status.conditions[?(@.type=="Ready")].status)");
  REQUIRE(ready.ok());
  REQUIRE(ready->size() == 1);
  CHECK(*ready->at(0) == "True");
  auto all = EvalJsonPath(obj, "{.spec.l[*].n}");
  REQUIRE(all.ok());
  CHECK(all->size() == 2);
  auto idx = EvalJsonPath(obj, ".spec.l[-1].n");
  REQUIRE(idx.ok());
  CHECK(*idx->at(0) == 2);
  auto quoted = EvalJsonPath(obj, ".spec['k.x']");
  REQUIRE(quoted.ok());
  CHECK(*quoted->at(0) == "dotted");
  auto none = EvalJsonPath(obj, ".nope.deeper");
  REQUIRE(none.ok());
  CHECK(none->empty());
  CHECK_FALSE(EvalJsonPath(obj, ".spec.l[").ok());
  CHECK_FALSE(EvalJsonPath(obj, ".spec.l[?(bogus)]").ok());
}

TEST_CASE("HumanDuration as kubectl prints ages") {
  CHECK(HumanDuration(absl::Seconds(45)) == "45s");
  CHECK(HumanDuration(absl::Seconds(119)) == "119s");
  CHECK(HumanDuration(absl::Seconds(303)) == "5m3s");
  CHECK(HumanDuration(absl::Minutes(90)) == "90m");
  CHECK(HumanDuration(absl::Hours(5)) == "5h");
  CHECK(HumanDuration(absl::Hours(52)) == "2d4h");
  CHECK(HumanDuration(absl::Hours(24 * 400)) == "400d");
  CHECK(HumanDuration(-absl::Seconds(5)) == "<invalid>");
}

TEST_CASE("table for a CRD: printer columns, wide-only priority, filters, dates") {
  testing::StoreFixture f;
  f.InstallWidgets();
  Json w = testing::Widget("w1");
  w["spec"]["replicas"] = 3;
  w["spec"]["owner"] = "alice";
  w["metadata"]["creationTimestamp"] = kube::FormatTimestamp(f.clock.Now() - absl::Minutes(5));
  w["status"] = {{"conditions", {{{"type", "Ready"}, {"status", "True"}}}}};
  TableOptions o;
  o.now = f.clock.Now();
  Json t = BuildTable(f.Widgets(), {w}, o);
  CHECK(t["kind"] == "Table");
  CHECK(t["apiVersion"] == "meta.k8s.io/v1");
  std::vector<std::string> names;
  for (const Json& c : t["columnDefinitions"]) names.push_back(c["name"]);
  CHECK(names == std::vector<std::string>{"Name", "Format", "Replicas", "Ready", "Owner", "Age"});
  CHECK(t["columnDefinitions"][4]["priority"] == 1);
  CHECK(t["rows"][0]["cells"] == J(R"(["w1","csv",3,"True","alice","5m"])"));
  CHECK(t["rows"][0]["object"]["kind"] == "PartialObjectMetadata");
  o.include_column_definitions = false;
  o.include_object = "None";
  Json t2 = BuildTable(f.Widgets(), {w}, o);
  CHECK(t2["columnDefinitions"].empty());
  CHECK_FALSE(t2["rows"][0].contains("object"));
}

TEST_CASE("table for built-ins: pods show ready/status/restarts and wide columns") {
  testing::StoreFixture f;
  Json pod = J(R"({"metadata":{"name":"p","creationTimestamp":"2023-11-14T22:13:20Z"},
      "spec":{"nodeName":"n1","containers":[{"name":"a"},{"name":"b"}]},
      "status":{"phase":"Running","podIP":"10.0.0.5",
                "containerStatuses":[{"ready":true,"restartCount":2},{"ready":false,"restartCount":1}]}})");
  TableOptions o;
  o.now = f.clock.Now();
  Json t = BuildTable(f.Pods(), {pod}, o);
  const Json& cells = t["rows"][0]["cells"];
  CHECK(cells[0] == "p");
  CHECK(cells[1] == "1/2");
  CHECK(cells[2] == "Running");
  CHECK(cells[3] == 3);
  CHECK(cells[5] == "10.0.0.5");
  CHECK(cells[6] == "n1");
  CHECK(t["columnDefinitions"][5]["priority"] == 1);
}

}  // namespace
}  // namespace nereid::devapi
