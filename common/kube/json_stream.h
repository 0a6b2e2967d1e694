#pragma once

// Splits a byte stream of concatenated JSON objects into whole documents. The API server writes a
// watch as one JSON event per line, but HTTP chunks split events anywhere and may carry several;
// the framer tracks object nesting (and strings, so braces inside values do not count) instead of
// trusting line breaks, and refuses documents larger than a bound instead of buffering forever.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace nereid::kube {

class JsonStreamFramer {
 public:
  explicit JsonStreamFramer(size_t max_document_bytes) : max_document_bytes_(max_document_bytes) {}

  // Consumes `data`; every document completed by it is appended to `out`. Whitespace between
  // documents is skipped. Returns an error (and the framer stays failed) when a document exceeds
  // the bound or something other than a JSON object appears between documents.
  absl::Status Feed(std::string_view data, std::vector<std::string>* out);

  // Whether a document has started but not ended (the stream was cut mid-event).
  bool has_partial() const { return depth_ > 0; }

 private:
  const size_t max_document_bytes_;
  std::string buffer_;
  int depth_ = 0;
  bool in_string_ = false;
  bool escaped_ = false;
  absl::Status failed_;
};

}  // namespace nereid::kube
