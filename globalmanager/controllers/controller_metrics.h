#pragma once

// Prometheus metrics of the GM's controllers (prometheus-cpp core), registered in the daemon's
// registry next to the edge hub's, so /metrics shows both:
//   nereid_gm_reconcile_total{controller, result="success|error|requeue"}
//   nereid_gm_reconcile_duration_seconds{controller}           (histogram)
//   nereid_gm_reports_total{kind, outcome="accepted|rejected|retry"}
//   nereid_gm_report_duration_seconds{kind}                    (histogram; queue wait included)
//   nereid_gm_report_queue_depth                                (reports waiting for a worker)
//   nereid_gm_leader                                            (1 while this replica leads)
//   nereid_gm_ready                                             (1 while /readyz answers 200)
//   nereid_gm_workqueue_depth{controller}        keys ready for a worker   } sampled from each
//   nereid_gm_workqueue_waiting{controller}      keys waiting for a retry  } running controller's
//   nereid_gm_workqueue_processing{controller}   keys a worker holds       } queue at each scrape
// Thread-safe (prometheus-cpp metrics are; the label lookups take a lock).

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/kube/workqueue.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace nereid::gm {

class ControllerMetrics {
 public:
  enum class ReconcileResult { kSuccess, kError, kRequeue };
  enum class ReportResult { kAccepted, kRejected, kRetry };

  // `registry` may be null: the metrics then live in a private registry (tests).
  explicit ControllerMetrics(std::shared_ptr<prometheus::Registry> registry);

  prometheus::Registry& registry() { return *registry_; }

  void ObserveReconcile(const std::string& controller, ReconcileResult result,
                        absl::Duration duration);
  void ObserveReport(const std::string& kind, ReportResult result, absl::Duration duration);
  prometheus::Gauge& report_queue_depth() { return *report_queue_depth_; }
  prometheus::Gauge& leader() { return *leader_; }
  prometheus::Gauge& ready() { return *ready_; }

  // A running controller's queue, sampled by SampleWorkQueues until untracked (then its gauges
  // read 0: a stopped controller holds no work).
  void TrackWorkQueue(const std::string& controller, kube::WorkQueue* queue);
  void UntrackWorkQueue(kube::WorkQueue* queue);
  // Called before each scrape.
  void SampleWorkQueues();

  // Current values, for tests and /readyz detail.
  double ReconcileCount(const std::string& controller, ReconcileResult result);
  double ReportCount(const std::string& kind, ReportResult result);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>* reconciles_;
  prometheus::Family<prometheus::Histogram>* reconcile_duration_;
  prometheus::Family<prometheus::Counter>* reports_;
  prometheus::Family<prometheus::Histogram>* report_duration_;
  prometheus::Gauge* report_queue_depth_;
  prometheus::Gauge* leader_;
  prometheus::Gauge* ready_;
  prometheus::Family<prometheus::Gauge>* queue_depth_;
  prometheus::Family<prometheus::Gauge>* queue_waiting_;
  prometheus::Family<prometheus::Gauge>* queue_processing_;
  prometheus::Family<prometheus::Histogram>* queue_duration_;
  absl::Mutex queues_mu_;
  std::map<kube::WorkQueue*, std::string> queues_ ABSL_GUARDED_BY(queues_mu_);  // -> controller
};

std::string_view ReconcileResultName(ControllerMetrics::ReconcileResult result);
std::string_view ReportResultName(ControllerMetrics::ReportResult result);

}  // namespace nereid::gm
