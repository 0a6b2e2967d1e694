#include "localcontroller/model/model_keeper.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/time/fake_clock.h"
#include "tests/fakes/eventually.h"
#include "tests/localcontroller/dataset/temp_dir.h"

namespace nereid::lc::model {
namespace {

using dataset::testing::TempDir;
using fakes::Eventually;

VerifierOptions RootedAt(const std::string& root, size_t chunk = 1 << 20) {
  VerifierOptions options;
  options.host_root = root;
  options.read_chunk_bytes = chunk;
  return options;
}

class Reports {
 public:
  // Records the report; the first `refusals` are answered as not stored (a full disk).
  absl::Status Add(const ModelReport& report) {
    absl::MutexLock lock(&mu_);
    reports_.push_back(report);
    if (refusals_ == 0) return absl::OkStatus();
    --refusals_;
    return absl::ResourceExhaustedError("database or disk is full");
  }
  void Refuse(int count) {
    absl::MutexLock lock(&mu_);
    refusals_ = count;
  }
  ModelReport WaitFor(size_t n) {
    absl::MutexLock lock(&mu_);
    auto ready = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return reports_.size() >= n; };
    mu_.AwaitWithTimeout(absl::Condition(&ready), absl::Seconds(10));
    REQUIRE(reports_.size() >= n);
    return reports_[n - 1];
  }
  size_t size() {
    absl::MutexLock lock(&mu_);
    return reports_.size();
  }

 private:
  absl::Mutex mu_;
  std::vector<ModelReport> reports_ ABSL_GUARDED_BY(mu_);
  int refusals_ ABSL_GUARDED_BY(mu_) = 0;
};

struct Fixture {
  TempDir root;
  FakeClock clock;
  Reports reports;
  std::unique_ptr<ModelKeeper> keeper;

  Fixture() {
    root.Write("models/m.pb", "abc");
    ModelKeeper::Options options;
    options.verifier.host_root = root.path();
    options.clock = &clock;
    options.check_period = absl::Seconds(60);
    options.on_report = [this](const ModelReport& r) { return reports.Add(r); };
    keeper = std::make_unique<ModelKeeper>(options);
    keeper->Start();
  }
  // Lets the checker run everything due and park on its next timer.
  void Settle(uint64_t checks) {
    REQUIRE(Eventually([&] { return keeper->stats().checks >= checks; }));
    REQUIRE(Eventually([&] { return clock.timed_waiters() > 0; }));
  }
};

const std::string kAbcSha = Sha256Hex("abc");

TEST_CASE("the keeper verifies a model, reports once, and re-checks when the file changes",
          "[lc][model]") {
  Fixture f;
  f.keeper->Upsert({"default/m1", "/models/m.pb", "pb", kAbcSha});
  ModelReport first = f.reports.WaitFor(1);
  CHECK(first.spec.key == "default/m1");
  CHECK(first.check.verified);
  CHECK(first.check_time == f.clock.Now());
  f.Settle(1);

  // A periodic re-check of an unchanged file: stat only, no report.
  f.clock.Advance(absl::Seconds(61));
  f.Settle(2);
  CHECK(f.reports.size() == 1);
  CHECK(f.keeper->stats().bytes_hashed == 3);

  // The file is replaced: the next periodic check re-hashes and reports the mismatch.
  f.root.Write("models/m.pb", "tampered");
  f.clock.Advance(absl::Seconds(61));
  ModelReport second = f.reports.WaitFor(2);
  CHECK_FALSE(second.check.verified);
  CHECK(second.check.reason == kReasonChecksumMismatch);
  CHECK(second.check.sha256 == Sha256Hex("tampered"));
  REQUIRE(f.keeper->Last("default/m1").has_value());
  CHECK(f.keeper->Last("default/m1")->check.reason == kReasonChecksumMismatch);
}

TEST_CASE("a report that was not stored is made again at the next check, then not again",
          "[lc][model]") {
  Fixture f;
  f.reports.Refuse(1);
  f.keeper->Upsert({"default/m1", "/models/m.pb", "pb", kAbcSha});
  CHECK(f.reports.WaitFor(1).check.verified);
  f.Settle(1);
  // Nothing changed, but the first report was refused: the check a retry delay later makes it
  // again (before, it waited for a change that might never come and the cloud never heard).
  f.clock.Advance(absl::Seconds(1));
  CHECK(f.reports.WaitFor(2).check.verified);
  f.Settle(2);
  // Stored now: the periodic check reports nothing.
  f.clock.Advance(absl::Seconds(61));
  f.Settle(3);
  CHECK(f.reports.size() == 2);
}

TEST_CASE("a prior check from before a restart spares the hash and the report", "[lc][model]") {
  Fixture f;
  ModelVerifier verifier(RootedAt(f.root.path()));
  absl::StatusOr<Check> prior =
      verifier.Verify({"default/m1", "/models/m.pb", "pb", kAbcSha}, nullptr, nullptr);
  REQUIRE(prior.ok());
  REQUIRE(prior->verified);

  f.keeper->Upsert({"default/m1", "/models/m.pb", "pb", kAbcSha}, *prior);
  f.Settle(1);
  CHECK(f.reports.size() == 0);
  CHECK(f.keeper->stats().bytes_hashed == 0);
  REQUIRE(f.keeper->Last("default/m1").has_value());
  CHECK(f.keeper->Last("default/m1")->check.verified);
}

TEST_CASE("a spec change is checked at once; removal stops reports", "[lc][model]") {
  Fixture f;
  f.keeper->Upsert({"default/m1", "/models/m.pb", "pb", kAbcSha});
  f.reports.WaitFor(1);
  f.Settle(1);

  f.keeper->Upsert({"default/m1", "/models/missing.pb", "pb", kAbcSha});
  ModelReport moved = f.reports.WaitFor(2);
  CHECK(moved.check.reason == "PathNotFound");
  CHECK(moved.spec.url == "/models/missing.pb");
  f.Settle(2);

  // The same spec again: nothing to do.
  f.keeper->Upsert({"default/m1", "/models/missing.pb", "pb", kAbcSha});
  f.keeper->Remove("default/m1");
  CHECK(f.keeper->size() == 0);
  CHECK_FALSE(f.keeper->Last("default/m1").has_value());
  f.root.Write("models/missing.pb", "abc");
  f.keeper->RequestCheck("default/m1");  // unknown now: ignored
  f.clock.Advance(absl::Seconds(120));
  // Nothing is tracked, so the checker has nothing to check or report.
  CHECK(f.keeper->stats().checks == 2);
  CHECK(f.reports.size() == 2);
}

TEST_CASE("the keeper stops promptly and is idempotent", "[lc][model]") {
  Fixture f;
  f.keeper->Upsert({"default/m1", "/models/m.pb", "pb", kAbcSha});
  f.reports.WaitFor(1);
  CHECK(f.keeper->running());
  f.keeper->Stop();
  f.keeper->Stop();
  CHECK_FALSE(f.keeper->running());
}

}  // namespace
}  // namespace nereid::lc::model
