#include "globalmanager/kube_api_metrics.h"

#include <string>

namespace nereid::gm {

KubeApiMetrics::KubeApiMetrics(prometheus::Registry& registry)
    : requests_(prometheus::BuildCounter()
                    .Name("nereid_gm_kube_api_requests_total")
                    .Help("Requests to the Kubernetes API, each attempt, by method and HTTP code "
                          "(\"none\": no answer)")
                    .Register(registry)),
      throttled_(prometheus::BuildCounter()
                     .Name("nereid_gm_kube_api_throttled_requests_total")
                     .Help("Kubernetes API requests that waited for the client-side rate limit")
                     .Register(registry)
                     .Add({})),
      throttled_seconds_(prometheus::BuildCounter()
                             .Name("nereid_gm_kube_api_throttled_seconds_total")
                             .Help("Time Kubernetes API requests waited for the client-side rate "
                                   "limit")
                             .Register(registry)
                             .Add({})) {}

void KubeApiMetrics::OnResponse(std::string_view method, int code) {
  const std::string code_label = code > 0 ? std::to_string(code) : "none";
  requests_.Add({{"method", std::string(method)}, {"code", code_label}}).Increment();
}

void KubeApiMetrics::OnThrottled(absl::Duration waited) {
  throttled_.Increment();
  throttled_seconds_.Increment(absl::ToDoubleSeconds(waited));
}

}  // namespace nereid::gm
