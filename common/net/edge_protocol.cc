#include "common/net/edge_protocol.h"

#include "absl/strings/str_cat.h"
#include "common/strings/absl_compat.h"

namespace nereid::net {

namespace v1 = edge::v1;

std::string ObjectKey(const v1::ObjectRef& ref) {
  return absl::StrCat(ref.kind(), "/", ref.namespace_(), "/", ref.name());
}

std::string RefString(const v1::ObjectRef& ref) {
  return absl::StrCat(ref.kind(), " ", ref.namespace_(), "/", ref.name());
}

std::string_view KindForSpec(v1::Resource::SpecCase spec_case) {
  switch (spec_case) {
    case v1::Resource::kDataset: return kKindDataset;
    case v1::Resource::kModel: return kKindModel;
    case v1::Resource::kJointInferenceService: return kKindJointInferenceService;
    case v1::Resource::kFederatedLearningJob: return kKindFederatedLearningJob;
    case v1::Resource::kIncrementalLearningJob: return kKindIncrementalLearningJob;
    case v1::Resource::kLifelongLearningJob: return kKindLifelongLearningJob;
    case v1::Resource::kDistributedJob: return kKindDistributedJob;
    case v1::Resource::kVideoAnalyticsJob: return kKindVideoAnalyticsJob;
    case v1::Resource::kReidJob: return kKindReidJob;
    case v1::Resource::kFeatureExtractionService: return kKindFeatureExtractionService;
    case v1::Resource::kWorker: return kKindWorker;
    case v1::Resource::SPEC_NOT_SET: break;
  }
  return "";
}

absl::Status ValidateRef(const v1::ObjectRef& ref) {
  if (ref.kind().empty()) return absl::InvalidArgumentError("object reference without kind");
  if (ref.name().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(ref.kind(), " reference without name"));
  }
  if (ref.namespace_().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(ref.kind(), " ", ref.name(), ": reference without namespace"));
  }
  return absl::OkStatus();
}

absl::Status ValidateResource(const v1::Resource& resource) {
  if (absl::Status status = ValidateRef(resource.ref()); !status.ok()) return status;
  if (resource.version().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(RefString(resource.ref()), ": no version"));
  }
  const std::string_view want = KindForSpec(resource.spec_case());
  if (want.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(RefString(resource.ref()), ": no spec"));
  }
  if (want != resource.ref().kind()) {
    return absl::InvalidArgumentError(
        absl::StrCat(RefString(resource.ref()), ": carries a ", ToAbsl(want), " spec"));
  }
  return absl::OkStatus();
}

absl::Status ValidateReport(const v1::StatusReport& report) {
  if (report.seq() == 0) return absl::InvalidArgumentError("report without seq");
  if (absl::Status status = ValidateRef(report.ref()); !status.ok()) return status;
  if (report.payload_case() == v1::StatusReport::PAYLOAD_NOT_SET) {
    return absl::InvalidArgumentError(
        absl::StrCat("report ", report.seq(), " about ", RefString(report.ref()), ": no payload"));
  }
  return absl::OkStatus();
}

v1::Timestamp ToProtoTime(absl::Time time) {
  const int64_t nanos = absl::ToUnixNanos(time);
  // Floor division: a time before the epoch still gets nanos in 0..999,999,999.
  int64_t seconds = nanos / 1'000'000'000;
  int64_t fraction = nanos % 1'000'000'000;
  if (fraction < 0) {
    fraction += 1'000'000'000;
    --seconds;
  }
  v1::Timestamp proto;
  proto.set_seconds(seconds);
  proto.set_nanos(static_cast<int32_t>(fraction));
  return proto;
}

std::optional<absl::Time> FromProtoTime(const v1::Timestamp& time) {
  if (time.seconds() == 0 && time.nanos() == 0) return std::nullopt;
  return absl::FromUnixSeconds(time.seconds()) + absl::Nanoseconds(time.nanos());
}

v1::ErrorDetail ToErrorDetail(const absl::Status& status) {
  v1::ErrorDetail detail;
  detail.set_code(static_cast<int32_t>(status.code()));
  detail.set_message(std::string(status.message()));
  return detail;
}

absl::Status FromErrorDetail(const v1::ErrorDetail& detail) {
  const int code =
      detail.code() == 0 ? static_cast<int>(absl::StatusCode::kUnknown) : detail.code();
  if (code < 0 || code > static_cast<int>(absl::StatusCode::kUnauthenticated)) {
    return absl::UnknownError(detail.message());
  }
  return absl::Status(static_cast<absl::StatusCode>(code), detail.message());
}

}  // namespace nereid::net
