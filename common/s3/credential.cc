#include "common/s3/credential.h"

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/strings/absl_compat.h"

namespace nereid::s3 {
namespace {

const std::string* Find(const std::map<std::string, std::string>& map, std::string_view key) {
  auto it = map.find(std::string(key));
  return it == map.end() ? nullptr : &it->second;
}

// Values of a JSON object of strings; non-string members are an error naming the key.
absl::Status StringMembers(const kube::Json& object, std::string_view where, bool base64,
                           std::map<std::string, std::string>* out) {
  if (object.is_null()) return absl::OkStatus();
  if (!object.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat("secret ", ToAbsl(where), " is not an object"));
  }
  for (const auto& [key, value] : object.items()) {
    if (!value.is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat("secret ", ToAbsl(where), ".", key, " is not a string"));
    }
    std::string text = value.get<std::string>();
    if (base64) {
      std::string decoded;
      if (!absl::Base64Unescape(text, &decoded)) {
        return absl::InvalidArgumentError(
            absl::StrCat("secret ", ToAbsl(where), ".", key, " is not valid base64"));
      }
      text = std::move(decoded);
    }
    (*out)[key] = std::move(text);
  }
  return absl::OkStatus();
}

}  // namespace

std::string Credential::EndpointUrl() const {
  return absl::StrCat(use_https ? "https://" : "http://", endpoint);
}

absl::Status ValidateEndpoint(std::string_view endpoint) {
  if (endpoint.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("secret annotation ", ToAbsl(kAnnotationEndpoint), " is empty"));
  }
  if (endpoint.find("://") != std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("secret annotation ", ToAbsl(kAnnotationEndpoint),
                     " must be host[:port] without a scheme (use ", ToAbsl(kAnnotationUseHttps),
                     ": \"0\" for http)"));
  }
  for (char c : endpoint) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '/' || c == '@' || c == '?' || c == '#' || absl::ascii_isspace(u) || u < 0x20) {
      return absl::InvalidArgumentError(absl::StrCat(
          "secret annotation ", ToAbsl(kAnnotationEndpoint), " must be host[:port], got \"",
          ToAbsl(endpoint), "\""));
    }
  }
  const size_t colon = endpoint.rfind(':');
  if (colon != std::string_view::npos && endpoint.find(']') == std::string_view::npos) {
    int port = 0;
    if (endpoint.find(':') != colon ||
        !absl::SimpleAtoi(ToAbsl(endpoint.substr(colon + 1)), &port) || port <= 0 ||
        port > 65535) {
      return absl::InvalidArgumentError(absl::StrCat(
          "secret annotation ", ToAbsl(kAnnotationEndpoint), " has an invalid port: \"",
          ToAbsl(endpoint), "\""));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Credential> CredentialFromSecretFields(
    const std::map<std::string, std::string>& annotations,
    const std::map<std::string, std::string>& data) {
  Credential credential;
  const std::string* endpoint = Find(annotations, kAnnotationEndpoint);
  if (endpoint == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("secret has no annotation ", ToAbsl(kAnnotationEndpoint), " (host:port)"));
  }
  if (absl::Status valid = ValidateEndpoint(*endpoint); !valid.ok()) return valid;
  credential.endpoint = *endpoint;
  if (const std::string* https = Find(annotations, kAnnotationUseHttps)) {
    credential.use_https = *https != "0";
  }
  const std::string* id = Find(data, kKeyAccessKeyId);
  const std::string* secret = Find(data, kKeySecretAccessKey);
  if (id == nullptr || id->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("secret has no (or an empty) data key ", ToAbsl(kKeyAccessKeyId)));
  }
  if (secret == nullptr || secret->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("secret has no (or an empty) data key ", ToAbsl(kKeySecretAccessKey)));
  }
  credential.access_key_id = *id;
  credential.secret_access_key = *secret;
  return credential;
}

absl::StatusOr<Credential> CredentialFromSecret(const kube::Json& secret) {
  if (!secret.is_object()) return absl::InvalidArgumentError("secret is not an object");
  std::map<std::string, std::string> annotations;
  std::map<std::string, std::string> data;
  const kube::Json empty;
  auto member = [&](const kube::Json& object, const char* key) -> const kube::Json& {
    if (!object.is_object()) return empty;
    auto it = object.find(key);
    return it == object.end() ? empty : *it;
  };
  if (absl::Status s = StringMembers(member(member(secret, "metadata"), "annotations"),
                                     "metadata.annotations", false, &annotations);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = StringMembers(member(secret, "data"), "data", true, &data); !s.ok()) {
    return s;
  }
  if (absl::Status s = StringMembers(member(secret, "stringData"), "stringData", false, &data);
      !s.ok()) {
    return s;
  }
  return CredentialFromSecretFields(annotations, data);
}

}  // namespace nereid::s3
