#include "common/s3/s3_url.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/strings/absl_compat.h"

namespace nereid::s3 {
namespace {

constexpr std::string_view kPrefix = "s3://";

bool IsBucketChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
}

// A bucket usable as one DNS label in front of the endpoint: 3..63 of [a-z0-9-], no dots (a dot
// breaks the wildcard certificate of virtual-host endpoints).
bool IsDnsCompatibleBucket(std::string_view bucket) {
  if (bucket.size() < 3 || bucket.size() > 63) return false;
  if (bucket.front() == '-' || bucket.back() == '-') return false;
  for (char c : bucket) {
    if (!(absl::ascii_islower(static_cast<unsigned char>(c)) ||
          absl::ascii_isdigit(static_cast<unsigned char>(c)) || c == '-')) {
      return false;
    }
  }
  return true;
}

std::string_view HostOf(std::string_view endpoint) {
  if (!endpoint.empty() && endpoint.front() == '[') {  // [v6]:port
    const size_t close = endpoint.find(']');
    return endpoint.substr(0, close == std::string_view::npos ? endpoint.size() : close + 1);
  }
  return endpoint.substr(0, endpoint.find(':'));
}

}  // namespace

bool IsS3Url(std::string_view url) {
  return url.size() >= kPrefix.size() &&
         absl::EqualsIgnoreCase(ToAbsl(url.substr(0, kPrefix.size())), ToAbsl(kPrefix));
}

std::string Location::Url() const { return absl::StrCat(ToAbsl(kPrefix), bucket, "/", key); }

absl::StatusOr<Location> ParseS3Url(std::string_view url) {
  if (!IsS3Url(url)) {
    return absl::InvalidArgumentError(absl::StrCat("not an s3:// url: ", ToAbsl(url)));
  }
  std::string_view rest = url.substr(kPrefix.size());
  const size_t slash = rest.find('/');
  const std::string_view bucket = rest.substr(0, slash);
  if (bucket.find('@') != std::string_view::npos) {
    return absl::InvalidArgumentError(
        "an s3:// url must not carry credentials; name a Secret in credentialName instead");
  }
  if (bucket.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("s3 url has no bucket: ", ToAbsl(url)));
  }
  if (bucket.size() > 255) {
    return absl::InvalidArgumentError(absl::StrCat("s3 bucket name is longer than 255 characters"));
  }
  for (char c : bucket) {
    if (!IsBucketChar(c)) {
      return absl::InvalidArgumentError(
          absl::StrCat("s3 bucket name \"", ToAbsl(bucket),
                       "\" has a character S3 does not allow"));
    }
  }
  Location location;
  location.bucket = std::string(bucket);
  if (slash != std::string_view::npos) location.key = std::string(rest.substr(slash + 1));
  return location;
}

absl::StatusOr<Addressing> ParseAddressing(std::string_view text) {
  const std::string lower = absl::AsciiStrToLower(ToAbsl(text));
  if (lower == "auto" || lower.empty()) return Addressing::kAuto;
  if (lower == "path") return Addressing::kPath;
  if (lower == "virtual" || lower == "virtual-host") return Addressing::kVirtualHost;
  return absl::InvalidArgumentError(
      absl::StrCat("s3 addressing \"", ToAbsl(text), "\" is not auto, path or virtual"));
}

Addressing ResolveAddressing(Addressing requested, std::string_view endpoint,
                             std::string_view bucket) {
  if (requested == Addressing::kPath) return Addressing::kPath;
  if (!IsDnsCompatibleBucket(bucket)) return Addressing::kPath;
  if (requested == Addressing::kVirtualHost) return Addressing::kVirtualHost;
  const std::string host = absl::AsciiStrToLower(ToAbsl(HostOf(endpoint)));
  return absl::EndsWith(host, ".amazonaws.com") || host == "amazonaws.com"
             ? Addressing::kVirtualHost
             : Addressing::kPath;
}

std::string UriEncode(std::string_view text, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (keep_slash && c == '/')) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    }
  }
  return out;
}

std::string ObjectUrl(bool use_https, std::string_view endpoint, const Location& location,
                      Addressing addressing) {
  const std::string_view scheme = use_https ? "https://" : "http://";
  const std::string key = UriEncode(location.key, /*keep_slash=*/true);
  if (ResolveAddressing(addressing, endpoint, location.bucket) == Addressing::kVirtualHost) {
    return absl::StrCat(ToAbsl(scheme), location.bucket, ".", ToAbsl(endpoint), "/", key);
  }
  return absl::StrCat(ToAbsl(scheme), ToAbsl(endpoint), "/", UriEncode(location.bucket, false), "/",
                      key);
}

}  // namespace nereid::s3
