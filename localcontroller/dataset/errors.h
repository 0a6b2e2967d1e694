#pragma once

// Dataset counting errors: an absl::Status whose canonical code fits the failure and which carries
// a machine-readable reason (the string that ends up in the Dataset's status condition) as a
// payload. Callers branch on ReasonOf(status), never on the message text.
//
//   Reason               absl code            when
//   UnknownFormat        kInvalidArgument     spec.format is not one we count
//   InvalidURL           kInvalidArgument     the url cannot be parsed
//   PathNotFound         kNotFound            the path (or a directory on it) does not exist
//   PermissionDenied     kPermissionDenied    the LC may not open or search it
//   PathEscapesHostRoot  kPermissionDenied    `..` or a symlink leads above the host root
//   OutsideDataRoots     kPermissionDenied    the path is outside the LC's data roots
//                                             (data_roots.h)
//   NotAFile             kFailedPrecondition  a directory/device where a file format needs a file
//   NotADirectory        kFailedPrecondition  a file where a directory format needs a directory
//   TooManySymlinks      kFailedPrecondition  symlink loop (more than 40 followed)
//   Unsupported          kUnimplemented       other schemes, directory formats over http, coco
//                                             ... under an s3 prefix
//   DownloadFailed       kUnavailable         http(s) connect/read failure or non-2xx status
//   DownloadTooLarge     kResourceExhausted   the body is over the configured size cap
//   Timeout              kDeadlineExceeded    the download took longer than allowed
//   Malformed            kDataLoss            content does not parse (coco structure, open csv quote)
//   FileChanged          kAborted             the file was truncated/replaced while being read
//   ReadError            kInternal            any other I/O error
//   Cancelled            kCancelled           the scan was cancelled (LC shutting down)
//   CredentialMissing    kFailedPrecondition  an s3:// url arrived without credentials (no
//                                             credentialName, or the GM could not read the Secret)

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace nereid::lc::dataset {

enum class Reason {
  kUnknownFormat,
  kInvalidUrl,
  kPathNotFound,
  kPermissionDenied,
  kPathEscapesHostRoot,
  kOutsideDataRoots,
  kNotAFile,
  kNotADirectory,
  kTooManySymlinks,
  kUnsupported,
  kDownloadFailed,
  kDownloadTooLarge,
  kTimeout,
  kMalformed,
  kFileChanged,
  kReadError,
  kCancelled,
  kCredentialMissing,
};

std::string_view ReasonName(Reason reason);

// Builds the error for `reason` with a human-readable message.
absl::Status DatasetError(Reason reason, std::string_view message);

// Maps an errno from a path operation to the matching reason ("ENOENT" -> PathNotFound, ...).
absl::Status ErrnoError(int err, std::string_view what);

// The reason carried by `status` ("PathNotFound", ...); "" for OK; for a status that was not made
// here, a reason derived from its code ("ReadError" for most).
std::string ReasonOf(const absl::Status& status);

}  // namespace nereid::lc::dataset
