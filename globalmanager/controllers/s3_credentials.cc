#include "globalmanager/controllers/s3_credentials.h"

#include "absl/strings/str_cat.h"
#include "common/kube/errors.h"
#include "common/kube/resource.h"
#include "common/s3/s3_url.h"
#include "common/strings/absl_compat.h"

namespace nereid::gm {

namespace {

WorkerS3Options WorkerS3For(const ControllerSettings& settings,
                            const std::optional<SecretCredential>& credential) {
  WorkerS3Options options;
  options.initializer_image = settings.storage_initializer_image;
  options.literal_credentials = settings.literal_s3_credentials;
  if (credential.has_value()) {
    options.secret_name = credential->secret_name;
    options.credential = credential->credential;
  }
  return options;
}

}  // namespace

absl::StatusOr<SecretCredential> S3CredentialReader::Read(
    std::string_view ns, std::string_view secret_name,
    std::optional<CredentialProblem>* problem) const {
  problem->reset();
  const std::string where =
      absl::StrCat("secret \"", ToAbsl(secret_name), "\" in namespace ", ToAbsl(ns));
  auto fail = [&](std::string_view reason, std::string message) -> absl::Status {
    *problem = CredentialProblem{std::string(reason), message};
    return absl::FailedPreconditionError(std::move(message));
  };
  absl::StatusOr<kube::Json> secret =
      cache_ != nullptr ? cache_->Get(ns, secret_name)
                        : client_->Get(kube::resources::Secrets(), ns, secret_name);
  if (!secret.ok()) {
    if (kube::IsForbidden(secret.status())) {
      return fail(credential_reasons::kForbidden,
                  absl::StrCat("the GlobalManager may not read ", where,
                               " (grant it with deploy/optional/s3-credentials-rbac.yaml)"));
    }
    if (absl::IsNotFound(secret.status())) {
      return fail(credential_reasons::kNotFound, absl::StrCat(where, " not found"));
    }
    return secret.status();  // Transient: the caller retries.
  }
  absl::StatusOr<s3::Credential> credential = s3::CredentialFromSecret(*secret);
  if (!credential.ok()) {
    // CredentialFromSecret's messages name the field, never a value.
    return fail(credential_reasons::kInvalid,
                absl::StrCat(where, " is not an S3 credential in Sedna's format: ",
                             credential.status().message()));
  }
  return SecretCredential{std::string(secret_name), kube::ResourceVersion(*secret),
                          *std::move(credential)};
}

absl::StatusOr<std::optional<SecretCredential>> S3CredentialReader::ReadFor(
    std::string_view ns, std::string_view url, std::string_view credential_name,
    std::optional<CredentialProblem>* problem) const {
  problem->reset();
  if (credential_name.empty() || !s3::IsS3Url(url)) return std::optional<SecretCredential>();
  absl::StatusOr<SecretCredential> credential = Read(ns, credential_name, problem);
  if (!credential.ok()) return credential.status();
  return std::optional<SecretCredential>(*std::move(credential));
}

absl::StatusOr<WorkerS3Options> ReadWorkerS3(const ControllerContext& context, std::string_view ns,
                                             std::string_view secret_name,
                                             std::optional<CredentialProblem>* problem) {
  problem->reset();
  if (secret_name.empty()) return WorkerS3For(context.settings, std::nullopt);
  absl::StatusOr<SecretCredential> credential =
      S3CredentialReader(context).Read(ns, secret_name, problem);
  if (!credential.ok()) return credential.status();
  return WorkerS3For(context.settings, *credential);
}

absl::StatusOr<WorkerS3Options> ReadModelS3(const ControllerContext& context, std::string_view ns,
                                            std::string_view url, std::string_view credential_name,
                                            CredentialProblem* problem) {
  std::optional<CredentialProblem> found;
  absl::StatusOr<WorkerS3Options> options =
      ReadWorkerS3(context, ns, s3::IsS3Url(url) ? credential_name : std::string_view(), &found);
  if (!options.ok()) {
    *problem = found.value_or(CredentialProblem{std::string(credential_reasons::kUnavailable),
                                                std::string(options.status().message())});
  }
  return options;
}

std::string VersionWithCredential(std::string_view version, const SecretCredential& credential) {
  return absl::StrCat(ToAbsl(version), "/s", credential.resource_version);
}

}  // namespace nereid::gm
