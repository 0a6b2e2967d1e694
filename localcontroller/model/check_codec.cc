#include "localcontroller/model/check_codec.h"

#include <exception>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace nereid::lc::model {
namespace {

using Json = nlohmann::json;
constexpr int kVersion = 1;

}  // namespace

std::string SerializeCheck(const Check& check) {
  Json j = {{"v", kVersion},
            {"verified", check.verified},
            {"present", check.present},
            {"sha256", check.sha256},
            {"reason", check.reason},
            {"message", check.message}};
  if (check.size.has_value()) j["size"] = *check.size;
  if (check.fingerprint.has_value()) {
    const Fingerprint& f = *check.fingerprint;
    j["fp"] = {{"source", f.source}, {"dev", f.dev},   {"ino", f.ino},
               {"size", f.size},     {"mtime", f.mtime_ns}, {"etag", f.etag},
               {"lm", f.last_modified}};
  }
  return j.dump();
}

absl::StatusOr<Check> ParseCheck(std::string_view text) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError("stored model check is not a JSON object");
  }
  // Typed access throws on a wrong type: caught here, at the boundary.
  try {
    if (j.value("v", 0) != kVersion) {
      return absl::InvalidArgumentError(
          absl::StrCat("stored model check has version ", j.value("v", 0), ", want ", kVersion));
    }
    Check check;
    check.verified = j.value("verified", false);
    check.present = j.value("present", false);
    check.sha256 = j.value("sha256", "");
    check.reason = j.value("reason", "");
    check.message = j.value("message", "");
    if (j.contains("size")) check.size = j.at("size").get<uint64_t>();
    if (j.contains("fp")) {
      const Json& fp = j.at("fp");
      Fingerprint f;
      f.source = fp.value("source", "");
      f.dev = fp.value("dev", uint64_t{0});
      f.ino = fp.value("ino", uint64_t{0});
      f.size = fp.value("size", uint64_t{0});
      f.mtime_ns = fp.value("mtime", int64_t{0});
      f.etag = fp.value("etag", "");
      f.last_modified = fp.value("lm", "");
      check.fingerprint = std::move(f);
    }
    return check;
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("stored model check is malformed: ", e.what()));
  }
}

}  // namespace nereid::lc::model
