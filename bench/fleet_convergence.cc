#include "bench/fleet_convergence.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/api/edge_node.h"
#include "common/kube/object.h"

namespace nereid::bench {

absl::StatusOr<FleetConvergence> AwaitFleetConnected(kube::KubeClient& client, int api_port,
                                                     int nodes, absl::Time since,
                                                     const ApiRequestCounts& requests_before,
                                                     absl::Duration timeout) {
  const absl::Time since_second = absl::FromUnixSeconds(absl::ToUnixSeconds(since));
  const absl::Time deadline = absl::Now() + timeout;
  int connected = 0;
  while (true) {
    kube::ListOptions options;
    options.limit = 1000;
    absl::StatusOr<kube::ObjectList> list =
        kube::ListAll(client, api::EdgeNodesResource(), "", options);
    const absl::Time polled = absl::Now();
    if (list.ok()) {
      connected = 0;
      for (const kube::Json& item : list->items) {
        const kube::Json* up = kube::FindPath(item, "status.connected");
        const std::optional<absl::Time> at =
            kube::ParseTimestamp(kube::StringAt(item, "status.since"));
        if (up != nullptr && up->is_boolean() && up->get<bool>() && at.has_value() &&
            *at >= since_second) {
          ++connected;
        }
      }
      if (connected >= nodes) {
        FleetConvergence result;
        result.seconds = absl::ToDoubleSeconds(polled - since);
        absl::StatusOr<ApiRequestCounts> after = FetchApiRequestCounts(api_port, kGmUserAgent);
        if (!after.ok()) return after.status();
        for (const auto& [key, count] : Minus(*after, requests_before)) {
          if (absl::StrContains(key, "edgenodes") || absl::EndsWith(key, " nodes")) {
            result.gm_requests[key] = count;
          }
        }
        return result;
      }
    }
    if (polled >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "only ", connected, " of ", nodes, " EdgeNodes showed connected within ",
          absl::FormatDuration(timeout)));
    }
    absl::SleepFor(absl::Milliseconds(250));
  }
}

std::string DescribeRequests(const ApiRequestCounts& requests) {
  int64_t total = 0;
  std::string by_kind;
  for (const auto& [key, count] : requests) {
    total += count;
    absl::StrAppend(&by_kind, by_kind.empty() ? "" : ", ", key, " ", count);
  }
  return absl::StrCat(total, " requests (", by_kind, ")");
}

}  // namespace nereid::bench
