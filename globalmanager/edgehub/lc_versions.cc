#include "globalmanager/edgehub/lc_versions.h"

namespace nereid::gm {

LcVersionGauge::LcVersionGauge(prometheus::Registry& registry)
    : family_(prometheus::BuildGauge()
                  .Name("nereid_edgehub_connected_lc_versions")
                  .Help("Nodes connected to this edge hub, by the release their LC announced")
                  .Register(registry)) {}

std::string LcVersionGauge::Label(std::string_view announced) {
  if (announced.empty()) return "unknown";
  std::string label(announced.substr(0, kMaxVersionLength));
  if (gauges_.contains(label) || gauges_.size() < kMaxVersions - 1) return label;
  return "other";
}

void LcVersionGauge::Connected(const std::string& label) {
  auto [it, inserted] = gauges_.try_emplace(label, nullptr);
  if (inserted) it->second = &family_.Add({{"version", label}});
  it->second->Increment();
}

void LcVersionGauge::Disconnected(const std::string& label) {
  auto it = gauges_.find(label);
  if (it != gauges_.end()) it->second->Decrement();
}

}  // namespace nereid::gm
