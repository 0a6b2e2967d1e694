// SummarySender: summaries only to a GM that announced it reads them, the first at once, then
// only when changed, read at most once per interval.

#include "localcontroller/cloudlink/summary_sender.h"

#include <catch2/catch.hpp>

namespace nereid::lc {
namespace {

edge::v1::HelloReply Reply(bool reads_summaries) {
  edge::v1::HelloReply reply;
  reply.add_capabilities("something-else");
  if (reads_summaries) reply.add_capabilities("node-summary");
  return reply;
}

TEST_CASE("summary sender: first at once, then only changes, at most once per interval") {
  int reads = 0;
  uint32_t datasets = 1;
  bool failing_source = false;
  SummarySender sender(
      [&]() -> absl::StatusOr<edge::v1::NodeSummary> {
        ++reads;
        if (failing_source) return absl::UnavailableError("database busy");
        edge::v1::NodeSummary summary;
        summary.set_datasets(datasets);
        return summary;
      },
      absl::Seconds(2));
  const absl::Time t0 = absl::FromUnixSeconds(1'800'000'000);
  CHECK(sender.next_check() == absl::InfiniteFuture());  // no stream yet

  SECTION("a GM that does not read them gets none, and nothing is read") {
    sender.OnEstablished(Reply(false), t0);
    CHECK(sender.next_check() == absl::InfiniteFuture());
    CHECK_FALSE(sender.Due(t0 + absl::Hours(1)).has_value());
    CHECK(reads == 0);
  }

  SECTION("a GM that reads them") {
    sender.OnEstablished(Reply(true), t0);
    auto first = sender.Due(t0);
    REQUIRE(first.has_value());
    CHECK(first->datasets() == 1);
    CHECK_FALSE(sender.Due(t0 + absl::Seconds(1)).has_value());  // within the interval
    CHECK(reads == 1);
    CHECK_FALSE(sender.Due(t0 + absl::Seconds(2)).has_value());  // read, unchanged
    CHECK(reads == 2);
    datasets = 2;
    auto changed = sender.Due(t0 + absl::Seconds(4));
    REQUIRE(changed.has_value());
    CHECK(changed->datasets() == 2);

    failing_source = true;
    CHECK_FALSE(sender.Due(t0 + absl::Seconds(6)).has_value());
    failing_source = false;
    CHECK_FALSE(sender.Due(t0 + absl::Seconds(8)).has_value());  // still what was sent

    // A new stream starts over: its GM gets the summary at once, though unchanged.
    sender.OnEstablished(Reply(true), t0 + absl::Seconds(9));
    CHECK(sender.Due(t0 + absl::Seconds(9)).has_value());
  }
}

}  // namespace
}  // namespace nereid::lc
