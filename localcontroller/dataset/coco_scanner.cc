#include "localcontroller/dataset/coco_scanner.h"

#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "absl/strings/str_cat.h"
#include "localcontroller/dataset/errors.h"

namespace nereid::lc::dataset {
namespace {

bool IsJsonSpace(uint8_t b) { return b == ' ' || b == '\n' || b == '\r' || b == '\t'; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decodes the escapes of a short JSON key; non-ASCII \u escapes can't spell "images", so they
// decode to a byte that never matches.
std::string DecodeKey(const std::string& raw) {
  std::string out;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '\\' || i + 1 >= raw.size()) {
      out += raw[i];
      continue;
    }
    const char e = raw[++i];
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'u': {
        int value = 0;
        for (int k = 0; k < 4 && i + 1 < raw.size(); ++k) {
          const int h = HexValue(raw[++i]);
          value = h < 0 ? 0x10000 : value * 16 + h;
        }
        out += value < 0x80 ? static_cast<char>(value) : '\x01';
        break;
      }
      default: out += e; break;  // \" \\ \/
    }
  }
  return out;
}

// The next '"' or '\\' in [p, end), or end.
const uint8_t* FindQuoteOrBackslash(const uint8_t* p, const uint8_t* end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  for (; end - p >= 16; p += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const int mask = _mm_movemask_epi8(
        _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
    if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
  }
#endif
  for (; p < end; ++p) {
    if (*p == '"' || *p == '\\') return p;
  }
  return end;
}

// The next byte that can change the nesting: '"' '[' ']' '{' '}', or end. ('[' and ']' differ
// from '{' and '}' by 0x20, so one OR folds them.)
const uint8_t* FindStructural(const uint8_t* p, const uint8_t* end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i lower = _mm_set1_epi8(0x20);
  const __m128i open = _mm_set1_epi8('{');
  const __m128i close = _mm_set1_epi8('}');
  for (; end - p >= 16; p += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i folded = _mm_or_si128(v, lower);
    const __m128i hit = _mm_or_si128(
        _mm_cmpeq_epi8(v, quote),
        _mm_or_si128(_mm_cmpeq_epi8(folded, open), _mm_cmpeq_epi8(folded, close)));
    const int mask = _mm_movemask_epi8(hit);
    if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
  }
#endif
  for (; p < end; ++p) {
    const uint8_t b = *p;
    if (b == '"' || (b | 0x20) == '{' || (b | 0x20) == '}') return p;
  }
  return end;
}

}  // namespace

void CocoImagesCounter::Fail(std::string message) {
  if (error_.ok()) {
    error_ = DatasetError(Reason::kMalformed,
                          absl::StrCat("coco: ", message, " (at byte ", offset_, ")"));
  }
}

void CocoImagesCounter::Feed(const uint8_t* data, size_t size) {
  const uint8_t* p = data;
  const uint8_t* const end = data + size;
  while (p < end && error_.ok()) {
    if (in_string_) {
      if (escape_) {
        escape_ = false;
        if (string_is_key_ && !key_overflow_) key_ += static_cast<char>(*p);
        ++p;
        ++offset_;
        continue;
      }
      const uint8_t* stop = FindQuoteOrBackslash(p, end);
      if (string_is_key_) {
        const size_t n = stop - p;
        if (key_.size() + n > 64) {
          key_overflow_ = true;
        } else {
          key_.append(reinterpret_cast<const char*>(p), n);
        }
      }
      offset_ += stop - p;
      p = stop;
      if (p == end) break;
      if (*p == '\\') {
        escape_ = true;
        if (string_is_key_ && !key_overflow_) key_ += '\\';
      } else {
        in_string_ = false;
        if (string_is_key_) OnKeyEnd();
      }
      ++p;
      ++offset_;
      continue;
    }
    // Deeper than the top-level object and not directly inside the images array, only nesting
    // and strings matter: skip everything else in bulk.
    const size_t depth = stack_.size();
    if (depth >= 2 && depth != images_depth_) {
      const uint8_t* stop = FindStructural(p, end);
      offset_ += stop - p;
      p = stop;
      if (p == end) break;
    }
    const uint8_t b = *p++;
    if (!IsJsonSpace(b)) OnStructural(b);
    ++offset_;
  }
}

void CocoImagesCounter::OnKeyEnd() {
  string_is_key_ = false;
  expect_key_ = false;
  next_is_images_ = !key_overflow_ && DecodeKey(key_) == "images";
}

void CocoImagesCounter::OnValueStart(uint8_t b) {
  // A value starts at depth 1 (a member of the top-level object).
  if (stack_.size() == 1 && value_pending_) {
    value_pending_ = false;
    if (next_is_images_) {
      next_is_images_ = false;
      found_images_ = true;
      images_is_array_ = b == '[';
      count_ = 0;
      if (images_is_array_) {
        images_depth_ = 2;  // after this '[' is pushed
        expect_element_ = true;
      }
    }
  }
}

void CocoImagesCounter::OnStructural(uint8_t b) {
  if (finished_) {
    Fail("data after the top-level object");
    return;
  }
  if (!started_) {
    if (b != '{') {
      Fail("the top-level JSON value is not an object");
      return;
    }
    started_ = true;
  }
  // An element of the images array starts here.
  if (images_depth_ != 0 && stack_.size() == images_depth_ && expect_element_ && b != ']' &&
      b != ',') {
    ++count_;
    expect_element_ = false;
  }
  const size_t depth = stack_.size();
  if (depth == 1 && value_pending_ && b != ':') OnValueStart(b);
  switch (b) {
    case '{':
    case '[':
      if (stack_.size() >= kMaxDepth) {
        Fail("nesting too deep");
        return;
      }
      stack_.push_back(b == '[');
      if (b == '{' && stack_.size() == 1) expect_key_ = true;
      break;
    case '}':
    case ']': {
      if (stack_.empty() || stack_.back() != (b == ']')) {
        Fail(absl::StrCat("unbalanced '", std::string(1, static_cast<char>(b)), "'"));
        return;
      }
      if (images_depth_ != 0 && stack_.size() == images_depth_) images_depth_ = 0;
      stack_.pop_back();
      if (stack_.empty()) finished_ = true;
      break;
    }
    case '"':
      in_string_ = true;
      string_is_key_ = depth == 1 && expect_key_;
      if (string_is_key_) {
        key_.clear();
        key_overflow_ = false;
      }
      break;
    case ':':
      if (depth == 1) value_pending_ = true;
      break;
    case ',':
      if (depth == 1) {
        expect_key_ = true;
        next_is_images_ = false;
      } else if (images_depth_ != 0 && depth == images_depth_) {
        expect_element_ = true;
      }
      break;
    default:
      break;  // numbers, true/false/null: not validated
  }
}

absl::StatusOr<uint64_t> CocoImagesCounter::Finish() const {
  if (!error_.ok()) return error_;
  if (!started_) {
    return DatasetError(Reason::kMalformed, "coco: the file is empty, not a JSON object");
  }
  if (!finished_ || in_string_) {
    return DatasetError(Reason::kMalformed,
                        absl::StrCat("coco: truncated JSON (input ended inside ",
                                     in_string_ ? "a string" : "an object or array", " at byte ",
                                     offset_, ")"));
  }
  if (!found_images_) {
    return DatasetError(Reason::kMalformed, "coco: the top-level object has no \"images\" key");
  }
  if (!images_is_array_) {
    return DatasetError(Reason::kMalformed, "coco: \"images\" is not an array");
  }
  return count_;
}

}  // namespace nereid::lc::dataset
