#pragma once

// Counts the samples of a file-format dataset (txt, jsonl, csv, coco) from bytes fed in chunks of
// any size: the one place that knows what a sample is for each file format, shared by local files
// (mapped windows) and http bodies (network chunks). A UTF-8 byte order mark at the very start of
// the stream is skipped, so a BOM does not make an otherwise empty first line count.
//
// Feed() never allocates for line formats, so it may run under the SIGBUS guard of file_reader.h.

#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "localcontroller/dataset/checkpoint.h"
#include "localcontroller/dataset/coco_scanner.h"
#include "localcontroller/dataset/format.h"
#include "localcontroller/dataset/line_scan.h"
#include "localcontroller/dataset/line_segment.h"

namespace nereid::lc::dataset {

class StreamCounter {
 public:
  // `format` must be a file format (not dir/voc).
  explicit StreamCounter(Format format);

  // Continues from a checkpoint of a line format instead of the start of the file.
  void Resume(const Checkpoint& checkpoint);

  void Feed(const uint8_t* data, size_t size);

  // Continues with a segment counted elsewhere (txt/jsonl only): as if its bytes had been fed here.
  // At least 3 bytes must have been fed before it, so a byte order mark is settled.
  void FeedSegment(const LineSegment& segment);

  // At end of input: the count to report (csv without its header), or Malformed.
  absl::StatusOr<uint64_t> Finish();

  // Writes the line-format progress (samples, in_line, csv_state) into `checkpoint`.
  void SaveProgress(Checkpoint* checkpoint) const;

 private:
  void FeedBody(const uint8_t* data, size_t size);
  // Past the start of the stream: bytes held back as a possible BOM are fed as content.
  void EndBomMatch();

  Format format_;
  uint64_t samples_ = 0;
  LineScanState lines_;
  CsvScanState csv_;
  std::optional<CocoImagesCounter> coco_;
  // Bytes of a possible BOM matched so far; -1 once past the start of the stream.
  int bom_matched_ = 0;
};

}  // namespace nereid::lc::dataset
