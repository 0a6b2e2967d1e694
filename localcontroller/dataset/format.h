#pragma once

// Dataset formats (spec.format, case-insensitive) and what one sample is in each:
//   txt, jsonl  a line with at least one byte that is not ASCII whitespace (space, \t, \r, \v, \f);
//               whitespace-only lines are empty. The last line counts without a trailing newline.
//   csv         an RFC 4180 record after the header; quoted fields may hold commas, newlines and
//               "" (escaped quotes). Whitespace-only records are skipped like empty lines.
//   dir         a regular file anywhere below the directory.
//   voc, xml    a regular `.xml` file (annotation) anywhere below the directory.
//   coco        an element of the top-level "images" array of a COCO JSON file.

#include <string_view>

#include "absl/status/statusor.h"

namespace nereid::lc::dataset {

enum class Format { kTxt, kCsv, kJsonl, kDir, kVoc, kCoco };

// Case-insensitive; "xml" is an alias of "voc". Unknown names give an UnknownFormat error.
absl::StatusOr<Format> ParseFormat(std::string_view name);
std::string_view FormatName(Format format);

// Formats whose url names a directory (dir, voc) rather than a file.
bool IsDirectoryFormat(Format format);
// Formats counted line by line and counted incrementally when the file grows (txt, jsonl, csv).
bool IsLineFormat(Format format);

}  // namespace nereid::lc::dataset
