#pragma once

// S3CredentialReader: how the GM reads the Secret an object names in `credentialName` (Sedna's
// format, common/s3/credential.h) — only when an object names one, only in that object's
// namespace, one GET through the KubeClient seam (no Secret informer: the default ClusterRole has
// no Secret access, and a namespaced Role granting `get` is all deploy/optional asks for).
//
// A Secret that cannot be used is a problem of the object that names it, never a crash:
//   403 Forbidden         → CredentialsForbidden (the namespace lacks the optional RoleBinding)
//   404 Not Found         → CredentialsNotFound
//   wrong format          → CredentialsInvalid (the message names the field, never a value)
//   anything else         → a transient error: the caller returns it and is retried
// The controllers report it with RecordSpecInvalid (SpecValid=False with that reason, a Warning
// Event) and send nothing to the edge for the object until the Secret is usable. Credential values
// never appear in a message or a log line; only the Secret's name and resourceVersion do.

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/kube/client.h"
#include "common/s3/credential.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/secret_cache.h"
#include "globalmanager/controllers/worker_s3.h"

namespace nereid::gm {

namespace credential_reasons {
inline constexpr std::string_view kForbidden = "CredentialsForbidden";
inline constexpr std::string_view kNotFound = "CredentialsNotFound";
inline constexpr std::string_view kInvalid = "CredentialsInvalid";
// A transient API error, for controllers that wait instead of returning it.
inline constexpr std::string_view kUnavailable = "CredentialsUnavailable";
}  // namespace credential_reasons

// Secrets are not watched: an object with a credentialName is reconciled again after this long,
// so a rotated Secret reaches its node and a RoleBinding granted later takes effect.
inline constexpr absl::Duration kCredentialRecheckPeriod = absl::Seconds(60);

struct SecretCredential {
  std::string secret_name;
  std::string resource_version;  // folded into the edge version: a rotated Secret is re-sent
  s3::Credential credential;
};

// Why a credential could not be read, for the object's condition and Event.
struct CredentialProblem {
  std::string reason;   // a credential_reasons constant
  std::string message;  // names the Secret and namespace, never a value
};

class S3CredentialReader {
 public:
  // Reads through `context.secrets` when set (secret_cache.h), else GETs with `context.client`.
  explicit S3CredentialReader(const ControllerContext& context)
      : client_(context.client), cache_(context.secrets) {}

  // The Secret `secret_name` in `ns` as a credential. On failure: `problem` is set for the
  // permanent cases above (the returned status is then that problem as FailedPrecondition); a
  // transient API error is returned with `problem` left empty.
  absl::StatusOr<SecretCredential> Read(std::string_view ns, std::string_view secret_name,
                                        std::optional<CredentialProblem>* problem) const;

  // What an object with `url` and `credential_name` carries to its node: nothing (nullopt, no
  // read) unless the url is s3:// and a credentialName is given; else Read's result.
  absl::StatusOr<std::optional<SecretCredential>> ReadFor(
      std::string_view ns, std::string_view url, std::string_view credential_name,
      std::optional<CredentialProblem>* problem) const;

 private:
  kube::KubeClient* client_;
  SecretCache* cache_;
};

// The S3 part of a worker pod whose s3:// URLs use Secret `secret_name` in `ns` ("" = none, no
// read), with the GM's initializer image and literal-credentials settings; Read's errors and
// `problem` otherwise.
absl::StatusOr<WorkerS3Options> ReadWorkerS3(const ControllerContext& context, std::string_view ns,
                                             std::string_view secret_name,
                                             std::optional<CredentialProblem>* problem);

// The S3 part of a worker pod that reads `url` (a Model's spec.url) with `credential_name` (the
// Model's credentialName): the Secret is read only when the url is s3:// and names one. On any
// failure `problem` says why — a transient API error as kUnavailable — so the worker's owner
// waits on it (condition + Event, looked at again later) instead of failing.
absl::StatusOr<WorkerS3Options> ReadModelS3(const ControllerContext& context, std::string_view ns,
                                            std::string_view url, std::string_view credential_name,
                                            CredentialProblem* problem);

// The edge version of an object that carries `credential`: `version` + "/s" + the Secret's
// resourceVersion, so rotating the Secret (same spec, same generation) re-sends the object.
std::string VersionWithCredential(std::string_view version, const SecretCredential& credential);

}  // namespace nereid::gm
