#pragma once

// nereid_edgehub_connected_lc_versions{version}: the nodes connected to this hub by the release
// their LC announced in its Hello, so an upgrade's progress (and a straggler) shows on a graph.

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace nereid::gm {

class LcVersionGauge {
 public:
  // A node names its own version, so the labels are bounded: versions are cut to this length,
  // and past this many distinct versions the rest count as "other".
  static constexpr std::size_t kMaxVersionLength = 64;
  static constexpr std::size_t kMaxVersions = 32;

  explicit LcVersionGauge(prometheus::Registry& registry);

  // The label a node announcing `announced` is counted under ("unknown" for an empty one).
  std::string Label(std::string_view announced);
  // A node of `label` (from Label) connected or disconnected. Not thread-safe: the hub calls these
  // under its lock.
  void Connected(const std::string& label);
  void Disconnected(const std::string& label);

 private:
  prometheus::Family<prometheus::Gauge>& family_;
  absl::flat_hash_map<std::string, prometheus::Gauge*> gauges_;
};

}  // namespace nereid::gm
