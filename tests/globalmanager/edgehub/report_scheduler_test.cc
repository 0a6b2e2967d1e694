#include "globalmanager/edgehub/report_scheduler.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "tests/globalmanager/edgehub/test_node.h"

namespace nereid::gm {
namespace {

using Admission = ReportScheduler::Admission;
using ::nereid::testing::DatasetReport;

ReportScheduler::ReportPtr Dataset(uint64_t seq, const std::string& name) {
  return std::make_shared<const edge::v1::StatusReport>(DatasetReport(seq, name, 1));
}

std::string Key(const std::string& name) { return "Dataset/default/" + name; }

// Completes one dispatched report (the oldest handed over) and returns the node it was of.
struct FifoHandler {
  std::vector<ReportScheduler::Dispatch> with_handler;

  void Fill(ReportScheduler& scheduler) {
    while (auto next = scheduler.Next()) with_handler.push_back(*std::move(next));
  }
  std::string CompleteOldest(ReportScheduler& scheduler) {
    REQUIRE(!with_handler.empty());
    ReportScheduler::Dispatch done = with_handler.front();
    with_handler.erase(with_handler.begin());
    REQUIRE(scheduler.Complete(done.node, done.key, done.report->seq()).has_value());
    Fill(scheduler);
    return done.node;
  }
};

TEST_CASE("a quiet node's report is handed over within one turn of a chatty node's backlog",
          "[edgehub][reports]") {
  ReportScheduler scheduler({.max_per_node = 1024, .max_total = 64, .min_share = 4,
                             .max_dispatched = 2});
  // Alone, the chatty node may take half of the global bound (the rest is room for others).
  for (uint64_t seq = 1; seq <= 40; ++seq) {
    CHECK(scheduler.Admit("chatty", Key("c" + std::to_string(seq)), Dataset(seq, "c")) ==
          (seq <= 32 ? Admission::kQueued : Admission::kOverShare));
  }
  FifoHandler handler;
  handler.Fill(scheduler);
  CHECK(handler.with_handler.size() == 2);  // the dispatch window

  REQUIRE(scheduler.Admit("quiet", Key("q"), Dataset(1, "q")) == Admission::kQueued);
  CHECK(scheduler.holders() == 2);
  // Two nodes and room for a third: the chatty node (32 held) is over its 21 and refused...
  CHECK(scheduler.FairShare(false) == 21);
  CHECK(scheduler.Admit("chatty", Key("c66"), Dataset(66, "c")) == Admission::kOverShare);
  // ...while the quiet node, far under its share, is not refused by the global bound either.
  CHECK(scheduler.Admit("quiet", Key("q2"), Dataset(2, "q")) == Admission::kQueued);

  // The quiet node's report waits for one turn of each node ahead of it in the ring: the chatty
  // node's next report takes the first free place, the quiet node's the second.
  int completions = 0;
  bool quiet_handed_over = false;
  while (!quiet_handed_over && completions < 10) {
    handler.CompleteOldest(scheduler);
    ++completions;
    for (const auto& d : handler.with_handler) quiet_handed_over |= d.node == "quiet";
  }
  CHECK(quiet_handed_over);
  CHECK(completions == 2);
  // From then on the two nodes take turns.
  std::vector<std::string> order;
  for (int i = 0; i < 4; ++i) {
    handler.CompleteOldest(scheduler);
    order.push_back(handler.with_handler.back().node);
  }
  CHECK(order == std::vector<std::string>{"chatty", "quiet", "chatty", "chatty"});
  CHECK(scheduler.held("quiet") == 0);
}

TEST_CASE("the fair share shrinks with the nodes holding reports, never below the floor",
          "[edgehub][reports]") {
  ReportScheduler scheduler({.max_per_node = 1024, .max_total = 100, .min_share = 5,
                             .max_dispatched = 1});
  CHECK(scheduler.FairShare(/*one_more_holder=*/true) == 50);
  for (int node = 0; node < 40; ++node) {
    REQUIRE(scheduler.Admit("n" + std::to_string(node), Key("x"), Dataset(1, "x")) ==
            Admission::kQueued);
  }
  CHECK(scheduler.FairShare(false) == 5);  // 100 / 41 = 2, floor 5
  for (uint64_t seq = 2; seq <= 5; ++seq) {
    CHECK(scheduler.Admit("n0", Key("y" + std::to_string(seq)), Dataset(seq, "y")) ==
          Admission::kQueued);
  }
  CHECK(scheduler.Admit("n0", Key("y6"), Dataset(6, "y")) == Admission::kOverShare);
  CHECK(scheduler.held("n0") == 5);
  CHECK(scheduler.held() == 44);
}

TEST_CASE("the global bound and the per-node bound refuse; a resent seq is a duplicate",
          "[edgehub][reports]") {
  ReportScheduler scheduler({.max_per_node = 3, .max_total = 4, .min_share = 3,
                             .max_dispatched = 8});
  for (uint64_t seq = 1; seq <= 3; ++seq) {
    REQUIRE(scheduler.Admit("a", Key("a" + std::to_string(seq)), Dataset(seq, "a")) ==
            Admission::kQueued);
  }
  CHECK(scheduler.Admit("a", Key("a4"), Dataset(4, "a")) == Admission::kNodeFull);
  CHECK(scheduler.Admit("a", Key("a2"), Dataset(2, "a")) == Admission::kDuplicate);
  CHECK(scheduler.Admit("b", Key("b"), Dataset(1, "b")) == Admission::kQueued);
  CHECK(scheduler.Admit("c", Key("c"), Dataset(1, "c")) == Admission::kTotalFull);
  CHECK(scheduler.held() == 4);
}

TEST_CASE("worker reports about one object go one at a time, in order, never coalesced",
          "[edgehub][reports]") {
  ReportScheduler scheduler({.max_per_node = 16, .max_total = 16, .min_share = 16,
                             .max_dispatched = 8});
  edge::v1::StatusReport worker = DatasetReport(1, "job", 1);
  worker.mutable_ref()->set_kind("FederatedLearningJob");
  worker.mutable_worker()->set_worker_name("w0");
  const std::string key = "FederatedLearningJob/default/job";
  for (uint64_t seq = 1; seq <= 2; ++seq) {
    worker.set_seq(seq);
    REQUIRE(scheduler.Admit("a", key, std::make_shared<const edge::v1::StatusReport>(worker)) ==
            Admission::kQueued);
  }
  auto first = scheduler.Next();
  REQUIRE(first.has_value());
  CHECK(first->report->seq() == 1);
  CHECK_FALSE(scheduler.Next().has_value());  // seq 2 waits for seq 1
  CHECK_FALSE(scheduler.Complete("a", key, 2).has_value());
  CHECK(scheduler.Complete("a", key, 1) == std::vector<uint64_t>{1});
  auto second = scheduler.Next();
  REQUIRE(second.has_value());
  CHECK(second->report->seq() == 2);
  CHECK(scheduler.Complete("a", key, 2) == std::vector<uint64_t>{2});
  CHECK(scheduler.held() == 0);
  CHECK(scheduler.holders() == 0);
}

TEST_CASE("waiting Dataset reports about one object are coalesced into the newest",
          "[edgehub][reports]") {
  ReportScheduler scheduler({.max_per_node = 16, .max_total = 16, .min_share = 16,
                             .max_dispatched = 8});
  const std::string key = Key("ds");
  REQUIRE(scheduler.Admit("a", key, Dataset(1, "ds")) == Admission::kQueued);
  auto first = scheduler.Next();
  REQUIRE(first.has_value());
  for (uint64_t seq = 2; seq <= 4; ++seq) {
    REQUIRE(scheduler.Admit("a", key, Dataset(seq, "ds")) == Admission::kQueued);
  }
  CHECK_FALSE(scheduler.Next().has_value());
  CHECK(scheduler.Complete("a", key, 1) == std::vector<uint64_t>{1});
  auto newest = scheduler.Next();
  REQUIRE(newest.has_value());
  CHECK(newest->report->seq() == 4);
  CHECK_FALSE(scheduler.Next().has_value());
  CHECK(scheduler.held("a") == 3);  // the coalesced ones are held until answered
  // A resend of a coalesced report is still recognised.
  CHECK(scheduler.Admit("a", key, Dataset(2, "ds")) == Admission::kDuplicate);
  CHECK_FALSE(scheduler.Complete("a", key, 3).has_value());
  CHECK(scheduler.Complete("a", key, 4) == std::vector<uint64_t>{2, 3, 4});
  CHECK(scheduler.held() == 0);
}

}  // namespace
}  // namespace nereid::gm
