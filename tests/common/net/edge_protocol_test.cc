#include "common/net/edge_protocol.h"

#include <catch2/catch.hpp>

#include <string>

namespace nereid {
namespace {

namespace v1 = edge::v1;

v1::Resource Dataset() {
  v1::Resource r;
  r.mutable_ref()->set_kind("Dataset");
  r.mutable_ref()->set_namespace_("default");
  r.mutable_ref()->set_name("ds1");
  r.mutable_ref()->set_uid("u1");
  r.set_version("7");
  r.mutable_dataset()->set_url("/data/a.txt");
  r.mutable_dataset()->set_format("txt");
  return r;
}

TEST_CASE("object keys and ref strings", "[net][protocol]") {
  v1::Resource r = Dataset();
  CHECK(net::ObjectKey(r.ref()) == "Dataset/default/ds1");
  CHECK(net::RefString(r.ref()) == "Dataset default/ds1");
}

TEST_CASE("resources are validated structurally", "[net][protocol]") {
  v1::Resource r = Dataset();
  CHECK(net::ValidateResource(r).ok());

  SECTION("kind must match the spec") {
    r.mutable_ref()->set_kind("Model");
    absl::Status status = net::ValidateResource(r);
    CHECK(absl::IsInvalidArgument(status));
    CHECK(std::string(status.message()).find("carries a Dataset spec") != std::string::npos);
  }
  SECTION("spec required") {
    r.clear_dataset();
    CHECK(absl::IsInvalidArgument(net::ValidateResource(r)));
  }
  SECTION("version required") {
    r.clear_version();
    CHECK(absl::IsInvalidArgument(net::ValidateResource(r)));
  }
  SECTION("name and namespace required") {
    r.mutable_ref()->clear_name();
    CHECK(absl::IsInvalidArgument(net::ValidateResource(r)));
    r = Dataset();
    r.mutable_ref()->clear_namespace_();
    CHECK(absl::IsInvalidArgument(net::ValidateResource(r)));
  }
  SECTION("every spec case has a kind") {
    v1::Resource w;
    w.mutable_worker();
    CHECK(net::KindForSpec(w.spec_case()) == "Worker");
    w.mutable_incremental_learning_job();
    CHECK(net::KindForSpec(w.spec_case()) == "IncrementalLearningJob");
    w.mutable_video_analytics_job();
    CHECK(net::KindForSpec(w.spec_case()) == "VideoAnalyticsJob");
    w.mutable_reid_job();
    CHECK(net::KindForSpec(w.spec_case()) == "ReidJob");
    w.mutable_feature_extraction_service();
    CHECK(net::KindForSpec(w.spec_case()) == "FeatureExtractionService");
  }
}

TEST_CASE("multi-edge inference objects on the link", "[net][protocol]") {
  v1::Resource r;
  r.mutable_ref()->set_namespace_("default");
  r.mutable_ref()->set_uid("u1");
  r.set_version("3-abcdef01");

  SECTION("VideoAnalyticsJob and ReidJob carry an InferenceJobSpec of their own kind") {
    r.mutable_ref()->set_kind(std::string(net::kKindVideoAnalyticsJob));
    r.mutable_ref()->set_name("va");
    r.mutable_video_analytics_job()->set_worker_type("videoanalytics");
    CHECK(net::ValidateResource(r).ok());
    r.mutable_ref()->set_kind(std::string(net::kKindReidJob));
    absl::Status status = net::ValidateResource(r);
    CHECK(absl::IsInvalidArgument(status));
    CHECK(std::string(status.message()).find("carries a VideoAnalyticsJob spec") !=
          std::string::npos);
    r.mutable_reid_job()->set_worker_type("reid");
    CHECK(net::ValidateResource(r).ok());
  }
  SECTION("a FeatureExtractionService comes as itself and its workers as Worker resources") {
    r.mutable_ref()->set_kind(std::string(net::kKindFeatureExtractionService));
    r.mutable_ref()->set_name("fe");
    r.mutable_feature_extraction_service()->set_worker_type("fe");
    CHECK(net::ValidateResource(r).ok());

    r.mutable_ref()->set_kind(std::string(net::kKindWorker));
    r.mutable_ref()->set_name("fe-worker");
    v1::WorkerSpec* worker = r.mutable_worker();
    worker->set_job_kind(std::string(net::kKindFeatureExtractionService));
    worker->set_job_name("fe");
    worker->set_worker_type("fe");
    CHECK(net::ValidateResource(r).ok());
    r.mutable_ref()->set_kind(std::string(net::kKindFeatureExtractionService));
    CHECK(absl::IsInvalidArgument(net::ValidateResource(r)));  // A Worker spec under its kind.
  }
}

TEST_CASE("reports are validated structurally", "[net][protocol]") {
  v1::StatusReport report;
  *report.mutable_ref() = Dataset().ref();
  report.mutable_dataset()->set_number_of_samples(0);
  CHECK(absl::IsInvalidArgument(net::ValidateReport(report)));  // seq 0
  report.set_seq(1);
  CHECK(net::ValidateReport(report).ok());
  report.clear_payload();
  CHECK(absl::IsInvalidArgument(net::ValidateReport(report)));
}

TEST_CASE("error details round-trip statuses", "[net][protocol]") {
  absl::Status status = absl::InvalidArgumentError("bad url");
  absl::Status back = net::FromErrorDetail(net::ToErrorDetail(status));
  CHECK(back == status);
  v1::ErrorDetail weird;
  weird.set_code(99);
  weird.set_message("x");
  CHECK(absl::IsUnknown(net::FromErrorDetail(weird)));
  v1::ErrorDetail empty;
  CHECK(absl::IsUnknown(net::FromErrorDetail(empty)));
}

TEST_CASE("times round-trip the wire Timestamp", "[net][protocol]") {
  const absl::Time t = absl::FromUnixNanos(1'750'000'000'123'456'789);
  v1::Timestamp proto = net::ToProtoTime(t);
  CHECK(proto.seconds() == 1'750'000'000);
  CHECK(proto.nanos() == 123'456'789);
  CHECK(net::FromProtoTime(proto) == t);

  // Before the epoch the fraction stays non-negative, as google.protobuf.Timestamp requires.
  proto = net::ToProtoTime(absl::FromUnixNanos(-1));
  CHECK(proto.seconds() == -1);
  CHECK(proto.nanos() == 999'999'999);
  CHECK(net::FromProtoTime(proto) == absl::FromUnixNanos(-1));

  CHECK_FALSE(net::FromProtoTime(v1::Timestamp()).has_value());
}

}  // namespace
}  // namespace nereid
