#ifndef NEREID_COMMON_VERSION_BUILD_INFO_H_
#define NEREID_COMMON_VERSION_BUILD_INFO_H_

// nereid_build_info{version,commit} = 1: the release and commit as a metric, so a dashboard or an
// alert can tell replicas and nodes apart by what they run (joined on the target's labels).

#include "prometheus/metric_family.h"
#include "prometheus/registry.h"

namespace nereid::version {

// Registers the metric in `registry` (a daemon whose metrics all live in one registry).
void RegisterBuildInfo(prometheus::Registry& registry);

// The metric as a family (a daemon that assembles its families at scrape time).
prometheus::MetricFamily BuildInfoFamily();

}  // namespace nereid::version

#endif  // NEREID_COMMON_VERSION_BUILD_INFO_H_
