#include "common/kube/json_stream.h"

#include "absl/strings/str_cat.h"

namespace nereid::kube {

absl::Status JsonStreamFramer::Feed(std::string_view data, std::vector<std::string>* out) {
  if (!failed_.ok()) return failed_;
  size_t start = 0;  // Start of the unconsumed part of the current document within `data`.
  for (size_t i = 0; i < data.size(); ++i) {
    const char c = data[i];
    if (depth_ == 0) {
      if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
      if (c != '{') {
        failed_ = absl::DataLossError(absl::StrCat(
            "watch stream: expected a JSON object, got byte 0x",
            absl::Hex(static_cast<unsigned char>(c), absl::kZeroPad2)));
        return failed_;
      }
      start = i;
      depth_ = 1;
      continue;
    }
    if (in_string_) {
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
      } else if (c == '"') {
        in_string_ = false;
      }
      continue;
    }
    if (c == '"') {
      in_string_ = true;
    } else if (c == '{' || c == '[') {
      ++depth_;
    } else if (c == '}' || c == ']') {
      if (--depth_ == 0) {
        const size_t length = i + 1 - start;
        if (buffer_.size() + length > max_document_bytes_) {
          failed_ = absl::ResourceExhaustedError(absl::StrCat(
              "watch stream: event larger than ", max_document_bytes_, " bytes"));
          return failed_;
        }
        buffer_.append(data.substr(start, length));
        out->push_back(std::move(buffer_));
        buffer_.clear();
      }
    }
  }
  if (depth_ > 0) {
    const size_t length = data.size() - start;
    if (buffer_.size() + length > max_document_bytes_) {
      failed_ = absl::ResourceExhaustedError(absl::StrCat(
          "watch stream: event larger than ", max_document_bytes_, " bytes"));
      return failed_;
    }
    buffer_.append(data.substr(start, length));
  }
  return absl::OkStatus();
}

}  // namespace nereid::kube
