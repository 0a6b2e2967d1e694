#pragma once

// Counts the elements of the top-level "images" array of a COCO annotation file, streaming: bytes
// arrive in chunks of any size and memory stays constant (a nesting stack and a 64-byte key buffer),
// so a 1 GiB annotation file is never loaded into a DOM.
//
// It tracks JSON structure (objects, arrays, strings with escapes) without validating numbers or
// literals: brackets inside strings, escaped quotes, and "images" keys of nested objects are all
// ignored; only a key of the top-level object counts. If the top-level object has "images" more
// than once, the last one wins (as Python's json, which pycocotools uses). Structural errors
// (unbalanced brackets, truncated file, top level not an object, no "images" array) are Malformed.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace nereid::lc::dataset {

class CocoImagesCounter {
 public:
  // Nesting deeper than this is reported as Malformed rather than growing the stack.
  static constexpr size_t kMaxDepth = 10000;

  void Feed(const uint8_t* data, size_t size);
  // Call at end of input: the number of images, or why the input is not a COCO file.
  absl::StatusOr<uint64_t> Finish() const;

 private:
  void Fail(std::string message);
  void OnStructural(uint8_t b);
  void OnValueStart(uint8_t b);
  void OnKeyEnd();

  std::vector<bool> stack_;  // true: array, false: object
  uint64_t offset_ = 0;      // bytes consumed, for error messages
  bool started_ = false;     // the top-level value has begun
  bool finished_ = false;    // the top-level object has closed

  bool in_string_ = false;
  bool escape_ = false;
  bool string_is_key_ = false;
  // Inside the top-level object.
  bool expect_key_ = false;       // the next string there is a key
  bool next_is_images_ = false;   // the value being waited for belongs to "images"
  bool value_pending_ = false;    // after ':' at depth 1, no value byte yet
  std::string key_;               // raw bytes of the current top-level key (at most 64)
  bool key_overflow_ = false;
  // The "images" array.
  bool found_images_ = false;
  bool images_is_array_ = false;
  size_t images_depth_ = 0;       // stack size while directly inside it; 0 when not inside
  bool expect_element_ = false;
  uint64_t count_ = 0;

  absl::Status error_;
};

}  // namespace nereid::lc::dataset
