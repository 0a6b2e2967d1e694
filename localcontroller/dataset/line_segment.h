#pragma once

// Counts the samples of a txt/jsonl segment whose starting state is not known yet, so that two
// threads can count the two halves of a large file at once: the second half is fed here while the
// first half is still being counted, and the state at the boundary settles it afterwards.
//
// The only thing the unknown state changes is whether the content before the segment's first line
// end starts a sample (it does unless the line already had content before the boundary). So the
// segment is counted as if that line had already been counted, and whether its head has content is
// kept aside; Resolve() adds the one sample back when the state at the boundary calls for it.
//
// Feed() never allocates, so it may run under the SIGBUS guard of file_reader.h.

#include <cstddef>
#include <cstdint>

#include "localcontroller/dataset/line_scan.h"

namespace nereid::lc::dataset {

class LineSegment {
 public:
  void Feed(const uint8_t* data, size_t size);

  // The samples that start in the segment when `*state` is the state at its start; `*state`
  // becomes the state at its end.
  uint64_t Resolve(LineScanState* state) const;

 private:
  bool saw_line_end_ = false;
  bool head_has_content_ = false;  // content before the first line end
  LineScanState head_;             // scans the head alone, from "no content yet"
  LineScanState rest_{.in_line = true};
  uint64_t rest_samples_ = 0;
};

}  // namespace nereid::lc::dataset
