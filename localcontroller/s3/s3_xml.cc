#include "localcontroller/s3/s3_xml.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/strings/absl_compat.h"

namespace nereid::lc::s3 {
namespace {

// The text between <tag> and </tag> at or after *pos within [.., end); advances *pos past it.
bool NextElement(std::string_view xml, std::string_view tag, size_t* pos, size_t end,
                 std::string_view* inner) {
  const std::string open = absl::StrCat("<", ToAbsl(tag), ">");
  const std::string close = absl::StrCat("</", ToAbsl(tag), ">");
  const size_t start = xml.find(open, *pos);
  if (start == std::string_view::npos || start >= end) return false;
  const size_t body = start + open.size();
  const size_t stop = xml.find(close, body);
  if (stop == std::string_view::npos || stop > end) return false;
  *inner = xml.substr(body, stop - body);
  *pos = stop + close.size();
  return true;
}

std::string Field(std::string_view xml, std::string_view tag) {
  size_t pos = 0;
  std::string_view inner;
  return NextElement(xml, tag, &pos, xml.size(), &inner) ? XmlUnescape(inner) : std::string();
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace

std::string XmlUnescape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '&') {
      out.push_back(text[i]);
      continue;
    }
    const size_t semi = text.find(';', i);
    if (semi == std::string_view::npos || semi - i > 10) {
      out.push_back('&');
      continue;
    }
    const std::string_view entity = text.substr(i + 1, semi - i - 1);
    uint32_t cp = 0;
    if (entity == "amp") {
      out.push_back('&');
    } else if (entity == "lt") {
      out.push_back('<');
    } else if (entity == "gt") {
      out.push_back('>');
    } else if (entity == "quot") {
      out.push_back('"');
    } else if (entity == "apos") {
      out.push_back('\'');
    } else if (entity.size() > 2 && entity[0] == '#' && (entity[1] == 'x' || entity[1] == 'X') &&
               absl::SimpleHexAtoi(ToAbsl(entity.substr(2)), &cp)) {
      AppendUtf8(cp, &out);
    } else if (entity.size() > 1 && entity[0] == '#' &&
               absl::SimpleAtoi(ToAbsl(entity.substr(1)), &cp)) {
      AppendUtf8(cp, &out);
    } else {
      out.push_back('&');
      continue;
    }
    i = semi;
  }
  return out;
}

absl::StatusOr<ListPage> ParseListObjectsV2(std::string_view xml) {
  if (xml.find("<ListBucketResult") == std::string_view::npos) {
    return absl::DataLossError("the ListObjectsV2 response is not a ListBucketResult document");
  }
  ListPage page;
  page.truncated = Field(xml, "IsTruncated") == "true";
  page.next_continuation_token = Field(xml, "NextContinuationToken");
  size_t pos = 0;
  std::string_view contents;
  while (NextElement(xml, "Contents", &pos, xml.size(), &contents)) {
    ListedObject object;
    object.key = Field(contents, "Key");
    object.etag = Field(contents, "ETag");
    if (!absl::SimpleAtoi(Field(contents, "Size"), &object.size)) {
      return absl::DataLossError(
          absl::StrCat("ListObjectsV2: object ", object.key, " has no valid Size"));
    }
    page.objects.push_back(std::move(object));
  }
  if (page.truncated && page.next_continuation_token.empty()) {
    return absl::DataLossError("ListObjectsV2: truncated page without NextContinuationToken");
  }
  return page;
}

S3ErrorBody ParseErrorBody(std::string_view xml) {
  S3ErrorBody error;
  if (xml.find("<Error>") == std::string_view::npos) return error;
  error.code = Field(xml, "Code");
  error.message = Field(xml, "Message");
  return error;
}

}  // namespace nereid::lc::s3
