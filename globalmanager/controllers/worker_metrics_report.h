#pragma once

// Worker reports whose ownerInfo becomes status.metrics (JointInferenceService,
// FeatureExtractionService, VideoAnalyticsJob): Sedna's upstream for inference workers, kept
// instead of dropped. A sink's HandleReport checks the payload (RejectedPayload), reads the
// metrics, checks that the node holds the object, then writes them:
//
//   std::vector<api::Metric> metrics;
//   if (std::optional<ReportOutcome> bad = ReadWorkerMetrics(report, &metrics)) return *bad;
//   ... Rejected ObjectGone / NotThisNode from the placements ...
//   return WriteWorkerMetrics(context(), resource, cached, node, report, std::move(metrics), {});

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "common/api/common_types.h"
#include "common/kube/object.h"
#include "common/kube/resource.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/report_router.h"
#include "nereid/edge/v1/status.pb.h"

namespace nereid::gm {

// The metrics of the report's ownerInfo (MetricsFromOwnerInfo), or Rejected Invalid when it is
// not a JSON object.
std::optional<ReportOutcome> ReadWorkerMetrics(const edge::v1::StatusReport& report,
                                               std::vector<api::Metric>* metrics);

struct MetricsBounds {
  size_t max_metrics = 0;      // 0: all of them
  size_t max_value_bytes = 0;  // 0: values as they are
};

// status.metrics = `metrics` (bounded) of the object the report is about, through the status
// subresource (from `cached` when given; the report's uid must match). No metrics: Accepted,
// nothing written (Sedna does nothing either). A failed write: ReportWriteFailure.
ReportOutcome WriteWorkerMetrics(const ControllerContext& context, const kube::Resource& resource,
                                 kube::ObjectPtr cached, std::string_view node,
                                 const edge::v1::StatusReport& report,
                                 std::vector<api::Metric> metrics, MetricsBounds bounds);

}  // namespace nereid::gm
