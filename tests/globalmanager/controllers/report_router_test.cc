// ReportRouter: dispatch by kind onto worker threads, completion with the sink's outcome, unknown
// kinds, a full queue, shutdown, throwing sinks, metrics.

#include "globalmanager/controllers/report_router.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "tests/fakes/eventually.h"

namespace nereid::gm {
namespace {

using fakes::Eventually;

// A sink that records what it got and on which thread; optionally blocks until released.
class RecordingSink final : public ReportSink {
 public:
  explicit RecordingSink(ReportOutcome outcome = ReportOutcome::Accepted())
      : outcome_(std::move(outcome)) {}

  ReportOutcome HandleReport(std::string_view node,
                             const edge::v1::StatusReport& report) override {
    absl::MutexLock lock(&mu_);
    nodes_.emplace_back(node);
    seqs_.push_back(report.seq());
    threads_.push_back(std::this_thread::get_id());
    ++running_;
    mu_.Await(absl::Condition(
        +[](RecordingSink* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
          return !self->blocked_;
        },
        this));
    --running_;
    if (throw_) throw std::runtime_error("boom");
    return outcome_;
  }

  void Block(bool blocked) {
    absl::MutexLock lock(&mu_);
    blocked_ = blocked;
  }
  void Throw() {
    absl::MutexLock lock(&mu_);
    throw_ = true;
  }
  int running() {
    absl::MutexLock lock(&mu_);
    return running_;
  }
  std::vector<uint64_t> seqs() {
    absl::MutexLock lock(&mu_);
    return seqs_;
  }
  std::vector<std::string> nodes() {
    absl::MutexLock lock(&mu_);
    return nodes_;
  }
  std::vector<std::thread::id> threads() {
    absl::MutexLock lock(&mu_);
    return threads_;
  }

 private:
  absl::Mutex mu_;
  ReportOutcome outcome_;
  bool blocked_ ABSL_GUARDED_BY(mu_) = false;
  bool throw_ ABSL_GUARDED_BY(mu_) = false;
  int running_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> nodes_ ABSL_GUARDED_BY(mu_);
  std::vector<uint64_t> seqs_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread::id> threads_ ABSL_GUARDED_BY(mu_);
};

// Collects completions.
struct Outcomes {
  absl::Mutex mu;
  std::vector<std::pair<uint64_t, ReportOutcome>> done ABSL_GUARDED_BY(mu);
  std::vector<std::thread::id> threads ABSL_GUARDED_BY(mu);

