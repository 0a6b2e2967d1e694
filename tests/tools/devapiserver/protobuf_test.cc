#include "tools/devapiserver/protobuf.h"

#include <catch2/catch.hpp>

#include "common/kube/errors.h"

namespace nereid::devapi {
namespace {

std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
  return out;
}
std::string Len(int field, const std::string& bytes) {
  return Varint((static_cast<uint64_t>(field) << 3) | 2) + Varint(bytes.size()) + bytes;
}
std::string Envelope(const std::string& api_version, const std::string& kind, const std::string& raw) {
  return std::string("k8s\0", 4) + Len(1, Len(1, api_version) + Len(2, kind)) + Len(2, raw) +
         Len(4, "application/vnd.kubernetes.protobuf");
}

TEST_CASE("protobuf: a ConfigMap as kubectl's typed client sends it") {
  std::string meta = Len(1, "settings") + Len(3, "team") + Len(11, Len(1, "app") + Len(2, "web"));
  std::string raw = Len(1, meta) + Len(2, Len(1, "k") + Len(2, "v")) +
                    Varint((99 << 3) | 0) + Varint(7);  // an unknown field is skipped
  auto obj = DecodeKubeProtobuf(Envelope("v1", "ConfigMap", raw));
  REQUIRE(obj.ok());
  CHECK((*obj)["kind"] == "ConfigMap");
  CHECK((*obj)["metadata"]["name"] == "settings");
  CHECK((*obj)["metadata"]["namespace"] == "team");
  CHECK((*obj)["metadata"]["labels"]["app"] == "web");
  CHECK((*obj)["data"]["k"] == "v");
}

TEST_CASE("protobuf: secrets carry base64 data; other kinds and garbage are refused") {
  std::string raw = Len(1, Len(1, "s")) + Len(2, Len(1, "p") + Len(2, std::string("\x00\x01", 2))) + Len(3, "Opaque");
  auto secret = DecodeKubeProtobuf(Envelope("v1", "Secret", raw));
  REQUIRE(secret.ok());
  CHECK((*secret)["data"]["p"] == "AAE=");
  CHECK((*secret)["type"] == "Opaque");
  auto deployment = DecodeKubeProtobuf(Envelope("apps/v1", "Deployment", ""));
  CHECK(kube::Reason(deployment.status()) == "UnsupportedMediaType");
  CHECK(kube::Reason(DecodeKubeProtobuf("not protobuf").status()) == "BadRequest");
  std::string truncated = Envelope("v1", "ConfigMap", Len(1, Len(1, "settings")));
  truncated.resize(truncated.size() - 3);
  CHECK_FALSE(DecodeKubeProtobuf(truncated).ok());
  CHECK_FALSE(DecodeKubeProtobuf(std::string("k8s\0\xff\xff\xff", 7)).ok());
}

}  // namespace
}  // namespace nereid::devapi
