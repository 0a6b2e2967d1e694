#include "localcontroller/dataset/checkpoint.h"

#include <catch2/catch.hpp>

namespace nereid::lc::dataset {
namespace {

TEST_CASE("checkpoint round-trips through its serialization", "[checkpoint]") {
  Checkpoint c;
  c.format = "csv";
  c.source = "/data/train \"quoted\".csv";
  c.dev = 2049;
  c.ino = 123456789012ULL;
  c.size = (uint64_t{1} << 40) + 7;
  c.mtime_ns = 1'700'000'000'123'456'789LL;
  c.offset = c.size;
  c.samples = 99;
  c.in_line = true;
  c.csv_state = 2;
  c.guard_hash = 0xFFFFFFFFFFFFFFFFULL;
  c.guard_len = 4096;
  c.count = 98;
  c.etag = "\"abc\"";
  c.last_modified = "Wed, 21 Oct 2015 07:28:00 GMT";
  const std::string text = SerializeCheckpoint(c);
  absl::StatusOr<Checkpoint> parsed = ParseCheckpoint(text);
  REQUIRE(parsed.ok());
  CHECK(*parsed == c);

  Checkpoint dir;
  dir.format = "dir";
  dir.source = "/data/images";
  dir.count = 5;
  absl::StatusOr<Checkpoint> parsed_dir = ParseCheckpoint(SerializeCheckpoint(dir));
  REQUIRE(parsed_dir.ok());
  CHECK(*parsed_dir == dir);
}

TEST_CASE("bad checkpoints are rejected, so the caller recounts", "[checkpoint]") {
  CHECK_FALSE(ParseCheckpoint("").ok());
  CHECK_FALSE(ParseCheckpoint("not json").ok());
  CHECK_FALSE(ParseCheckpoint("[1,2]").ok());
  CHECK_FALSE(ParseCheckpoint(R"({"v": 2, "fmt": "txt"})").ok());
  CHECK_FALSE(ParseCheckpoint(R"({"fmt": "txt"})").ok());
  CHECK_FALSE(ParseCheckpoint(R"({"v": 1, "count": -1})").ok());
  CHECK_FALSE(ParseCheckpoint(R"({"v": 1, "count": "3"})").ok());
  CHECK_FALSE(ParseCheckpoint(R"({"v": 1, "off": 10, "gl": 4097})").ok());
  CHECK_FALSE(ParseCheckpoint(R"({"v": 1, "off": 10, "gl": 11})").ok());
  CHECK_FALSE(ParseCheckpoint(R"({"v": 1, "csv": 4})").ok());
  CHECK(ParseCheckpoint(R"({"v": 1, "fmt": "txt", "future_field": [1]})").ok());
}

TEST_CASE("the guard hash is the stable FNV-1a", "[checkpoint]") {
  CHECK(GuardHash(nullptr, 0) == 0xcbf29ce484222325ULL);
  const uint8_t a = 'a';
  CHECK(GuardHash(&a, 1) == 0xaf63dc4c8601ec8cULL);
}

}  // namespace
}  // namespace nereid::lc::dataset
