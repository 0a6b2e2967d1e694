#include "localcontroller/dataset/format.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/strings/absl_compat.h"
#include "localcontroller/dataset/errors.h"

namespace nereid::lc::dataset {

absl::StatusOr<Format> ParseFormat(std::string_view name) {
  std::string lower = absl::AsciiStrToLower(ToAbsl(name));
  if (lower == "txt") return Format::kTxt;
  if (lower == "csv") return Format::kCsv;
  if (lower == "jsonl") return Format::kJsonl;
  if (lower == "dir") return Format::kDir;
  if (lower == "voc" || lower == "xml") return Format::kVoc;
  if (lower == "coco") return Format::kCoco;
  return DatasetError(Reason::kUnknownFormat,
                      absl::StrCat("dataset format \"", ToAbsl(name),
                                   "\" is not supported (txt, csv, jsonl, dir, voc, xml, coco)"));
}

std::string_view FormatName(Format format) {
  switch (format) {
    case Format::kTxt: return "txt";
    case Format::kCsv: return "csv";
    case Format::kJsonl: return "jsonl";
    case Format::kDir: return "dir";
    case Format::kVoc: return "voc";
    case Format::kCoco: return "coco";
  }
  return "txt";
}

bool IsDirectoryFormat(Format format) { return format == Format::kDir || format == Format::kVoc; }

bool IsLineFormat(Format format) {
  return format == Format::kTxt || format == Format::kJsonl || format == Format::kCsv;
}

}  // namespace nereid::lc::dataset
