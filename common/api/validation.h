#pragma once

// Semantic checks shared by the kinds' Validate(). Each check appends kube::StatusCause entries
// {reason, message, field} in Kubernetes' vocabulary (FieldValueRequired, FieldValueInvalid,
// FieldValueNotSupported, FieldValueDuplicate). Messages are sentences for the user who wrote the
// manifest: controllers put them into a status condition and an Event unchanged.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "common/api/common_types.h"
#include "common/kube/errors.h"
#include "common/strings/dns_name.h"

namespace nereid::api {

using Causes = std::vector<kube::StatusCause>;

namespace cause_reasons {
inline constexpr std::string_view kRequired = "FieldValueRequired";
inline constexpr std::string_view kInvalid = "FieldValueInvalid";
inline constexpr std::string_view kNotSupported = "FieldValueNotSupported";
inline constexpr std::string_view kDuplicate = "FieldValueDuplicate";
inline constexpr std::string_view kTypeInvalid = "FieldValueTypeInvalid";
}  // namespace cause_reasons

void AddRequired(std::string field, std::string message, Causes* out);
void AddInvalid(std::string field, std::string message, Causes* out);

// Empty -> "<what> is required".
void RequireNonEmpty(std::string_view value, std::string field, std::string_view what, Causes* out);
// A reference to an object by name: required and a valid DNS-1123 subdomain.
void ValidateObjectName(std::string_view name, std::string field, std::string_view what,
                        Causes* out);
// A node name (optional when `required` is false): a valid DNS-1123 subdomain.
void ValidateNodeName(std::string_view name, std::string field, bool required, Causes* out);
// Lower-case RFC 1123 subdomain, at most 253 characters (what Kubernetes accepts as object and
// node names).
using ::nereid::IsDnsSubdomain;

// A data/model location: an absolute host path ("/data/x.txt", no ".." components) or a URL whose
// scheme is in `schemes` (e.g. {"s3", "http", "https"}).
void ValidateLocation(std::string_view url, std::string field, std::string_view what,
                      const std::vector<std::string_view>& schemes, Causes* out);

// A worker's PodTemplateSpec: present, an object, spec.containers non-empty, every container has a
// unique name and an image, spec.nodeName (if any) a valid node name.
void ValidatePodTemplate(const PodTemplate& pod_template, std::string field,
                         std::string_view worker, Causes* out);
// checkPeriodSeconds >= 1, timer start/end HH:MM, condition operator/metric.
void ValidateTrigger(const Trigger& trigger, std::string field, Causes* out);
void ValidateHardExampleMining(const HardExampleMining& hem, std::string field, Causes* out);
// trainProb in [0, 1].
void ValidateJobDataset(const JobDataset& dataset, std::string field, Causes* out);

// "spec.url: the dataset URL is required; spec.format: ..." for conditions and Events.
std::string FormatCauses(const Causes& causes);
// The error FromJson returns: InvalidArgument carrying `causes`, worded like the API server's
// (`Dataset.sedna.io "d1" is invalid: spec.url: ...`).
absl::Status InvalidObjectError(std::string_view kind, std::string_view name, Causes causes);

}  // namespace nereid::api
