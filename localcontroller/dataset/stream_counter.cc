#include "localcontroller/dataset/stream_counter.h"

#include "localcontroller/dataset/errors.h"

namespace nereid::lc::dataset {
namespace {

constexpr uint8_t kBom[3] = {0xEF, 0xBB, 0xBF};

}  // namespace

StreamCounter::StreamCounter(Format format) : format_(format) {
  if (format_ == Format::kCoco) coco_.emplace();
}

void StreamCounter::Resume(const Checkpoint& checkpoint) {
  samples_ = checkpoint.samples;
  lines_.in_line = checkpoint.in_line;
  csv_.in_record = checkpoint.in_line;
  csv_.state = static_cast<CsvState>(checkpoint.csv_state & 3);
  bom_matched_ = -1;
}

void StreamCounter::Feed(const uint8_t* data, size_t size) {
  while (bom_matched_ >= 0 && size > 0) {
    if (data[0] != kBom[bom_matched_]) {
      // Not a BOM after all: the bytes matched so far are content.
      const int matched = bom_matched_;
      bom_matched_ = -1;
      FeedBody(kBom, static_cast<size_t>(matched));
      break;
    }
    ++data;
    --size;
    if (++bom_matched_ == 3) bom_matched_ = -1;
  }
  FeedBody(data, size);
}

void StreamCounter::FeedSegment(const LineSegment& segment) {
  EndBomMatch();
  samples_ += segment.Resolve(&lines_);
}

void StreamCounter::EndBomMatch() {
  const int matched = bom_matched_;
  bom_matched_ = -1;
  // What looked like the start of a BOM was content after all.
  if (matched > 0) FeedBody(kBom, static_cast<size_t>(matched));
}

void StreamCounter::FeedBody(const uint8_t* data, size_t size) {
  if (size == 0) return;
  switch (format_) {
    case Format::kCsv:
      samples_ += ScanCsv(data, size, &csv_);
      break;
    case Format::kCoco:
      coco_->Feed(data, size);
      break;
    default:
      samples_ += ScanLines(data, size, &lines_);
      break;
  }
}

absl::StatusOr<uint64_t> StreamCounter::Finish() {
  EndBomMatch();  // the stream may have ended inside what looked like a BOM
  switch (format_) {
    case Format::kCoco:
      return coco_->Finish();
    case Format::kCsv:
      if (csv_.state == CsvState::kQuoted) {
        return DatasetError(Reason::kMalformed,
                            "csv: the file ends inside a quoted field (a quote is never closed)");
      }
      return samples_ > 0 ? samples_ - 1 : 0;  // the first record is the header
    default:
      return samples_;
  }
}

void StreamCounter::SaveProgress(Checkpoint* checkpoint) const {
  checkpoint->samples = samples_;
  if (format_ == Format::kCsv) {
    checkpoint->in_line = csv_.in_record;
    checkpoint->csv_state = static_cast<uint8_t>(csv_.state);
  } else {
    checkpoint->in_line = lines_.in_line;
    checkpoint->csv_state = 0;
  }
}

}  // namespace nereid::lc::dataset
