#include "globalmanager/fleet/node_record.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace nereid::gm {
namespace {

std::optional<absl::Time> Known(absl::Time time) {
  if (time == absl::InfinitePast()) return std::nullopt;
  return time;
}

api::Condition MakeCondition(std::string type, bool status, std::string reason,
                             std::string message, absl::Time since) {
  api::Condition condition;
  condition.type = std::move(type);
  condition.status = status ? "True" : "False";
  condition.reason = std::move(reason);
  condition.message = std::move(message);
  condition.last_transition_time = Known(since);
  return condition;
}

api::Condition WithoutSummary(std::string type, absl::Time since) {
  api::Condition condition = MakeCondition(
      std::move(type), false, "NoSummary",
      "the LocalController sends no summary (a release before summaries, or none yet)", since);
  condition.status = "Unknown";
  return condition;
}

std::string Describe(const edge::v1::FailingObject& failing) {
  std::string text = absl::StrCat(failing.ref().kind(), " ", failing.ref().namespace_(), "/",
                                  failing.ref().name(), ": ", failing.reason());
  if (!failing.message().empty()) absl::StrAppend(&text, ": ", failing.message());
  return text;
}

}  // namespace

void ApplySummary(NodeRecord& record, const edge::v1::NodeSummary& summary, absl::Time now) {
  const bool first = !record.summary.has_value();
  if (first || record.summary->database_failing() != summary.database_failing()) {
    record.database_since = now;
  }
  if (first || (record.summary->failing() > 0) != (summary.failing() > 0)) {
    record.objects_since = now;
  }
  record.summary = summary;
}

api::EdgeNodeStatus StatusOf(const NodeRecord& record, const StatusSettings& settings) {
  api::EdgeNodeStatus status;
  status.connected = record.connected;
  status.since = Known(record.since);
  status.lc_version = record.lc_version;
  status.lc_commit = record.lc_commit;
  if (record.connected) {
    status.served_by = settings.replica;
    status.relayed = record.relayed;
    status.conditions.push_back(MakeCondition(
        api::kEdgeNodeConnected, true, "StreamOpen",
        absl::StrCat("served by GM replica ", settings.replica,
                     record.relayed ? " through another replica's relay" : ""),
        record.since));
  } else {
    status.conditions.push_back(MakeCondition(
        api::kEdgeNodeConnected, false, "StreamEnded",
        "the LocalController's stream ended; it redials on its own unless the node, its "
        "network or the LocalController is down",
        record.since));
  }
  if (!record.summary.has_value()) {
    status.conditions.push_back(WithoutSummary(api::kEdgeNodeDatabaseWritable, record.since));
    status.conditions.push_back(WithoutSummary(api::kEdgeNodeObjectsHealthy, record.since));
    return status;
  }
  const edge::v1::NodeSummary& summary = *record.summary;
  status.datasets = summary.datasets();
  status.models = summary.models();
  status.workers = summary.workers();
  status.failing = summary.failing();
  if (summary.has_first_failing()) {
    const edge::v1::FailingObject& failing = summary.first_failing();
    status.first_failing = api::EdgeNodeFailingObject{
        .kind = failing.ref().kind(),
        .ns = failing.ref().namespace_(),
        .name = failing.ref().name(),
        .reason = failing.reason(),
        .message = failing.message(),
    };
  }
  if (static_cast<int64_t>(summary.outbox_depth()) >= settings.outbox_threshold) {
    status.outbox_depth = static_cast<int64_t>(summary.outbox_depth());
  }
  status.database_writable = !summary.database_failing();
  status.conditions.push_back(
      summary.database_failing()
          ? MakeCondition(api::kEdgeNodeDatabaseWritable, false, "WritesFailing",
                          absl::StrCat("the LocalController's database refuses writes (disk "
                                       "full?): ",
                                       summary.database_error()),
                          record.database_since)
          : MakeCondition(api::kEdgeNodeDatabaseWritable, true, "Writable", "",
                          record.database_since));
  status.conditions.push_back(
      summary.failing() > 0
          ? MakeCondition(api::kEdgeNodeObjectsHealthy, false, "ObjectsFailing",
                          absl::StrCat(summary.failing(), " failing; first ",
                                       Describe(summary.first_failing())),
                          record.objects_since)
          : MakeCondition(api::kEdgeNodeObjectsHealthy, true, "NoneFailing", "",
                          record.objects_since));
  return status;
}

}  // namespace nereid::gm
