#include "common/api/yaml_json.h"

#include <catch2/catch.hpp>

namespace nereid::api {
namespace {

using kube::Json;

Json One(const std::string& yaml) {
  auto docs = YamlToJson(yaml);
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 1);
  return (*docs)[0];
}

TEST_CASE("plain scalars are typed by the YAML 1.2 core schema") {
  Json j = One(R"(
int: 42
neg: -7
hex: 0x1F
oct: 0o17
float: 0.8
exp: 1e3
dot: .5
t: true
f: False
n: null
tilde: ~
empty:
word: hello
time: 02:00
version: 1.2.3
yes: yes
)");
  CHECK(j["int"] == 42);
  CHECK(j["int"].is_number_integer());
  CHECK(j["neg"] == -7);
  CHECK(j["hex"] == 31);
  CHECK(j["oct"] == 15);
  CHECK(j["float"].is_number_float());
  CHECK(j["float"].get<double>() == Approx(0.8));
  CHECK(j["exp"].get<double>() == Approx(1000));
  CHECK(j["dot"].get<double>() == Approx(0.5));
  CHECK(j["t"] == true);
  CHECK(j["f"] == false);
  CHECK(j["n"].is_null());
  CHECK(j["tilde"].is_null());
  CHECK(j["empty"].is_null());
  CHECK(j["word"] == "hello");
  CHECK(j["time"] == "02:00");  // Not base 60 (that was YAML 1.1).
  CHECK(j["version"] == "1.2.3");
  CHECK(j["yes"] == "yes");  // Not a boolean in YAML 1.2.
}

TEST_CASE("quoted, block and explicitly tagged scalars") {
  Json j = One(R"(
quoted: "0.6"
single: 'true'
nullstr: "null"
block: |
  line one
  line two
folded: >-
  a
  b
tagged: !!str 123
tagged_int: !!int "12"
)");
  CHECK(j["quoted"] == "0.6");  // Kubernetes env values must stay strings.
  CHECK(j["single"] == "true");
  CHECK(j["nullstr"] == "null");
  CHECK(j["block"] == "line one\nline two\n");
  CHECK(j["folded"] == "a b");
  CHECK(j["tagged"] == "123");
  CHECK(j["tagged_int"] == 12);
}

TEST_CASE("nested structures, anchors and big numbers") {
  Json j = One(R"(
list: [1, "two", {three: 3}]
base: &b {x: 1}
copy: *b
big: 18446744073709551615
huge: 123456789012345678901234567890
min: -9223372036854775808
)");
  CHECK(j["list"] == Json::parse(R"([1, "two", {"three": 3}])"));
  CHECK(j["copy"] == Json{{"x", 1}});
  CHECK(j["big"].is_number_unsigned());
  CHECK(j["huge"].is_number_float());
  CHECK(j["min"] == INT64_MIN);
}

TEST_CASE("multi-document streams skip empty documents") {
  auto docs = YamlToJson("---\n---\na: 1\n---\n# only a comment\n---\nb: 2\n...\n");
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 2);
  CHECK((*docs)[0] == Json{{"a", 1}});
  CHECK((*docs)[1] == Json{{"b", 2}});
  auto none = YamlToJson("");
  REQUIRE(none.ok());
  CHECK(none->empty());
}

TEST_CASE("malformed YAML is a clear error, never an exception") {
  auto bad = YamlToJson("a: [1, 2\nb: 3\n");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(bad.status().message()).find("line") != std::string::npos);

  auto dup = YamlToJson("a: 1\na: 2\n");
  REQUIRE_FALSE(dup.ok());
  CHECK(std::string(dup.status().message()).find("duplicate key \"a\"") != std::string::npos);

  auto complex_key = YamlToJson("? [1, 2]\n: x\n");
  REQUIRE_FALSE(complex_key.ok());

  auto bad_tag = YamlToJson("a: !!int abc\n");
  REQUIRE_FALSE(bad_tag.ok());

  auto null_key = YamlToJson("? \n: x\n");
  REQUIRE_FALSE(null_key.ok());

  auto missing = YamlFileToJson("/nonexistent/nereid.yaml");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("scalars must be UTF-8: what cannot be serialized again is refused") {
  // Found by fuzzing (tests/fuzz/RESULTS.md, finding 6): a byte like 0xB7 alone became a JSON
  // string that nlohmann's dump() throws on.
  for (const std::string bad : {"name: a\xB7" "b\n", "\xC0\xAF: x\n", "a: \xED\xA0\x80\n",
                                "a: \xF4\x90\x80\x80\n", "a: \xE2\x82\n", "a: [ok, \xFF]\n"}) {
    INFO(bad);
    auto parsed = YamlToJson(bad);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(parsed.status().message()).find("not valid UTF-8") != std::string::npos);
  }
  auto good = YamlToJson("name: \"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"\nq: \"\\xB7\"\n");
  REQUIRE(good.ok());
  CHECK((*good)[0]["name"] == "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  CHECK((*good)[0]["q"] == "\xC2\xB7");  // YAML's escape \xB7 is U+00B7, written as UTF-8.
  CHECK_NOTHROW((*good)[0].dump());
}

TEST_CASE("mapping keys keep their text as written") {
  Json j = One("0x1F: a\n1.50: b\ntrue: c\n\"q\": d\n");
  CHECK(j == Json{{"0x1F", "a"}, {"1.50", "b"}, {"true", "c"}, {"q", "d"}});
  Json aliased = One("k: &key name\n*key : v\n");
  CHECK(aliased == Json{{"k", "name"}, {"name", "v"}});
}

// yaml-cpp 0.7's own LoadAll reports an empty document forever on these (fuzz finding 5); each
// must end, with an error.
TEST_CASE("streams on which yaml-cpp makes no progress end with an error") {
  for (const char* yaml : {"{},{}", "{}, x", "{a: 1}, b", ",",
                           R"( {"apiVersion":"v1","kind":"default"},"spec":{"url":"/a"}})"}) {
    CAPTURE(yaml);
    auto docs = YamlToJson(yaml);
    REQUIRE_FALSE(docs.ok());
    CHECK(docs.status().code() == absl::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("aliases cannot build cycles or expand without bound") {
  REQUIRE_FALSE(YamlToJson("a: &x [1, *x]\n").ok());
  // Ten levels of ten aliases each: 10^10 values if expanded.
  std::string laughs = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 10; ++i) {
    const std::string p = "*l" + std::to_string(i - 1);
    laughs += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [" + p + ", " + p + ", " +
              p + ", " + p + ", " + p + ", " + p + ", " + p + ", " + p + ", " + p + ", " + p + "]\n";
  }
  auto bomb = YamlToJson(laughs);
  REQUIRE_FALSE(bomb.ok());
  CHECK(std::string(bomb.status().message()).find("expands to more than") != std::string::npos);
}

}  // namespace
}  // namespace nereid::api
