#include "globalmanager/kube_api_metrics.h"

#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "prometheus/text_serializer.h"

namespace nereid::gm {
namespace {

TEST_CASE("Kubernetes API requests are counted by method and code, waits in seconds",
          "[gm][metrics]") {
  auto registry = std::make_shared<prometheus::Registry>();
  KubeApiMetrics metrics(*registry);
  kube::RequestObserver& observer = metrics;
  observer.OnResponse("GET", 200);
  observer.OnResponse("GET", 200);
  observer.OnResponse("PUT", 429);
  observer.OnResponse("PUT", 0);
  observer.OnThrottled(absl::Milliseconds(250));
  observer.OnThrottled(absl::Milliseconds(500));
  const std::string page = prometheus::TextSerializer().Serialize(registry->Collect());
  const std::string requests = "nereid_gm_kube_api_requests_total";
  CHECK_THAT(page, Catch::Contains(requests + "{code=\"200\",method=\"GET\"} 2"));
  CHECK_THAT(page, Catch::Contains(requests + "{code=\"429\",method=\"PUT\"} 1"));
  CHECK_THAT(page, Catch::Contains(requests + "{code=\"none\",method=\"PUT\"} 1"));
  CHECK_THAT(page, Catch::Contains("nereid_gm_kube_api_throttled_requests_total 2"));
  CHECK_THAT(page, Catch::Contains("nereid_gm_kube_api_throttled_seconds_total 0.75"));
}

}  // namespace
}  // namespace nereid::gm
