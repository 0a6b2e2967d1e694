#include "globalmanager/controllers/worker_metrics_report.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/api/sedna_contract.h"
#include "common/log/log.h"
#include "globalmanager/controllers/joint_inference_status.h"
#include "globalmanager/controllers/status_writer.h"

namespace nereid::gm {

using kube::Json;

std::optional<ReportOutcome> ReadWorkerMetrics(const edge::v1::StatusReport& report,
                                               std::vector<api::Metric>* metrics) {
  absl::StatusOr<std::vector<api::Metric>> read =
      MetricsFromOwnerInfo(report.worker().owner_info_json());
  if (!read.ok()) {
    return ReportOutcome::Rejected(
        "Invalid", absl::StrCat("report ", report.seq(), " of worker ",
                                report.worker().worker_name(), ": ", read.status().message()));
  }
  *metrics = *std::move(read);
  return std::nullopt;
}

ReportOutcome WriteWorkerMetrics(const ControllerContext& context, const kube::Resource& resource,
                                 kube::ObjectPtr cached, std::string_view node,
                                 const edge::v1::StatusReport& report,
                                 std::vector<api::Metric> metrics, MetricsBounds bounds) {
  if (metrics.empty()) return ReportOutcome::Accepted();
  if (bounds.max_metrics > 0 && metrics.size() > bounds.max_metrics) {
    metrics.resize(bounds.max_metrics);
  }
  Json list = Json::array();
  for (api::Metric& m : metrics) {
    if (bounds.max_value_bytes > 0 && m.value.size() > bounds.max_value_bytes) {
      m.value.resize(bounds.max_value_bytes);
    }
    list.push_back(m.ToJson());
  }
  const edge::v1::ObjectRef& ref = report.ref();
  const std::string key = kube::MakeKey(ref.namespace_(), ref.name());
  const std::string what = api::LowerKind(resource.kind);
  absl::StatusOr<StatusWrite> write = WriteStatus(
      *context.client, resource, ref.namespace_(), ref.name(), ref.uid(),
      [&](const Json&, Json* status) -> absl::Status {
        (*status)["metrics"] = list;
        return absl::OkStatus();
      },
      std::move(cached));
  if (!write.ok()) return ReportWriteFailure(what, key, node, report, write.status());
  LOG(DEBUG) << what << " " << key << ": metrics from node " << node << " (report " << report.seq()
             << ")" << (write->written ? " written" : " unchanged");
  return ReportOutcome::Accepted();
}

}  // namespace nereid::gm
