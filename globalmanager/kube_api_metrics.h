#pragma once

// Metrics of the GM's requests to the Kubernetes API (the RestClient's RequestObserver):
//   nereid_gm_kube_api_requests_total{method, code}       every attempt; code "none" when no answer
//                                                          came (connection, TLS, timeout)
//   nereid_gm_kube_api_throttled_requests_total           requests that waited for the client-side
//                                                          rate limit (--kube-api-qps/-burst)
//   nereid_gm_kube_api_throttled_seconds_total            the time they waited
// Thread-safe.

#include <string_view>

#include "absl/time/time.h"
#include "common/kube/rest_client.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/registry.h"

namespace nereid::gm {

class KubeApiMetrics final : public kube::RequestObserver {
 public:
  explicit KubeApiMetrics(prometheus::Registry& registry);

  void OnResponse(std::string_view method, int code) override;
  void OnThrottled(absl::Duration waited) override;

 private:
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Counter& throttled_;
  prometheus::Counter& throttled_seconds_;
};

}  // namespace nereid::gm
