#pragma once

// Hub-side test doubles: a ReportHandler that holds every report until the test completes it, and
// a DeliveryListener that records ACKs/NACKs.

#include <catch2/catch.hpp>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "globalmanager/edgehub/delivery_listener.h"
#include "globalmanager/edgehub/report_handler.h"

namespace nereid::gm::testing {

namespace v1 = edge::v1;

// Holds every report with its completion until the test completes it.
class FakeReportHandler final : public ReportHandler {
 public:
  struct Call {
    std::string node;
    std::shared_ptr<const v1::StatusReport> report;
    ReportCompletion done;
  };

  void HandleReport(std::string_view node, std::shared_ptr<const v1::StatusReport> report,
                    ReportCompletion done) override {
    absl::MutexLock lock(&mu_);
    calls_.push_back(Call{std::string(node), std::move(report), std::move(done)});
  }

  // Waits until at least n calls arrived; returns call n-1.
  Call& WaitForCall(std::size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return calls_.size() >= n; };
    REQUIRE(mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(10)));
    return calls_[n - 1];
  }
  std::size_t calls() {
    absl::MutexLock lock(&mu_);
    return calls_.size();
  }

 private:
  absl::Mutex mu_;
  std::deque<Call> calls_ ABSL_GUARDED_BY(mu_);
};

class RecordingListener final : public DeliveryListener {
 public:
  void OnChangeAcked(std::string_view node, const v1::ObjectRef& ref, std::string_view version,
                     bool removed) override {
    absl::MutexLock lock(&mu_);
    events_.push_back("ack " + std::string(node) + " " + ref.name() + "@" + std::string(version) +
                      (removed ? " removed" : ""));
  }
  void OnChangeNacked(std::string_view node, const v1::ObjectRef& ref, std::string_view version,
                      const absl::Status& error) override {
    absl::MutexLock lock(&mu_);
    events_.push_back("nack " + std::string(node) + " " + ref.name() + "@" + std::string(version) +
                      ": " + std::string(error.message()));
  }
  std::vector<std::string> WaitForEvents(std::size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return events_.size() >= n; };
    mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(10));
    return events_;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> events_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nereid::gm::testing
