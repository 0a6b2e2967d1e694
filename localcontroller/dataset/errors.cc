#include "localcontroller/dataset/errors.h"

#include <cerrno>
#include <cstring>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "common/strings/absl_compat.h"

namespace nereid::lc::dataset {
namespace {

constexpr char kReasonPayload[] = "nereid.io/dataset-reason";

absl::StatusCode CodeFor(Reason reason) {
  switch (reason) {
    case Reason::kUnknownFormat:
    case Reason::kInvalidUrl:
      return absl::StatusCode::kInvalidArgument;
    case Reason::kPathNotFound:
      return absl::StatusCode::kNotFound;
    case Reason::kPermissionDenied:
    case Reason::kPathEscapesHostRoot:
    case Reason::kOutsideDataRoots:
      return absl::StatusCode::kPermissionDenied;
    case Reason::kNotAFile:
    case Reason::kNotADirectory:
    case Reason::kTooManySymlinks:
    case Reason::kCredentialMissing:
      return absl::StatusCode::kFailedPrecondition;
    case Reason::kUnsupported:
      return absl::StatusCode::kUnimplemented;
    case Reason::kDownloadFailed:
      return absl::StatusCode::kUnavailable;
    case Reason::kDownloadTooLarge:
      return absl::StatusCode::kResourceExhausted;
    case Reason::kTimeout:
      return absl::StatusCode::kDeadlineExceeded;
    case Reason::kMalformed:
      return absl::StatusCode::kDataLoss;
    case Reason::kFileChanged:
      return absl::StatusCode::kAborted;
    case Reason::kReadError:
      return absl::StatusCode::kInternal;
    case Reason::kCancelled:
      return absl::StatusCode::kCancelled;
  }
  return absl::StatusCode::kInternal;
}

}  // namespace

std::string_view ReasonName(Reason reason) {
  switch (reason) {
    case Reason::kUnknownFormat: return "UnknownFormat";
    case Reason::kInvalidUrl: return "InvalidURL";
    case Reason::kPathNotFound: return "PathNotFound";
    case Reason::kPermissionDenied: return "PermissionDenied";
    case Reason::kPathEscapesHostRoot: return "PathEscapesHostRoot";
    case Reason::kOutsideDataRoots: return "OutsideDataRoots";
    case Reason::kNotAFile: return "NotAFile";
    case Reason::kNotADirectory: return "NotADirectory";
    case Reason::kTooManySymlinks: return "TooManySymlinks";
    case Reason::kUnsupported: return "Unsupported";
    case Reason::kDownloadFailed: return "DownloadFailed";
    case Reason::kDownloadTooLarge: return "DownloadTooLarge";
    case Reason::kTimeout: return "Timeout";
    case Reason::kMalformed: return "Malformed";
    case Reason::kFileChanged: return "FileChanged";
    case Reason::kReadError: return "ReadError";
    case Reason::kCancelled: return "Cancelled";
    case Reason::kCredentialMissing: return "CredentialMissing";
  }
  return "ReadError";
}

absl::Status DatasetError(Reason reason, std::string_view message) {
  absl::Status status(CodeFor(reason), ToAbsl(message));
  status.SetPayload(kReasonPayload, absl::Cord(ToAbsl(ReasonName(reason))));
  return status;
}

absl::Status ErrnoError(int err, std::string_view what) {
  std::string message = absl::StrCat(ToAbsl(what), ": ", std::strerror(err));
  switch (err) {
    case ENOENT:
      return DatasetError(Reason::kPathNotFound, message);
    case EACCES:
    case EPERM:
      return DatasetError(Reason::kPermissionDenied, message);
    case ENOTDIR:
      return DatasetError(Reason::kNotADirectory, message);
    case EISDIR:
      return DatasetError(Reason::kNotAFile, message);
    case ELOOP:
      return DatasetError(Reason::kTooManySymlinks, message);
    default:
      return DatasetError(Reason::kReadError, message);
  }
}

std::string ReasonOf(const absl::Status& status) {
  if (status.ok()) return "";
  auto payload = status.GetPayload(kReasonPayload);
  if (payload.has_value()) return std::string(*payload);
  switch (status.code()) {
    case absl::StatusCode::kCancelled:
      return "Cancelled";
    case absl::StatusCode::kDeadlineExceeded:
      return "Timeout";
    default:
      return "ReadError";
  }
}

}  // namespace nereid::lc::dataset
