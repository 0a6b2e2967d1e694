#include "localcontroller/dataset/checkpoint.h"

#include <string_view>

#include "absl/strings/str_cat.h"
#include "common/strings/fnv1a.h"
#include "nlohmann/json.hpp"

namespace nereid::lc::dataset {
namespace {

using Json = nlohmann::json;

template <typename T>
bool Read(const Json& j, const char* key, T* out) {
  auto it = j.find(key);
  if (it == j.end()) return true;  // absent: keep the default
  if constexpr (std::is_same_v<T, bool>) {
    if (!it->is_boolean()) return false;
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!it->is_string()) return false;
  } else if constexpr (std::is_signed_v<T>) {
    if (!it->is_number_integer()) return false;
  } else {
    if (!it->is_number_unsigned()) return false;
  }
  *out = it->get<T>();
  return true;
}

}  // namespace

std::string SerializeCheckpoint(const Checkpoint& c) {
  Json j = {{"v", Checkpoint::kVersion}, {"fmt", c.format}, {"src", c.source}, {"count", c.count}};
  if (c.ino != 0 || c.dev != 0) {
    j["dev"] = c.dev;
    j["ino"] = c.ino;
    j["size"] = c.size;
    j["mtime"] = c.mtime_ns;
  }
  if (c.offset != 0 || c.samples != 0) {
    j["off"] = c.offset;
    j["n"] = c.samples;
    j["inl"] = c.in_line;
    j["csv"] = c.csv_state;
    j["gh"] = c.guard_hash;
    j["gl"] = c.guard_len;
  }
  if (!c.etag.empty()) j["etag"] = c.etag;
  if (!c.last_modified.empty()) j["lm"] = c.last_modified;
  return j.dump();
}

absl::StatusOr<Checkpoint> ParseCheckpoint(std::string_view text) {
  Json j = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError("dataset checkpoint is not a JSON object");
  }
  int version = 0;
  if (!Read(j, "v", &version) || version != Checkpoint::kVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("dataset checkpoint version ", version, " is not ", Checkpoint::kVersion));
  }
  Checkpoint c;
  uint32_t csv_state = 0;
  const bool ok = Read(j, "fmt", &c.format) && Read(j, "src", &c.source) &&
                  Read(j, "count", &c.count) && Read(j, "dev", &c.dev) && Read(j, "ino", &c.ino) &&
                  Read(j, "size", &c.size) && Read(j, "mtime", &c.mtime_ns) &&
                  Read(j, "off", &c.offset) && Read(j, "n", &c.samples) &&
                  Read(j, "inl", &c.in_line) && Read(j, "csv", &csv_state) &&
                  Read(j, "gh", &c.guard_hash) && Read(j, "gl", &c.guard_len) &&
                  Read(j, "etag", &c.etag) && Read(j, "lm", &c.last_modified);
  if (!ok || csv_state > 3 || c.guard_len > Checkpoint::kGuardBytes || c.offset < c.guard_len) {
    return absl::InvalidArgumentError("dataset checkpoint has a field of the wrong type or range");
  }
  c.csv_state = static_cast<uint8_t>(csv_state);
  return c;
}

uint64_t GuardHash(const uint8_t* data, size_t size) {
  return Fnv1a64(std::string_view(reinterpret_cast<const char*>(data), size));
}

}  // namespace nereid::lc::dataset
