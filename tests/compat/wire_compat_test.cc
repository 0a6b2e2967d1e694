// Every GM <-> LC message of every earlier release, as that release encoded it (golden/<release>/),
// still decodes with the current proto to the values the release put in: a field renumbered,
// retyped or removed fails here (a removed field already fails to compile the frozen builders).
// Decoding compares the re-encoding of what was parsed (unknown fields included, so nothing the
// current code does not know is lost in a relay) with the frozen builders' encoding.

#include <catch2/catch.hpp>

#include <string>

#include "tests/compat/golden_files.h"
#include "tests/compat/release_0_1_0.h"

namespace nereid::compat {
namespace {

const std::string kGolden = NEREID_COMPAT_GOLDEN_DIR;

template <typename Message>
void CheckDecodes(const std::string& dir, const std::string& name, const Message& expected) {
  INFO("golden " << name << " of " << dir);
  auto bytes = ReadFile(GoldenPath(dir, name));
  REQUIRE(bytes.ok());
  Message decoded;
  REQUIRE(decoded.ParseFromString(*bytes));
  CHECK(Encode(decoded) == *bytes);
  CHECK(Encode(decoded) == Encode(expected));
}

TEST_CASE("compat: release 0.1.0's LC -> GM messages decode to what it sent") {
  auto requests = release_0_1_0::Requests();
  CHECK(requests.size() >= 8);
  for (const auto& [name, message] : requests) CheckDecodes(kGolden + "/0.1.0", name, message);
}

TEST_CASE("compat: release 0.1.0's GM -> LC messages decode to what it sent") {
  auto responses = release_0_1_0::Responses();
  CHECK(responses.size() >= 15);
  for (const auto& [name, message] : responses) CheckDecodes(kGolden + "/0.1.0", name, message);
}

TEST_CASE("compat: an unknown field from a newer peer is kept, not dropped") {
  // What a newer LC's first message looks like to this release: a SyncRequest field (89) it does
  // not know, after the Hello.
  edge::v1::SyncRequest hello = release_0_1_0::Requests().front().second;
  REQUIRE(hello.has_hello());
  std::string bytes = Encode(hello);
  bytes.append("\xca\x05\x03new", 6);  // field 89, length-delimited (tag varint ca 05), "new"
  edge::v1::SyncRequest decoded;
  REQUIRE(decoded.ParseFromString(bytes));
  CHECK(decoded.hello().node_name() == release_0_1_0::kNode);
  CHECK(Encode(decoded) == bytes);
}

}  // namespace
}  // namespace nereid::compat
