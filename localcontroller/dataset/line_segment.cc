#include "localcontroller/dataset/line_segment.h"

#include <cstring>

namespace nereid::lc::dataset {

void LineSegment::Feed(const uint8_t* data, size_t size) {
  if (!saw_line_end_) {
    const auto* line_end = static_cast<const uint8_t*>(std::memchr(data, '\n', size));
    const size_t head = line_end == nullptr ? size : static_cast<size_t>(line_end - data);
    if (!head_has_content_) head_has_content_ = ScanLines(data, head, &head_) > 0;
    saw_line_end_ = line_end != nullptr;
  }
  rest_samples_ += ScanLines(data, size, &rest_);
}

uint64_t LineSegment::Resolve(LineScanState* state) const {
  const bool head_starts_sample = !state->in_line && head_has_content_;
  state->in_line = saw_line_end_ ? rest_.in_line : state->in_line || head_has_content_;
  return rest_samples_ + (head_starts_sample ? 1 : 0);
}

}  // namespace nereid::lc::dataset
