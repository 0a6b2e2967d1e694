#include "localcontroller/s3/s3_xml.h"

#include <catch2/catch.hpp>

namespace nereid::lc::s3 {
namespace {

TEST_CASE("ParseListObjectsV2 reads keys, sizes, ETags and the continuation token") {
  auto page = ParseListObjectsV2(R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name>
<Prefix>d/</Prefix><KeyCount>2</KeyCount><IsTruncated>true</IsTruncated>
<NextContinuationToken>tok/1=</NextContinuationToken>
<Contents><Key>d/a &amp; b.xml</Key><ETag>&quot;abc&quot;</ETag><Size>12</Size></Contents>
<Contents><Key>d/&#233;t&#xE9;.txt</Key><ETag>"def"</ETag><Size>0</Size></Contents>
</ListBucketResult>)");
  REQUIRE(page.ok());
  REQUIRE(page->objects.size() == 2);
  CHECK(page->objects[0] == ListedObject{"d/a & b.xml", 12, "\"abc\""});
  CHECK(page->objects[1].key == "d/\xc3\xa9t\xc3\xa9.txt");
  CHECK(page->truncated);
  CHECK(page->next_continuation_token == "tok/1=");
}

TEST_CASE("ParseListObjectsV2 refuses what is not a listing") {
  CHECK_FALSE(ParseListObjectsV2("<Error><Code>AccessDenied</Code></Error>").ok());
  CHECK_FALSE(ParseListObjectsV2(
                  "<ListBucketResult><Contents><Key>k</Key><Size>x</Size></Contents>"
                  "</ListBucketResult>")
                  .ok());
  // Truncated without a token would loop forever.
  CHECK_FALSE(ParseListObjectsV2("<ListBucketResult><IsTruncated>true</IsTruncated>"
                                 "</ListBucketResult>")
                  .ok());
  auto empty = ParseListObjectsV2("<ListBucketResult><KeyCount>0</KeyCount></ListBucketResult>");
  REQUIRE(empty.ok());
  CHECK(empty->objects.empty());
}

TEST_CASE("ParseErrorBody") {
  const S3ErrorBody error = ParseErrorBody(
      "<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code><Message>The key &lt;k&gt; does not "
      "exist.</Message></Error>");
  CHECK(error.code == "NoSuchKey");
  CHECK(error.message == "The key <k> does not exist.");
  CHECK(ParseErrorBody("").code.empty());
  CHECK(XmlUnescape("a&unknown;b&amp") == "a&unknown;b&amp");
}

}  // namespace
}  // namespace nereid::lc::s3
