#include "localcontroller/cloudlink/spec_validation.h"

#include <catch2/catch.hpp>
#include <string>

#include "tests/localcontroller/cloudlink/fakes.h"

namespace nereid::lc {
namespace {

namespace v1 = edge::v1;

v1::Resource Base(const std::string& kind) {
  v1::Resource r;
  r.mutable_ref()->set_kind(kind);
  r.mutable_ref()->set_namespace_("default");
  r.mutable_ref()->set_name("x");
  r.set_version("1");
  return r;
}

std::string Error(const v1::Resource& r) {
  absl::Status status = ValidateForNode(r, "edge-a");
  return status.ok() ? "" : std::string(status.message());
}

TEST_CASE("dataset specs", "[cloudlink][validation]") {
  v1::Resource r = Base("Dataset");
  r.mutable_dataset()->set_url("/data/a.txt");
  r.mutable_dataset()->set_format("TXT");
  CHECK(Error(r).empty());
  r.mutable_dataset()->set_format("weird");  // counted and reported as an error status instead
  CHECK(Error(r).empty());
  r.mutable_dataset()->set_node_name("edge-a");
  CHECK(Error(r).empty());
  r.mutable_dataset()->set_node_name("edge-b");
  CHECK(Error(r) == "Dataset default/x: spec.nodeName is edge-b, not this node (edge-a)");
  r.mutable_dataset()->clear_node_name();
  r.mutable_dataset()->clear_format();
  CHECK(Error(r) == "Dataset default/x: spec.format is empty");
}

TEST_CASE("model specs", "[cloudlink][validation]") {
  v1::Resource r = Base("Model");
  r.mutable_model()->set_url("https://models/m.pb");
  CHECK(Error(r).empty());
  r.mutable_model()->set_sha256("abc");
  CHECK(Error(r) == "Model default/x: sha256 must be 64 hex digits");
  r.mutable_model()->set_sha256(std::string(64, 'F'));
  CHECK(Error(r).empty());
}

TEST_CASE("multi-edge inference objects: this node's, with a worker type",
          "[cloudlink][validation]") {
  v1::Resource va = Base("VideoAnalyticsJob");
  va.mutable_video_analytics_job()->set_worker_type("videoanalytics");
  v1::Resource reid = Base("ReidJob");
  reid.mutable_reid_job()->set_worker_type("reid");
  v1::Resource fe = Base("FeatureExtractionService");
  fe.mutable_feature_extraction_service()->set_worker_type("fe");
  for (v1::Resource* r : {&va, &reid, &fe}) {
    INFO(r->ref().kind());
    CHECK(Error(*r).empty());
    v1::InferenceJobSpec* spec = r->has_video_analytics_job()
                                     ? r->mutable_video_analytics_job()
                                     : (r->has_reid_job() ? r->mutable_reid_job()
                                                          : r->mutable_feature_extraction_service());
    spec->set_node_name("edge-a");
    CHECK(Error(*r).empty());
    spec->set_node_name("edge-b");
    CHECK(Error(*r).find("nodeName is edge-b, not this node (edge-a)") != std::string::npos);
    spec->clear_node_name();
    spec->clear_worker_type();
    CHECK(Error(*r).find("no worker type") != std::string::npos);
  }
}

TEST_CASE("incremental learning triggers", "[cloudlink][validation]") {
  v1::Resource r = Base("IncrementalLearningJob");
  v1::IncrementalLearningJobSpec* spec = r.mutable_incremental_learning_job();
  spec->mutable_dataset()->set_name("ds");
  spec->mutable_dataset()->set_train_prob(0.8);
  spec->set_initial_model_name("m0");
  v1::Trigger* train = spec->mutable_train_trigger();
  train->set_check_period_seconds(60);
  train->mutable_timer()->set_start("02:00");
  train->mutable_timer()->set_end("04:00");
  train->mutable_condition()->set_operator_(">");
  train->mutable_condition()->set_threshold(500);
  train->mutable_condition()->set_metric("num_of_samples");
  CHECK(Error(r).empty());

  // A whole-day window (Sedna's examples: "00:00"-"24:00") is valid; 24:00 is the only clock
  // past 23:59.
  train->mutable_timer()->set_start("00:00");
  train->mutable_timer()->set_end("24:00");
  CHECK(Error(r).empty());
  train->mutable_timer()->set_end("24:01");
  CHECK(Error(r).find("trainSpec.trigger.timer wants HH:MM") != std::string::npos);
  train->mutable_timer()->set_end("25:00");
  CHECK(Error(r).find("trainSpec.trigger.timer wants HH:MM") != std::string::npos);
  train->mutable_timer()->set_end("04:00");
  train->mutable_condition()->set_operator_("between");
  CHECK(Error(r).find("operator \"between\" is unknown") != std::string::npos);
  train->mutable_condition()->set_operator_("ge");
  spec->mutable_dataset()->set_train_prob(1.5);
  CHECK(Error(r).find("trainProb") != std::string::npos);
  spec->mutable_dataset()->set_train_prob(0.5);
  spec->clear_initial_model_name();
  CHECK(Error(r).find("initialModel.name is empty") != std::string::npos);
}

TEST_CASE("structural problems are refused before any kind check", "[cloudlink][validation]") {
  v1::Resource r = Base("Dataset");
  CHECK(Error(r) == "Dataset default/x: no spec");
  r.mutable_worker()->set_job_kind("ObjectSearchService");
  CHECK(Error(r) == "Dataset default/x: carries a Worker spec");
  r.mutable_ref()->set_kind("Worker");
  CHECK(Error(r) == "Worker default/x: worker needs job kind, job name and worker type");
  r.mutable_worker()->set_job_name("search");
  r.mutable_worker()->set_worker_type("tracking");
  CHECK(Error(r).empty());
}

TEST_CASE("a change is validated for the node before it reaches the store", "[cloudlink][validation]") {
  testing::FakeStore store;
  v1::Change change;
  CHECK(absl::IsInvalidArgument(ApplyChange(change, "edge-a", store)));  // neither op set

  v1::Resource r = Base("Dataset");
  r.mutable_dataset()->set_url("/data/a.txt");
  r.mutable_dataset()->set_format("txt");
  r.mutable_dataset()->set_node_name("edge-b");
  *change.mutable_upsert() = r;
  CHECK(absl::IsInvalidArgument(ApplyChange(change, "edge-a", store)));
  CHECK(store.upserts() == 0);
  change.mutable_upsert()->mutable_dataset()->set_node_name("edge-a");
  CHECK(ApplyChange(change, "edge-a", store).ok());
  CHECK(store.Held() == std::vector<std::string>{"Dataset/default/x@1"});

  store.FailNextUpserts(1, absl::UnavailableError("disk full"));  // a local failure passes through
  CHECK(absl::IsUnavailable(ApplyChange(change, "edge-a", store)));

  v1::Change remove;
  *remove.mutable_remove()->mutable_ref() = r.ref();
  remove.mutable_remove()->mutable_ref()->clear_name();
  CHECK(absl::IsInvalidArgument(ApplyChange(remove, "edge-a", store)));
  remove.mutable_remove()->mutable_ref()->set_name("x");
  CHECK(ApplyChange(remove, "edge-a", store).ok());
  CHECK(store.Held().empty());
}

}  // namespace
}  // namespace nereid::lc
