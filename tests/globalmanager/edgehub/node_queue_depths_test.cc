#include "globalmanager/edgehub/node_queue_depths.h"

#include <catch2/catch.hpp>

#include "globalmanager/edgehub/hub_metrics.h"
#include "prometheus/registry.h"

namespace nereid::gm {
namespace {

TEST_CASE("node queue depths: the total, the nodes with a backlog and the longest queue",
          "[edgehub]") {
  HubMetrics metrics(nullptr);
  NodeQueueDepths& depths = metrics.queue_depths();
  depths.Changed(0, 3);  // node a
  depths.Changed(0, 5);  // node b
  depths.Changed(0, 5);  // node c
  CHECK(depths.queued_changes() == 13);
  CHECK(depths.nodes_with_backlog() == 3);
  CHECK(depths.max_depth() == 5);

  depths.Changed(5, 1);  // b drains; c still has 5
  CHECK(depths.max_depth() == 5);
  depths.Changed(5, 0);  // c empty (or its stream ended)
  CHECK(depths.queued_changes() == 4);
  CHECK(depths.nodes_with_backlog() == 2);
  CHECK(depths.max_depth() == 3);
  depths.Changed(3, 3);  // no change
  depths.Changed(3, 0);
  depths.Changed(1, 0);
  CHECK(depths.queued_changes() == 0);
  CHECK(depths.nodes_with_backlog() == 0);
  CHECK(depths.max_depth() == 0);
}

TEST_CASE("node queue depths: three series whatever the number of nodes", "[edgehub]") {
  HubMetrics metrics(nullptr);
  for (int node = 0; node < 1000; ++node) metrics.queue_depths().Changed(0, 1 + node % 7);
  int series = 0;
  for (const prometheus::MetricFamily& family : metrics.registry().Collect()) {
    if (family.name == "nereid_edgehub_queued_changes") {
      CHECK(family.metric.at(0).gauge.value == 3997);  // 1..7 over and over, 1000 nodes
    } else if (family.name == "nereid_edgehub_nodes_with_backlog") {
      CHECK(family.metric.at(0).gauge.value == 1000);
    } else if (family.name == "nereid_edgehub_node_queue_depth_max") {
      CHECK(family.metric.at(0).gauge.value == 7);
    } else {
      continue;
    }
    series += static_cast<int>(family.metric.size());
  }
  CHECK(series == 3);
}

}  // namespace
}  // namespace nereid::gm
