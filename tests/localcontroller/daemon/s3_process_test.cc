// The real localcontroller binary, fed over mTLS by the GM's edge hub, counting and verifying
// objects in a real S3 server (s3rver behind a SigV4-checking wrapper): an s3 txt Dataset is
// counted, re-counted when the object is replaced (and only then: an unchanged object costs one
// HEAD per period), reports PathNotFound with its last good count kept when the key is removed; a
// Model is verified by sha256; and the credential never shows in logs, REST answers or, once its
// objects are gone, in the database file.

#include <sys/stat.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "httplib.h"
#include "localcontroller/model/model_verifier.h"
#include "localcontroller/s3/curl_s3_client.h"
#include "nlohmann/json.hpp"
#include "tests/localcontroller/daemon/test_gm.h"
#include "tests/localcontroller/dataset/temp_dir.h"
#include "tests/support/s3_server.h"
#include "tests/fakes/eventually.h"
#include "tests/support/subprocess.h"

namespace nereid::lc {
namespace {

namespace v1 = edge::v1;
using ::nereid::lc::dataset::testing::TempDir;
using ::nereid::lc::testing::DatasetCount;
using ::nereid::lc::testing::DatasetResource;
using ::nereid::fakes::Eventually;
using ::nereid::lc::testing::Gm;
using ::nereid::lc::testing::kDaemonWait;
using ::nereid::lc::testing::ModelResource;
using ::nereid::lc::testing::TestCerts;
using ::nereid::testing::ListenUrl;
using ::nereid::testing::S3Server;
using ::nereid::testing::Subprocess;
using Json = nlohmann::json;

// The s3rver account's secret is "S3RVER"; the LC is given it only inside S3Credential messages.
constexpr char kSecret[] = "S3RVER";
constexpr char kWrongSecret[] = "wrong-secret-0123456789";

void SetCredential(v1::S3Credential* credential, const std::string& endpoint,
                   const std::string& secret) {
  credential->set_endpoint(endpoint);
  credential->set_use_https(false);
  credential->set_access_key_id(S3Server::kAccessKeyId);
  credential->set_secret_access_key(secret);
}

// A number from the Prometheus text of /metrics (first sample of `name` with `labels`).
double Metric(const std::string& text, const std::string& name, const std::string& labels = "") {
  const std::string key = labels.empty() ? name + " " : name + "{" + labels + "} ";
  const size_t at = text.find("\n" + key);
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + 1 + key.size()));
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_CASE("s3 datasets and models on the real LC with a real S3 server", "[lc][s3][process]") {
  TempDir dir;
  S3Server::Options s3_options;
  s3_options.data_dir = dir.Path("s3");
  s3_options.buckets = {"data"};
  auto started = S3Server::Start(s3_options);
  INFO(started.status());
  REQUIRE(started.ok());
  S3Server& s3 = **started;
  const s3::Credential credential{s3.endpoint(), false, S3Server::kAccessKeyId, kSecret};
  s3::CurlS3Client store(s3::CurlS3Options{});
  REQUIRE(store.Put(credential, {"data", "sets/train.txt"}, "a\nb\nc\n").ok());
  const std::string model_bytes = "model weights\n";
  REQUIRE(store.Put(credential, {"data", "models/m.pb"}, model_bytes).ok());

  Gm gm;
  Subprocess::Options options;
  options.argv = {NEREID_LC_BINARY, "--node", "edge-a", "--gm", gm.address(),
                  "--db", dir.Path("state/lc.db"), "--host-root", dir.Path("root"),
                  "--listen", "127.0.0.1:0", "--scan-period", "1s", "--log-level", "debug",
                  "--tls-ca", TestCerts().ca, "--tls-cert", TestCerts().NodeCert("edge-a"),
                  "--tls-key", TestCerts().NodeKey("edge-a")};
  options.capture_stderr = true;
  auto lc = Subprocess::Start(std::move(options));
  REQUIRE(lc.ok());
  absl::StatusOr<std::string> line = (*lc)->ReadLine(absl::Seconds(20));
  REQUIRE(line.ok());
  httplib::Client rest(ListenUrl(*line));
  rest.set_read_timeout(10, 0);
  auto get = [&](const std::string& path) {
    httplib::Result result = rest.Get(path.c_str());
    REQUIRE(result);
    REQUIRE(result->status == 200);
    return result->body;
  };

  v1::Resource dataset = DatasetResource("s3set", "1", "s3://data/sets/train.txt");
  dataset.mutable_dataset()->set_credential_name("s3-secret");
  SetCredential(dataset.mutable_dataset()->mutable_s3_credential(), s3.endpoint(), kSecret);
  REQUIRE(gm.hub->Upsert("edge-a", dataset).ok());
  gm.hub->MarkSynced();
  REQUIRE(gm.handler.WaitFor(DatasetCount("s3set", 3)).has_value());

  SECTION("unchanged: one HEAD per period, no download") {
    // Let the first poll after the count pass, then measure three periods.
    const std::string before = get("/metrics");
    const double requests0 = Metric(before, "nereid_lc_s3_requests_total");
    const double received0 = Metric(before, "nereid_lc_s3_bytes_total", "direction=\"received\"");
    const double sent0 = Metric(before, "nereid_lc_s3_bytes_total", "direction=\"sent\"");
    const double scanned0 = Metric(before, "nereid_lc_dataset_scan_bytes_total");
    REQUIRE(requests0 >= 1);
    std::string after;
    REQUIRE(Eventually(
        [&] {
          after = get("/metrics");
          return Metric(after, "nereid_lc_s3_requests_total") >= requests0 + 3;
        },
        absl::Seconds(30)));
    const double polls = Metric(after, "nereid_lc_s3_requests_total") - requests0;
    const double received =
        Metric(after, "nereid_lc_s3_bytes_total", "direction=\"received\"") - received0;
    const double sent = Metric(after, "nereid_lc_s3_bytes_total", "direction=\"sent\"") - sent0;
    std::printf("S3 recount cost with nothing changed: %.0f requests, %.0f bytes received and "
                "%.0f sent per poll\n",
                polls, received / polls, sent / polls);
    CHECK(Metric(after, "nereid_lc_dataset_scan_bytes_total") == scanned0);  // no body read
    CHECK(received / polls < 1024);  // headers of a HEAD answer, no body
    CHECK(gm.handler.Count(DatasetCount("s3set", 3)) == 1);
  }

  SECTION("replaced, then removed: recounted, then PathNotFound with the last count kept") {
    REQUIRE(store.Put(credential, {"data", "sets/train.txt"}, "a\nb\nc\nd\ne\n").ok());
    REQUIRE(gm.handler.WaitFor(DatasetCount("s3set", 5)).has_value());
    REQUIRE(store.Delete(credential, {"data", "sets/train.txt"}).ok());
    auto missing = gm.handler.WaitFor([](const v1::StatusReport& r) {
      return r.has_dataset() && r.ref().name() == "s3set" &&
             r.dataset().error_reason() == "PathNotFound";
    });
    REQUIRE(missing.has_value());
    CHECK(missing->dataset().error_message().find("s3://data/sets/train.txt") != std::string::npos);
    const Json shown = Json::parse(get("/api/v1/datasets/default/s3set"));
    CHECK(shown["status"]["numberOfSamples"] == 5);
    CHECK(shown["status"]["stale"] == true);
    CHECK(shown["status"]["errorReason"] == "PathNotFound");
    CHECK(shown["spec"]["credentialName"] == "s3-secret");
    CHECK(shown["spec"]["credentialReceived"] == true);
  }

  SECTION("a model verified by sha256, a wrong credential refused, nothing leaks") {
    v1::Resource model = ModelResource("s3model", "s3://data/models/m.pb",
                                       model::Sha256Hex(model_bytes));
    model.mutable_model()->set_credential_name("s3-secret");
    SetCredential(model.mutable_model()->mutable_s3_credential(), s3.endpoint(), kSecret);
    REQUIRE(gm.hub->Upsert("edge-a", model).ok());
    auto verified = gm.handler.WaitFor([](const v1::StatusReport& r) {
      return r.has_model() && r.ref().name() == "s3model" && r.model().verified();
    });
    REQUIRE(verified.has_value());
    CHECK(verified->model().sha256() == model::Sha256Hex(model_bytes));

    v1::Resource denied = DatasetResource("denied", "1", "s3://data/sets/train.txt");
    SetCredential(denied.mutable_dataset()->mutable_s3_credential(), s3.endpoint(), kWrongSecret);
    REQUIRE(gm.hub->Upsert("edge-a", denied).ok());
    auto refused = gm.handler.WaitFor([](const v1::StatusReport& r) {
      return r.has_dataset() && r.ref().name() == "denied" &&
             r.dataset().error_reason() == "PermissionDenied";
    });
    REQUIRE(refused.has_value());
    CHECK(refused->dataset().error_message().find("SignatureDoesNotMatch") != std::string::npos);

    v1::Resource no_credential = DatasetResource("nocred", "1", "s3://data/sets/train.txt");
    REQUIRE(gm.hub->Upsert("edge-a", no_credential).ok());
    REQUIRE(gm.handler.WaitFor([](const v1::StatusReport& r) {
      return r.has_dataset() && r.ref().name() == "nocred" &&
             r.dataset().error_reason() == "CredentialMissing";
    }).has_value());

    // Nothing the LC shows or logs holds a secret.
    const std::string rest_text = get("/api/v1/datasets") + get("/api/v1/models") +
                                  get("/api/v1/status") + get("/metrics");
    CHECK(rest_text.find(kSecret) == std::string::npos);
    CHECK(rest_text.find(kWrongSecret) == std::string::npos);
    CHECK(rest_text.find("s3-secret") != std::string::npos);  // the Secret's name is fine

    // The database is owner-only.
    struct stat st;
    REQUIRE(::stat(dir.Path("state/lc.db").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    if (::stat(dir.Path("state/lc.db-wal").c_str(), &st) == 0) CHECK((st.st_mode & 0777) == 0600);

    // Once no object holds a credential any more, the database file holds none either.
    for (const char* name : {"s3set", "denied"}) {
      v1::ObjectRef ref;
      ref.set_kind("Dataset");
      ref.set_namespace_("default");
      ref.set_name(name);
      ref.set_uid(std::string("uid-") + name);
      REQUIRE(gm.hub->Remove("edge-a", ref).ok());
    }
    v1::ObjectRef model_ref = model.ref();
    REQUIRE(gm.hub->Remove("edge-a", model_ref).ok());
    REQUIRE(Eventually([&] {
      return Json::parse(get("/api/v1/status"))["objects"] == 1;  // only "nocred" is left
    }, kDaemonWait));
    REQUIRE((*lc)->Stop(absl::Seconds(10)).ok());  // SQLite checkpoints and removes the WAL
    const std::string db_bytes = ReadFile(dir.Path("state/lc.db")) +
                                 ReadFile(dir.Path("state/lc.db-wal"));
    CHECK(db_bytes.find(kWrongSecret) == std::string::npos);
    CHECK(db_bytes.find(kSecret) == std::string::npos);
  }

  if ((*lc)->Running()) REQUIRE((*lc)->Stop(absl::Seconds(10)).ok());
  const std::string logs = (*lc)->Stdout() + (*lc)->Stderr();
  CHECK(logs.find("s3set") != std::string::npos);  // the logs were captured
  CHECK(logs.find(kSecret) == std::string::npos);
  CHECK(logs.find(kWrongSecret) == std::string::npos);
}

}  // namespace
}  // namespace nereid::lc