  ReportCompletion For(uint64_t seq) {
    return [this, seq](ReportOutcome outcome) {
      absl::MutexLock lock(&mu);
      done.emplace_back(seq, std::move(outcome));
      threads.push_back(std::this_thread::get_id());
    };
  }
  size_t size() {
    absl::MutexLock lock(&mu);
    return done.size();
  }
  std::optional<ReportOutcome> Of(uint64_t seq) {
    absl::MutexLock lock(&mu);
    for (const auto& [s, outcome] : done) {
      if (s == seq) return outcome;
    }
    return std::nullopt;
  }
};

std::shared_ptr<const edge::v1::StatusReport> Report(uint64_t seq, const std::string& kind) {
  auto report = std::make_shared<edge::v1::StatusReport>();
  report->set_seq(seq);
  report->mutable_ref()->set_kind(kind);
  report->mutable_ref()->set_namespace_("default");
  report->mutable_ref()->set_name("obj-" + std::to_string(seq));
  report->mutable_dataset()->set_number_of_samples(1);
  return report;
}

TEST_CASE("reports go to the sink of their kind, on a report worker, and complete with its outcome") {
  ControllerMetrics metrics(nullptr);
  ReportRouter router({.workers = 2, .metrics = &metrics});
  RecordingSink datasets;
  RecordingSink models(ReportOutcome::Rejected("ObjectGone", "gone"));
  REQUIRE(router.Register("Dataset", &datasets).ok());
  REQUIRE(router.Register("Model", &models).ok());
  CHECK(absl::IsAlreadyExists(router.Register("Dataset", &models)));
  CHECK(router.Handles("Model"));
  CHECK_FALSE(router.Handles("JointInferenceService"));
  router.Start();

  Outcomes outcomes;
  router.HandleReport("edge-0", Report(1, "Dataset"), outcomes.For(1));
  router.HandleReport("edge-1", Report(2, "Model"), outcomes.For(2));
  REQUIRE(Eventually([&] { return outcomes.size() == 2; }));
  CHECK(outcomes.Of(1)->code == ReportOutcome::Code::kAccepted);
  CHECK(outcomes.Of(2)->code == ReportOutcome::Code::kRejected);
  CHECK(outcomes.Of(2)->reason == "ObjectGone");
  CHECK(datasets.seqs() == std::vector<uint64_t>{1});
  CHECK(datasets.nodes() == std::vector<std::string>{"edge-0"});
  CHECK(models.nodes() == std::vector<std::string>{"edge-1"});
  CHECK(datasets.threads()[0] != std::this_thread::get_id());  // never the caller's (gRPC) thread
  CHECK(metrics.ReportCount("Dataset", ControllerMetrics::ReportResult::kAccepted) == 1);
  CHECK(metrics.ReportCount("Model", ControllerMetrics::ReportResult::kRejected) == 1);
  router.Stop();
}

TEST_CASE("a report about a kind no controller handles is rejected at once") {
  ReportRouter router({});
  router.Start();
  Outcomes outcomes;
  router.HandleReport("edge-0", Report(5, "ObjectTrackingService"), outcomes.For(5));
  REQUIRE(outcomes.size() == 1);  // Synchronously.
  CHECK(outcomes.Of(5)->code == ReportOutcome::Code::kRejected);
  CHECK(outcomes.Of(5)->reason == "UnknownKind");
  CHECK(outcomes.Of(5)->message.find("ObjectTrackingService") != std::string::npos);
}

TEST_CASE("a full queue answers Retry Busy; stopping answers queued reports Retry ShuttingDown") {
  ReportRouter router({.workers = 1, .max_queue = 2});
  RecordingSink sink;
  REQUIRE(router.Register("Dataset", &sink).ok());
  sink.Block(true);
  router.Start();
  Outcomes outcomes;
  router.HandleReport("edge-0", Report(1, "Dataset"), outcomes.For(1));
  REQUIRE(Eventually([&] { return sink.running() == 1; }));  // 1 is with the sink
  router.HandleReport("edge-0", Report(2, "Dataset"), outcomes.For(2));
  router.HandleReport("edge-0", Report(3, "Dataset"), outcomes.For(3));
  CHECK(router.queued() == 2);
  router.HandleReport("edge-0", Report(4, "Dataset"), outcomes.For(4));
  REQUIRE(outcomes.Of(4).has_value());
  CHECK(outcomes.Of(4)->code == ReportOutcome::Code::kRetry);
  CHECK(outcomes.Of(4)->reason == "Busy");

  std::thread stopper([&] { router.Stop(); });
  REQUIRE(Eventually([&] { return outcomes.Of(2).has_value() && outcomes.Of(3).has_value(); }));
  CHECK(outcomes.Of(2)->reason == "ShuttingDown");
  CHECK(outcomes.Of(3)->code == ReportOutcome::Code::kRetry);
  CHECK_FALSE(outcomes.Of(1).has_value());  // Stop waits for the one being handled...
  sink.Block(false);
  stopper.join();
  CHECK(outcomes.Of(1)->code == ReportOutcome::Code::kAccepted);  // ...which completes normally.
  router.HandleReport("edge-0", Report(6, "Dataset"), outcomes.For(6));
  CHECK(outcomes.Of(6)->reason == "ShuttingDown");
}

TEST_CASE("a sink that throws answers Retry InternalError and the worker survives") {
  ReportRouter router({.workers = 1});
  RecordingSink sink;
  REQUIRE(router.Register("Dataset", &sink).ok());
  sink.Throw();
  router.Start();
  Outcomes outcomes;
  router.HandleReport("edge-0", Report(1, "Dataset"), outcomes.For(1));
  router.HandleReport("edge-0", Report(2, "Dataset"), outcomes.For(2));
  REQUIRE(Eventually([&] { return outcomes.size() == 2; }));
  CHECK(outcomes.Of(1)->code == ReportOutcome::Code::kRetry);
  CHECK(outcomes.Of(1)->reason == "InternalError");
  CHECK(outcomes.Of(2)->reason == "InternalError");
}

TEST_CASE("reports received before Start wait for the workers") {
  ReportRouter router({.workers = 1});
  RecordingSink sink;
  REQUIRE(router.Register("Dataset", &sink).ok());
  Outcomes outcomes;
  router.HandleReport("edge-0", Report(1, "Dataset"), outcomes.For(1));
  CHECK(outcomes.size() == 0);
  CHECK(router.queued() == 1);
  router.Start();
  REQUIRE(Eventually([&] { return outcomes.size() == 1; }));
  CHECK(outcomes.Of(1)->code == ReportOutcome::Code::kAccepted);
}

}  // namespace
}  // namespace nereid::gm
