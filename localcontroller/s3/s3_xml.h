#pragma once

// The two S3 XML documents the LC reads: a ListObjectsV2 result and an error body. S3's XML is
// flat and machine-written, so a tag scanner with entity decoding is enough; no XML library.

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "localcontroller/s3/s3_client.h"

namespace nereid::lc::s3 {

struct S3ErrorBody {
  std::string code;     // e.g. NoSuchKey, AccessDenied
  std::string message;
};

// DataLoss when the document is not a ListBucketResult.
absl::StatusOr<ListPage> ParseListObjectsV2(std::string_view xml);
// Empty fields when `xml` is not an S3 error document (e.g. a HEAD response has no body).
S3ErrorBody ParseErrorBody(std::string_view xml);
// &amp; &lt; &gt; &quot; &apos; and numeric character references.
std::string XmlUnescape(std::string_view text);

}  // namespace nereid::lc::s3
