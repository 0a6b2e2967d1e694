#pragma once

// Dataset (sedna.io/v1alpha1): a file or directory of samples on one edge node. The LocalController
// on spec.nodeName counts its samples and reports them; the status is written by the GM.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/api/common_types.h"
#include "common/api/json_fields.h"
#include "common/kube/errors.h"
#include "common/kube/object.h"

namespace nereid::api {

struct DatasetSpec {
  // A host path on nodeName ("/data/train.txt", resolved under the LC's host root) or an
  // s3://, http:// or https:// URL.
  std::string url;
  // How samples are counted. A free string in the CRD (as in Sedna); the LC understands
  // KnownDatasetFormats() case-insensitively and reports UnknownFormat for anything else.
  std::string format;
  std::string node_name;        // JSON "nodeName": the edge node holding the data.
  std::string credential_name;  // JSON "credentialName": Secret with S3 credentials (optional).

  kube::Json ToJson() const;
  friend bool operator==(const DatasetSpec&, const DatasetSpec&) = default;
};

// Written by the GM from the LC's reports. numberOfSamples/updateTime are Sedna's; Nereid adds
// reason/message (why the last count failed; empty when it succeeded — Sedna never reports errors),
// observedGeneration (the spec generation the count belongs to) and conditions (one per type:
// Counted, SpecValid).
struct DatasetStatus {
  std::optional<int64_t> number_of_samples;
  std::optional<absl::Time> update_time;
  std::string reason;   // Machine-readable, e.g. PathNotFound, UnknownFormat, NotAFile.
  std::string message;  // For humans.
  std::optional<int64_t> observed_generation;
  std::vector<Condition> conditions;

  kube::Json ToJson() const;
  friend bool operator==(const DatasetStatus&, const DatasetStatus&) = default;
};

// Reads a status object; type errors are recorded under "status". The conditions are the GM's
// own to rewrite: a malformed entry is skipped, never an error.
DatasetStatus ReadDatasetStatus(const kube::Json& status, FieldReader* reader);

struct Dataset {
  ObjectMeta metadata;
  DatasetSpec spec;
  DatasetStatus status;

  // Parses an unstructured object. Type errors (a string where a number belongs, ...) fail with
  // InvalidArgument listing every bad field (kube::Causes() has them); missing fields do not —
  // Validate() reports those.
  static absl::StatusOr<Dataset> FromJson(const kube::Json& object);
  // The whole object (apiVersion, kind, metadata, spec, status).
  kube::Json ToJson() const;
  // The status object, for UpdateStatus.
  kube::Json StatusToJson() const { return status.ToJson(); }
  // Every semantic problem of the spec, with field paths; empty when valid.
  std::vector<kube::StatusCause> Validate() const;
};

// txt, csv, jsonl, dir, voc, xml, coco.
const std::vector<std::string_view>& KnownDatasetFormats();
bool IsKnownDatasetFormat(std::string_view format);  // Case-insensitive.

}  // namespace nereid::api
