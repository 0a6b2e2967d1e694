#include "common/version/build_info.h"

#include <map>
#include <string>

#include "common/version/version.h"
#include "prometheus/gauge.h"

namespace nereid::version {
namespace {

constexpr char kName[] = "nereid_build_info";
constexpr char kHelp[] = "1, labelled with the release and the git commit of this binary";

std::map<std::string, std::string> Labels() {
  return {{"version", std::string(Release())}, {"commit", std::string(Commit())}};
}

}  // namespace

void RegisterBuildInfo(prometheus::Registry& registry) {
  prometheus::BuildGauge().Name(kName).Help(kHelp).Register(registry).Add(Labels()).Set(1);
}

prometheus::MetricFamily BuildInfoFamily() {
  prometheus::MetricFamily family;
  family.name = kName;
  family.help = kHelp;
  family.type = prometheus::MetricType::Gauge;
  prometheus::ClientMetric metric;
  for (const auto& [name, value] : Labels()) metric.label.push_back({name, value});
  metric.gauge.value = 1;
  family.metric.push_back(std::move(metric));
  return family;
}

}  // namespace nereid::version
