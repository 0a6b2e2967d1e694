#include "globalmanager/controllers/controller_metrics.h"

#include <catch2/catch.hpp>
#include <sstream>
#include <string>

#include "common/kube/workqueue.h"
#include "prometheus/text_serializer.h"

namespace nereid::gm {
namespace {

std::string Scrape(ControllerMetrics& metrics) {
  metrics.SampleWorkQueues();
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, metrics.registry().Collect());
  return out.str();
}

bool Has(const std::string& page, const std::string& line) {
  return page.find(line + "\n") != std::string::npos;
}

TEST_CASE("work queue depth, waiting and processing are sampled per controller at each scrape") {
  ControllerMetrics metrics(nullptr);
  kube::WorkQueue queue;
  metrics.TrackWorkQueue("dataset", &queue);
  queue.Add("default/a");
  queue.Add("default/b");
  queue.Add("default/c");
  queue.AddAfter("default/later", absl::Hours(1));
  std::optional<std::string> held = queue.Get();
  REQUIRE(held.has_value());

  std::string page = Scrape(metrics);
  CHECK(Has(page, "nereid_gm_workqueue_depth{controller=\"dataset\"} 2"));
  CHECK(Has(page, "nereid_gm_workqueue_waiting{controller=\"dataset\"} 1"));
  CHECK(Has(page, "nereid_gm_workqueue_processing{controller=\"dataset\"} 1"));

  queue.Done(*held);
  page = Scrape(metrics);
  CHECK(Has(page, "nereid_gm_workqueue_processing{controller=\"dataset\"} 0"));
  // Each key handed out is one observation of its time in the queue.
  CHECK(Has(page, "nereid_gm_workqueue_queue_duration_seconds_count{controller=\"dataset\"} 1"));
  REQUIRE(queue.Get().has_value());
  page = Scrape(metrics);
  CHECK(Has(page, "nereid_gm_workqueue_queue_duration_seconds_count{controller=\"dataset\"} 2"));

  // A stopped controller's queue is no longer read, and its gauges say it holds nothing.
  metrics.UntrackWorkQueue(&queue);
  page = Scrape(metrics);
  CHECK(Has(page, "nereid_gm_workqueue_depth{controller=\"dataset\"} 0"));
  CHECK(Has(page, "nereid_gm_workqueue_waiting{controller=\"dataset\"} 0"));
  queue.ShutDown();
}

}  // namespace
}  // namespace nereid::gm
