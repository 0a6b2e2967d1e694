#pragma once

// Model (sedna.io/v1alpha1): where a model file lives. Jobs and services reference models by name;
// the LocalController of a node that needs one fetches it and verifies its digest.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/api/common_types.h"
#include "common/kube/errors.h"
#include "common/kube/object.h"

namespace nereid::api {

struct ModelSpec {
  std::string url;     // Host path ("/models/m.pb") or s3://, http://, https:// URL.
  std::string format;  // Free string: pb, ckpt, pth, onnx, hf, ...
  // JSON "device_soc_versions" (Sedna's spelling): SoCs the model was built for (optional).
  std::vector<std::string> device_soc_versions;
  std::string credential_name;  // JSON "credentialName": Secret with S3 credentials (optional).
  // JSON "sha256" (Nereid, additive, optional): hex SHA-256 the fetched file must have.
  std::string sha256;

  kube::Json ToJson() const;
  friend bool operator==(const ModelSpec&, const ModelSpec&) = default;
};

// updateTime and metrics are Sedna's (metrics are written from FL aggregation reports). Nereid adds
// what the LC found when it fetched the model: verified (spec.sha256 is set and the file matches
// it; without a sha256 there is nothing to verify against: verified false, reason NoDigest), the
// sha256 it computed, reason/message of a failure, observedGeneration, and
// conditions (one per type: Verified, SpecValid).
struct ModelStatus {
  std::optional<absl::Time> update_time;
  std::vector<Metric> metrics;
  std::optional<bool> verified;
  std::string sha256;
  std::string reason;  // e.g. DigestMismatch, PathNotFound, DownloadFailed.
  std::string message;
  std::optional<int64_t> observed_generation;
  std::vector<Condition> conditions;

  kube::Json ToJson() const;
  friend bool operator==(const ModelStatus&, const ModelStatus&) = default;
};

// Reads a status object; type errors are recorded under "status". The conditions are the GM's
// own to rewrite: a malformed entry is skipped, never an error.
ModelStatus ReadModelStatus(const kube::Json& status, FieldReader* reader);

struct Model {
  ObjectMeta metadata;
  ModelSpec spec;
  ModelStatus status;

  // See Dataset::FromJson for the error contract.
  static absl::StatusOr<Model> FromJson(const kube::Json& object);
  kube::Json ToJson() const;
  kube::Json StatusToJson() const { return status.ToJson(); }
  std::vector<kube::StatusCause> Validate() const;
};

// 64 hex digits.
bool IsSha256Hex(std::string_view text);

}  // namespace nereid::api
