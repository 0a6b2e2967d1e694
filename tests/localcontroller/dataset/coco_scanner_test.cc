#include "localcontroller/dataset/coco_scanner.h"

#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "localcontroller/dataset/errors.h"
#include "nlohmann/json.hpp"

namespace nereid::lc::dataset {
namespace {

absl::StatusOr<uint64_t> CountWhole(const std::string& text) {
  CocoImagesCounter counter;
  counter.Feed(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  return counter.Finish();
}

absl::StatusOr<uint64_t> CountBytewise(const std::string& text) {
  CocoImagesCounter counter;
  for (char c : text) counter.Feed(reinterpret_cast<const uint8_t*>(&c), 1);
  return counter.Finish();
}

TEST_CASE("coco counts the top-level images array", "[coco]") {
  struct Case {
    std::string json;
    uint64_t images;
  };
  const std::vector<Case> cases = {
      {R"({"images": []})", 0},
      {R"({"images":[{"id":1},{"id":2},{"id":3}]})", 3},
      {R"({"images": [1, 2 , "three", null, true, [4], {"a": [5]}]})", 7},
      // nested "images" keys in other objects and arrays do not count
      {R"({"info": {"images": [1,2,3,4]}, "images": [{"id": 1, "images": [9, 9]}],
          "annotations": [{"images": [1]}]})",
       1},
      // strings with brackets, braces, commas, escaped quotes and a key-like value
      {R"({"licenses": ["]}", "[{", "\"images\": [1,2]", "\\"],
          "images": [{"file_name": "a],[b.jpg", "x": "\"]"}, {"file_name": "c,d"}]})",
       2},
      // an escaped key spelling "images"
      {R"({"imag\u0065s": [1, 2]})", 2},
      // "images" as a value does not count as the key
      {R"({"name": "images", "images": [1]})", 1},
      // the last "images" key wins, as in Python's json
      {R"({"images": [1, 2, 3], "other": 1, "images": [4]})", 1},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    INFO(cases[i].json);
    absl::StatusOr<uint64_t> whole = CountWhole(cases[i].json);
    REQUIRE(whole.ok());
    CHECK(*whole == cases[i].images);
    absl::StatusOr<uint64_t> bytewise = CountBytewise(cases[i].json);
    REQUIRE(bytewise.ok());
    CHECK(*bytewise == cases[i].images);
  }
}

TEST_CASE("coco structural errors are Malformed with a message", "[coco]") {
  const std::vector<std::string> bad = {
      "",                                   // empty
      "[1, 2]",                             // top level not an object
      R"({"annotations": []})",             // no images key
      R"({"images": {"a": 1}})",            // images not an array
      R"({"images": [1, 2)",                // truncated
      R"({"images": ["abc)",                // truncated inside a string
      R"({"images": [1]]})",                // unbalanced
      R"({"images": [1]} trailing)",        // data after the object
      R"({"info": {"images": [1]}})",       // only a nested images key
  };
  for (const std::string& json : bad) {
    INFO(json);
    absl::StatusOr<uint64_t> result = CountWhole(json);
    REQUIRE_FALSE(result.ok());
    CHECK(ReasonOf(result.status()) == "Malformed");
    CHECK_FALSE(result.status().message().empty());
  }
}

TEST_CASE("coco scanner agrees across random chunkings of a generated file", "[coco]") {
  std::string json = R"({"info": {"description": "x [ { \" "}, "images": [)";
  for (int i = 0; i < 500; ++i) {
    if (i) json += ",";
    json += R"({"id": )" + std::to_string(i) + R"(, "file_name": "img]\"[)" + std::to_string(i) +
            R"(.jpg", "sizes": [1, [2, {"images": []}]]})";
  }
  json += R"(], "annotations": [{"segmentation": [[1.5, 2.5]], "images": [1,2]}]})";
  std::mt19937 rng(7);
  for (int round = 0; round < 20; ++round) {
    CocoImagesCounter counter;
    size_t pos = 0;
    while (pos < json.size()) {
      const size_t n = std::min<size_t>(json.size() - pos, 1 + rng() % 97);
      counter.Feed(reinterpret_cast<const uint8_t*>(json.data()) + pos, n);
      pos += n;
    }
    absl::StatusOr<uint64_t> result = counter.Finish();
    REQUIRE(result.ok());
    CHECK(*result == 500);
  }
}

}  // namespace
}  // namespace nereid::lc::dataset

namespace nereid::lc::dataset {
namespace {

// Random JSON values whose strings are full of brackets, quotes and backslashes, and whose
// objects sometimes have an "images" key of their own.
nlohmann::json RandomValue(std::mt19937& rng, int depth) {
  const std::vector<std::string> strings = {"[", "]", "{", "}", "\"", "\\", "images", "\"images\": [",
                                            "a,b", "\\\"]", "x\ny", "\u00e9"};
  switch (depth >= 4 ? rng() % 3 : rng() % 5) {
    case 0: return static_cast<int>(rng() % 1000) - 500;
    case 1: return strings[rng() % strings.size()] + strings[rng() % strings.size()];
    case 2: return rng() % 2 == 0 ? nlohmann::json(nullptr) : nlohmann::json(rng() % 2 == 0);
    case 3: {
      nlohmann::json a = nlohmann::json::array();
      for (size_t i = 0, n = rng() % 5; i < n; ++i) a.push_back(RandomValue(rng, depth + 1));
      return a;
    }
    default: {
      nlohmann::json o = nlohmann::json::object();
      for (size_t i = 0, n = rng() % 5; i < n; ++i) {
        o[rng() % 4 == 0 ? "images" : strings[rng() % strings.size()] + std::to_string(i)] =
            RandomValue(rng, depth + 1);
      }
      return o;
    }
  }
}

TEST_CASE("coco scanner matches a JSON parser on random documents", "[coco]") {
  std::mt19937 rng(99);
  for (int round = 0; round < 300; ++round) {
    nlohmann::json doc = nlohmann::json::object();
    for (int i = 0, n = static_cast<int>(rng() % 6); i < n; ++i) {
      doc["k" + std::to_string(i)] = RandomValue(rng, 1);
    }
    nlohmann::json images = nlohmann::json::array();
    for (size_t i = 0, n = rng() % 20; i < n; ++i) images.push_back(RandomValue(rng, 2));
    doc["images"] = images;
    const std::string text = doc.dump(rng() % 2 == 0 ? -1 : 1);
    CocoImagesCounter counter;
    size_t pos = 0;
    while (pos < text.size()) {
      const size_t n = std::min<size_t>(text.size() - pos, 1 + rng() % 40);
      counter.Feed(reinterpret_cast<const uint8_t*>(text.data()) + pos, n);
      pos += n;
    }
    absl::StatusOr<uint64_t> result = counter.Finish();
    INFO(text);
    REQUIRE(result.ok());
    CHECK(*result == images.size());
  }
}

}  // namespace
}  // namespace nereid::lc::dataset
