#pragma once

// The operator API's view of a running daemon (server::StateView): what the node holds from the
// database (so it answers also before the first scan after a restart, and with no GM), merged with
// the live state of the dataset monitor, the model keeper, the worker intake and the cloud link.
// Metrics are read at scrape time from the same sources.

#include <string>
#include <vector>

#include "localcontroller/server/state_view.h"

namespace nereid::lc {

class Daemon;

class DaemonStateView final : public server::StateView {
 public:
  DaemonStateView(Daemon* daemon, absl::Time started) : daemon_(daemon), started_(started) {}

  absl::Status Ready() override;
  absl::StatusOr<server::StatusInfo> Status() override;
  absl::StatusOr<std::vector<server::DatasetInfo>> Datasets() override;
  absl::StatusOr<server::DatasetInfo> Dataset(std::string_view ns, std::string_view name) override;
  absl::StatusOr<std::vector<server::ModelInfo>> Models() override;
  absl::StatusOr<server::ModelInfo> Model(std::string_view ns, std::string_view name) override;
  std::vector<prometheus::MetricFamily> CollectMetrics() override;

 private:
  Daemon* const daemon_;
  const absl::Time started_;
};

}  // namespace nereid::lc
