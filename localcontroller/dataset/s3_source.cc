#include "localcontroller/dataset/s3_source.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/s3/s3_url.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "localcontroller/dataset/errors.h"
#include "localcontroller/dataset/stream_counter.h"

namespace nereid::lc::dataset {
namespace {

absl::StatusOr<uint64_t> CountPrefix(const s3::S3Client& client, const s3::Credential& credential,
                                     const s3::Location& location, Format format,
                                     const std::atomic<bool>* cancel) {
  s3::Location prefix = location;
  if (!prefix.key.empty() && !absl::EndsWith(prefix.key, "/")) prefix.key += '/';
  uint64_t objects = 0;
  uint64_t count = 0;
  std::string token;
  do {
    absl::StatusOr<s3::ListPage> page = client.List(credential, prefix, token, cancel);
    if (!page.ok()) return S3DatasetError(page.status());
    for (const s3::ListedObject& object : page->objects) {
      ++objects;
      if (absl::EndsWith(object.key, "/")) continue;  // a "folder" marker, not a file
      if (format == Format::kVoc &&
          !absl::EndsWithIgnoreCase(object.key, ".xml")) {
        continue;
      }
      ++count;
    }
    token = page->truncated ? page->next_continuation_token : "";
  } while (!token.empty());
  if (objects == 0) {
    return DatasetError(Reason::kPathNotFound,
                        absl::StrCat("no objects under ", prefix.Url(), " at ",
                                     credential.EndpointUrl()));
  }
  return count;
}

}  // namespace

absl::Status S3DatasetError(const absl::Status& status) {
  const std::string message(ToStd(status.message()));
  switch (status.code()) {
    case absl::StatusCode::kNotFound:
      return DatasetError(Reason::kPathNotFound, message);
    case absl::StatusCode::kPermissionDenied:
      return DatasetError(Reason::kPermissionDenied, message);
    case absl::StatusCode::kDeadlineExceeded:
      return DatasetError(Reason::kTimeout, message);
    case absl::StatusCode::kResourceExhausted:
      return DatasetError(Reason::kDownloadTooLarge, message);
    case absl::StatusCode::kCancelled:
      return DatasetError(Reason::kCancelled, message);
    case absl::StatusCode::kInvalidArgument:
      return DatasetError(Reason::kInvalidUrl, message);
    default:
      return DatasetError(Reason::kDownloadFailed, message);
  }
}

absl::StatusOr<CountResult> CountS3Dataset(const s3::S3Client& client, std::string_view url,
                                           Format format, const CountRequest& request) {
  absl::StatusOr<s3::Location> location = nereid::s3::ParseS3Url(url);
  if (!location.ok()) return DatasetError(Reason::kInvalidUrl, ToStd(location.status().message()));
  if (request.s3_credential == nullptr) {
    return DatasetError(
        Reason::kCredentialMissing,
        absl::StrCat(location->Url(), " needs S3 credentials: set spec.credentialName to a Secret "
                                      "with the s3-endpoint annotation and the ACCESS_KEY_ID and "
                                      "SECRET_ACCESS_KEY keys"));
  }
  const s3::Credential& credential = *request.s3_credential;
  CountResult result;
  result.source = location->Url();
  result.checkpoint.format = std::string(FormatName(format));
  result.checkpoint.source = result.source;

  if (IsDirectoryFormat(format)) {
    ASSIGN_OR_RETURN(result.count,
                     CountPrefix(client, credential, *location, format, request.cancel));
    result.checkpoint.count = result.count;
    return result;
  }
  if (location->key.empty() || absl::EndsWith(location->key, "/")) {
    return DatasetError(Reason::kNotAFile,
                        absl::StrCat("format ", ToAbsl(FormatName(format)), " needs one object; ",
                                     location->Url(), " names a bucket or prefix"));
  }

  const Checkpoint* previous = request.previous;
  const bool comparable = previous != nullptr && previous->format == result.checkpoint.format &&
                          previous->source == result.source && !previous->etag.empty();
  if (comparable) {
    absl::StatusOr<s3::ObjectInfo> head = client.Head(credential, *location);
    if (!head.ok()) return S3DatasetError(head.status());
    if (head->etag == previous->etag && head->size == previous->size) {
      result.count = previous->count;
      result.incremental = true;
      result.checkpoint = *previous;
      return result;
    }
  }
  StreamCounter counter(format);
  absl::StatusOr<s3::ObjectInfo> got =
      client.Get(credential, *location, request.cancel,
                 [&](const uint8_t* data, size_t size) { counter.Feed(data, size); });
  if (!got.ok()) return S3DatasetError(got.status());
  ASSIGN_OR_RETURN(result.count, counter.Finish());
  result.bytes_read = got->size;
  result.checkpoint.count = result.count;
  result.checkpoint.etag = got->etag;
  result.checkpoint.size = got->size;
  result.checkpoint.last_modified = got->last_modified;
  return result;
}

}  // namespace nereid::lc::dataset
