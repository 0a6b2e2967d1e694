#pragma once

// Counts an s3:// dataset through an S3Client, with nothing written to disk.
//
//   txt, csv, jsonl, coco  s3://bucket/key is one object. Its body is streamed into the same
//                          StreamCounter that counts local files and http bodies. A rescan first
//                          asks HEAD: when the ETag and size equal the checkpoint's, the count is
//                          reused and nothing is downloaded (one HEAD per period, a few hundred
//                          bytes). Otherwise the object is counted again from the start (S3 has no
//                          append, so a changed object is a new object).
//   dir, voc/xml           s3://bucket/prefix is a "directory": every object whose key starts
//                          with prefix/ (dir: all but "folder" markers ending in '/'; voc: *.xml),
//                          listed with ListObjectsV2, page by page. A prefix without objects is
//                          PathNotFound, since S3 has no empty directories.
//
// The credential comes with the Dataset (resources.proto S3Credential); none is
// CredentialMissing. Store errors become dataset reasons: no such bucket/key -> PathNotFound,
// access denied -> PermissionDenied, endpoint down or 5xx -> DownloadFailed, timeouts -> Timeout,
// over the size cap -> DownloadTooLarge.

#include <string_view>

#include "absl/status/statusor.h"
#include "localcontroller/dataset/format.h"
#include "localcontroller/dataset/sample_counter.h"
#include "localcontroller/s3/s3_client.h"

namespace nereid::lc::dataset {

absl::StatusOr<CountResult> CountS3Dataset(const s3::S3Client& client, std::string_view url,
                                           Format format, const CountRequest& request);

// The dataset error for a status returned by an S3Client.
absl::Status S3DatasetError(const absl::Status& status);

}  // namespace nereid::lc::dataset
