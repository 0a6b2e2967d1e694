#include "localcontroller/node_summary.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "common/net/edge_protocol.h"
#include "common/status/macros.h"

namespace nereid::lc {
namespace {

// Counts a failing object and keeps the first in (kind, namespace, name) order.
void NoteFailing(std::string_view kind, const std::string& ns, const std::string& name,
                 const std::string& reason, const std::string& message,
                 edge::v1::NodeSummary& summary) {
  if (reason.empty()) return;
  summary.set_failing(summary.failing() + 1);
  using Order = std::tuple<std::string_view, std::string_view, std::string_view>;
  if (summary.has_first_failing()) {
    const edge::v1::ObjectRef& first = summary.first_failing().ref();
    if (Order(first.kind(), first.namespace_(), first.name()) <= Order(kind, ns, name)) return;
  }
  edge::v1::FailingObject* failing = summary.mutable_first_failing();
  failing->mutable_ref()->set_kind(std::string(kind));
  failing->mutable_ref()->set_namespace_(ns);
  failing->mutable_ref()->set_name(name);
  failing->set_reason(reason);
  failing->set_message(message);
}

}  // namespace

absl::StatusOr<edge::v1::NodeSummary> ReadNodeSummary(server::StateView& view,
                                                      const db::LcDatabase::WriteHealth& db) {
  edge::v1::NodeSummary summary;
  ASSIGN_OR_RETURN(server::StatusInfo status, view.Status());
  summary.set_datasets(static_cast<uint32_t>(status.datasets));
  summary.set_models(static_cast<uint32_t>(status.models));
  summary.set_workers(static_cast<uint32_t>(status.workers));
  summary.set_outbox_depth(static_cast<uint64_t>(std::max<int64_t>(status.outbox_depth, 0)));
  ASSIGN_OR_RETURN(std::vector<server::DatasetInfo> datasets, view.Datasets());
  for (const server::DatasetInfo& dataset : datasets) {
    NoteFailing(net::kKindDataset, dataset.ns, dataset.name, dataset.error_reason,
                dataset.error_message, summary);
  }
  ASSIGN_OR_RETURN(std::vector<server::ModelInfo> models, view.Models());
  for (const server::ModelInfo& model : models) {
    NoteFailing(net::kKindModel, model.ns, model.name, model.error_reason, model.error_message,
                summary);
  }
  if (!db.error.ok()) {
    summary.set_database_failing(true);
    summary.set_database_error(std::string(db.error.message()));
  }
  return summary;
}

}  // namespace nereid::lc
