#include <catch2/catch.hpp>

#include "common/kube/selector.h"

namespace nereid::kube {
namespace {

using Labels = std::map<std::string, std::string>;

bool LabelsMatch(std::string_view selector, const Labels& labels) {
  auto parsed = LabelSelector::Parse(selector);
  REQUIRE(parsed.ok());
  return parsed->Matches(labels);
}

TEST_CASE("label selector operators") {
  const Labels labels = {{"app", "web"}, {"tier", "front"}, {"sedna.io/name", "ji-1"}};
  CHECK(LabelsMatch("", labels));
  CHECK(LabelsMatch("app=web", labels));
  CHECK(LabelsMatch("app==web", labels));
  CHECK_FALSE(LabelsMatch("app=db", labels));
  CHECK(LabelsMatch("app!=db", labels));
  CHECK(LabelsMatch("missing!=x", labels));  // != matches objects without the label.
  CHECK(LabelsMatch("tier in (front, back)", labels));
  CHECK_FALSE(LabelsMatch("tier in (back)", labels));
  CHECK(LabelsMatch("tier notin (back)", labels));
  CHECK(LabelsMatch("missing notin (back)", labels));
  CHECK(LabelsMatch("app", labels));
  CHECK_FALSE(LabelsMatch("!app", labels));
  CHECK(LabelsMatch("!missing", labels));
  CHECK(LabelsMatch("app=web, tier in (front), sedna.io/name=ji-1", labels));
  CHECK_FALSE(LabelsMatch("app=web,tier=back", labels));
  CHECK(LabelsMatch("inside=x", {{"inside", "x"}}));  // "in" prefix is not a keyword here.
}

TEST_CASE("label selector syntax errors are reported") {
  for (std::string_view bad : {"app=web,", "tier in front", "tier in (a", "=x", "a b", "a=(b)"}) {
    INFO(bad);
    CHECK_FALSE(LabelSelector::Parse(bad).ok());
  }
}

TEST_CASE("label selector from metav1.LabelSelector JSON") {
  Json doc = Json::parse(R"({"matchLabels": {"app": "web"},
    "matchExpressions": [{"key": "tier", "operator": "In", "values": ["front"]},
                         {"key": "legacy", "operator": "DoesNotExist"}]})");
  auto selector = LabelSelector::FromJson(doc);
  REQUIRE(selector.ok());
  CHECK(selector->Matches({{"app", "web"}, {"tier", "front"}}));
  CHECK_FALSE(selector->Matches({{"app", "web"}, {"tier", "front"}, {"legacy", "1"}}));
  auto round_trip = LabelSelector::Parse(selector->ToString());
  REQUIRE(round_trip.ok());
  CHECK(round_trip->ToString() == selector->ToString());
  CHECK_FALSE(LabelSelector::FromJson(Json::parse(
                  R"({"matchExpressions": [{"key": "a", "operator": "Near"}]})")).ok());
  // A non-string operator is refused, not thrown (Json::value() threw type_error).
  CHECK(absl::IsInvalidArgument(LabelSelector::FromJson(Json::parse(
      R"({"matchExpressions": [{"key": "a", "operator": 5}]})")).status()));
  CHECK_FALSE(LabelSelector::FromJson(Json::parse(
                  R"({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]})")).ok());
  // Keys and values Parse would refuse are refused here too, so ToString() always reads back
  // (found by fuzz_kube_parsers: "values": ["!"] printed as "tier in (!,b)").
  CHECK(absl::IsInvalidArgument(LabelSelector::FromJson(Json::parse(
      R"({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["!", "b"]}]})"))
                                    .status()));
  CHECK(absl::IsInvalidArgument(
      LabelSelector::FromJson(Json::parse(R"({"matchLabels": {"a b": "web"}})")).status()));
  CHECK(absl::IsInvalidArgument(
      LabelSelector::FromJson(Json::parse(R"({"matchLabels": {"app": "w,eb"}})")).status()));
  CHECK(LabelSelector::FromJson(Json::parse(R"({"matchLabels": {"tier": ""}})")).ok());
}

TEST_CASE("an empty entry in a value set is the empty value, as in Kubernetes") {
  // Found by fuzz_kube_parsers in CI: "values": ["", "a"] printed as "k in (,a)", which read back
  // as "k in (a)" because Parse dropped empty entries.
  auto from_json = LabelSelector::FromJson(
      Json::parse(R"({"matchExpressions": [{"key": "k", "operator": "In", "values": ["", "a"]}]})"));
  REQUIRE(from_json.ok());
  CHECK(from_json->Matches({{"k", ""}}));
  auto again = LabelSelector::Parse(from_json->ToString());
  REQUIRE(again.ok());
  CHECK(again->ToString() == from_json->ToString());
  CHECK(again->Matches({{"k", ""}}));
  // Kubernetes' parser (apimachinery labels.Parser.parseValues): "()" is {""}, ",)" adds "".
  CHECK(LabelsMatch("k in ()", {{"k", ""}}));
  CHECK_FALSE(LabelsMatch("k in ()", {{"k", "a"}}));
  CHECK(LabelsMatch("k in (a,)", {{"k", ""}}));
  CHECK(LabelsMatch("k notin (,a)", {{"k", "b"}}));
  CHECK_FALSE(LabelsMatch("k notin (,a)", {{"k", ""}}));
}

TEST_CASE("field selectors") {
  Json pod = Json::parse(R"({"metadata": {"name": "p", "namespace": "ns"},
                             "spec": {"nodeName": "edge-0"}})");
  auto getter = [](const Json& obj, std::string_view field) -> std::optional<std::string> {
    if (field == "spec.nodeName") return StringAt(obj, "spec.nodeName");
    return DefaultFieldGetter(obj, field);
  };
  auto selector = FieldSelector::Parse("metadata.name=p,spec.nodeName!=edge-1");
  REQUIRE(selector.ok());
  CHECK(selector->Matches(pod, getter));
  auto other = FieldSelector::Parse("spec.nodeName==edge-1");
  REQUIRE(other.ok());
  CHECK_FALSE(other->Matches(pod, getter));
  auto unknown = FieldSelector::Parse("spec.color=red");
  REQUIRE(unknown.ok());
  CHECK_FALSE(unknown->Validate(pod, getter).ok());
  CHECK_FALSE(FieldSelector::Parse("metadata.name").ok());
}

}  // namespace
}  // namespace nereid::kube
