// The EdgeNode status made from a node's record: conditions and their transition times, the
// outbox threshold, what an LC without summaries shows.

#include "globalmanager/fleet/node_record.h"

#include <catch2/catch.hpp>

namespace nereid::gm {
namespace {

const api::Condition& ConditionOf(const api::EdgeNodeStatus& status, std::string_view type) {
  for (const api::Condition& condition : status.conditions) {
    if (condition.type == type) return condition;
  }
  FAIL("no condition " << type);
  return status.conditions.front();
}

TEST_CASE("node record: transition times move only when their state changes") {
  const absl::Time t0 = absl::FromUnixSeconds(1'800'000'000);
  NodeRecord record;
  record.connected = true;
  record.since = t0;
  edge::v1::NodeSummary summary;
  summary.set_datasets(3);
  ApplySummary(record, summary, t0 + absl::Seconds(1));
  CHECK(record.database_since == t0 + absl::Seconds(1));
  CHECK(record.objects_since == t0 + absl::Seconds(1));

  summary.set_datasets(4);  // not a health change
  ApplySummary(record, summary, t0 + absl::Seconds(2));
  CHECK(record.objects_since == t0 + absl::Seconds(1));

  summary.set_failing(1);
  summary.mutable_first_failing()->mutable_ref()->set_kind("Model");
  summary.mutable_first_failing()->mutable_ref()->set_namespace_("ns");
  summary.mutable_first_failing()->mutable_ref()->set_name("m");
  summary.mutable_first_failing()->set_reason("ChecksumMismatch");
  ApplySummary(record, summary, t0 + absl::Seconds(3));
  CHECK(record.objects_since == t0 + absl::Seconds(3));
  CHECK(record.database_since == t0 + absl::Seconds(1));

  const api::EdgeNodeStatus status = StatusOf(record, StatusSettings{.replica = "gm-1"});
  const api::Condition& objects = ConditionOf(status, api::kEdgeNodeObjectsHealthy);
  CHECK(objects.status == "False");
  CHECK(objects.message == "1 failing; first Model ns/m: ChecksumMismatch");
  CHECK(objects.last_transition_time == t0 + absl::Seconds(3));
  CHECK(ConditionOf(status, api::kEdgeNodeConnected).last_transition_time == t0);
  CHECK(ConditionOf(status, api::kEdgeNodeDatabaseWritable).status == "True");
  CHECK(status.datasets == 4);
}

TEST_CASE("node record: the outbox depth shows from the threshold on") {
  NodeRecord record;
  edge::v1::NodeSummary summary;
  summary.set_outbox_depth(99);
  ApplySummary(record, summary, absl::Now());
  CHECK_FALSE(StatusOf(record, StatusSettings{.outbox_threshold = 100}).outbox_depth.has_value());
  summary.set_outbox_depth(100);
  ApplySummary(record, summary, absl::Now());
  CHECK(StatusOf(record, StatusSettings{.outbox_threshold = 100}).outbox_depth == 100);
}

TEST_CASE("node record: an LC that sends no summary shows Unknown health and no counts") {
  NodeRecord record;
  record.connected = true;
  record.lc_version = "nereid-lc/0.3.0";
  const api::EdgeNodeStatus status = StatusOf(record, StatusSettings{.replica = "gm-0"});
  CHECK_FALSE(status.datasets.has_value());
  CHECK_FALSE(status.database_writable.has_value());
  CHECK(ConditionOf(status, api::kEdgeNodeDatabaseWritable).status == "Unknown");
  CHECK(ConditionOf(status, api::kEdgeNodeObjectsHealthy).reason == "NoSummary");
  // Every field is in the JSON (null when absent), so a merge patch replaces the whole status.
  const kube::Json json = status.ToJson();
  CHECK(json.contains("datasets"));
  CHECK(json["datasets"].is_null());
  CHECK(json["servedBy"] == "gm-0");
}

}  // namespace
}  // namespace nereid::gm
