// s3:// datasets through SampleCounter with an in-memory S3Client: what is counted, what a rescan
// of an unchanged object costs (one HEAD), and how store errors become dataset reasons.

#include "localcontroller/dataset/s3_source.h"

#include <catch2/catch.hpp>

#include <memory>

#include "localcontroller/dataset/errors.h"
#include "localcontroller/dataset/sample_counter.h"
#include "tests/localcontroller/s3/fake_s3_client.h"

namespace nereid::lc::dataset {
namespace {

using s3::testing::FakeS3Client;

struct Fixture {
  Fixture() {
    store = std::make_shared<FakeS3Client>();
    CounterOptions options;
    options.s3 = store;
    counter = std::make_unique<SampleCounter>(options);
    credential = s3::Credential{"minio:9000", false, "AKID", "SECRETVALUE"};
  }
  absl::StatusOr<CountResult> Count(const std::string& url, const std::string& format,
                                    const Checkpoint* previous = nullptr,
                                    bool with_credential = true) {
    CountRequest request;
    request.url = url;
    request.format = format;
    request.previous = previous;
    request.s3_credential = with_credential ? &credential : nullptr;
    return counter->Count(request);
  }
  std::string Reason(const std::string& url, const std::string& format) {
    absl::StatusOr<CountResult> result = Count(url, format);
    if (result.ok()) return "OK";
    CHECK(std::string(result.status().message()).find("SECRETVALUE") == std::string::npos);
    return ReasonOf(result.status());
  }

  std::shared_ptr<FakeS3Client> store;
  std::unique_ptr<SampleCounter> counter;
  s3::Credential credential;
};

TEST_CASE("txt, csv and jsonl objects are streamed through the file counters") {
  Fixture f;
  f.store->PutObject("data", "train.txt", "one\ntwo\n\n  \nthree");
  f.store->PutObject("data", "table.csv", "a,b\n1,\"x\ny\"\n2,z\n");
  f.store->PutObject("data", "rows.jsonl", "{}\n{}\n");
  f.store->PutObject("data", "c.json", R"({"images":[{"id":1},{"id":2}],"annotations":[]})");
  auto txt = f.Count("s3://data/train.txt", "txt");
  REQUIRE(txt.ok());
  CHECK(txt->count == 3);
  CHECK(txt->source == "s3://data/train.txt");
  CHECK(txt->bytes_read == 17);
  CHECK(f.Count("s3://data/table.csv", "csv")->count == 2);
  CHECK(f.Count("s3://data/rows.jsonl", "jsonl")->count == 2);
  CHECK(f.Count("s3://data/c.json", "coco")->count == 2);
  CHECK(f.store->heads == 0);  // no checkpoint yet: straight to GET
}

TEST_CASE("an unchanged object costs one HEAD; a replaced one is counted again") {
  Fixture f;
  f.store->PutObject("data", "train.txt", "a\nb\n");
  auto first = f.Count("s3://data/train.txt", "txt");
  REQUIRE(first.ok());
  CHECK(first->checkpoint.etag != "");
  CHECK(first->checkpoint.size == 4);

  auto again = f.Count("s3://data/train.txt", "txt", &first->checkpoint);
  REQUIRE(again.ok());
  CHECK(again->count == 2);
  CHECK(again->bytes_read == 0);
  CHECK(again->incremental);
  CHECK(f.store->heads == 1);
  CHECK(f.store->gets == 1);

  f.store->PutObject("data", "train.txt", "a\nb\nc\n");
  auto replaced = f.Count("s3://data/train.txt", "txt", &again->checkpoint);
  REQUIRE(replaced.ok());
  CHECK(replaced->count == 3);
  CHECK_FALSE(replaced->incremental);
  CHECK(f.store->gets == 2);

  // A checkpoint of another url or format is not trusted.
  Checkpoint other = replaced->checkpoint;
  other.source = "s3://data/else.txt";
  REQUIRE(f.Count("s3://data/train.txt", "txt", &other).ok());
  CHECK(f.store->gets == 3);
}

TEST_CASE("dir and voc count the objects under the prefix, page by page") {
  Fixture f;
  for (const char* key : {"set/a.jpg", "set/b.jpg", "set/sub/", "set/sub/c.XML", "set/d.xml",
                          "setting/x.jpg", "other/y.jpg"}) {
    f.store->PutObject("data", key, "x");
  }
  CHECK(f.Count("s3://data/set", "dir")->count == 4);  // not "setting/", not the folder marker
  CHECK(f.Count("s3://data/set/", "voc")->count == 2);
  CHECK(f.store->lists >= 3);  // pages of two keys
  CHECK(f.Reason("s3://data/empty", "dir") == "PathNotFound");
  CHECK(f.Count("s3://data", "dir")->count == 6);
}

TEST_CASE("store errors become dataset reasons") {
  Fixture f;
  f.store->PutObject("data", "train.txt", "a\n");
  CHECK(f.Reason("s3://data/missing.txt", "txt") == "PathNotFound");
  CHECK(f.Reason("s3://nobucket/train.txt", "txt") == "PathNotFound");
  CHECK(f.Reason("s3://data/", "txt") == "NotAFile");
  CHECK(f.Reason("s3:///train.txt", "txt") == "InvalidURL");

  auto missing = f.Count("s3://data/train.txt", "txt", nullptr, /*with_credential=*/false);
  CHECK(ReasonOf(missing.status()) == "CredentialMissing");
  CHECK(std::string(missing.status().message()).find("credentialName") != std::string::npos);

  f.store->RequireAccessKey("OTHER");
  CHECK(f.Reason("s3://data/train.txt", "txt") == "PermissionDenied");
  f.store->RequireAccessKey("");
  f.store->FailWith(absl::UnavailableError("endpoint unreachable"));
  CHECK(f.Reason("s3://data/train.txt", "txt") == "DownloadFailed");
  f.store->FailWith(absl::DeadlineExceededError("slow"));
  CHECK(f.Reason("s3://data/train.txt", "txt") == "Timeout");
  f.store->FailWith(absl::ResourceExhaustedError("big"));
  CHECK(f.Reason("s3://data/train.txt", "txt") == "DownloadTooLarge");
}

TEST_CASE("without an S3 client s3 urls stay Unsupported") {
  SampleCounter counter{CounterOptions{}};
  CountRequest request;
  request.url = "s3://data/train.txt";
  request.format = "txt";
  CHECK(ReasonOf(counter.Count(request).status()) == "Unsupported");
}

}  // namespace
}  // namespace nereid::lc::dataset
