#include "globalmanager/controllers/controller_metrics.h"

namespace nereid::gm {
namespace {

const prometheus::Histogram::BucketBoundaries& DurationBuckets() {
  static const prometheus::Histogram::BucketBoundaries buckets = {
      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
  return buckets;
}

}  // namespace

std::string_view ReconcileResultName(ControllerMetrics::ReconcileResult result) {
  switch (result) {
    case ControllerMetrics::ReconcileResult::kSuccess: return "success";
    case ControllerMetrics::ReconcileResult::kError: return "error";
    case ControllerMetrics::ReconcileResult::kRequeue: return "requeue";
  }
  return "unknown";
}

std::string_view ReportResultName(ControllerMetrics::ReportResult result) {
  switch (result) {
    case ControllerMetrics::ReportResult::kAccepted: return "accepted";
    case ControllerMetrics::ReportResult::kRejected: return "rejected";
    case ControllerMetrics::ReportResult::kRetry: return "retry";
  }
  return "unknown";
}

ControllerMetrics::ControllerMetrics(std::shared_ptr<prometheus::Registry> registry)
    : registry_(registry ? std::move(registry) : std::make_shared<prometheus::Registry>()) {
  prometheus::Registry& r = *registry_;
  reconciles_ = &prometheus::BuildCounter()
                     .Name("nereid_gm_reconcile_total")
                     .Help("Reconciles run by the GM's controllers, by controller and result")
                     .Register(r);
  reconcile_duration_ = &prometheus::BuildHistogram()
                             .Name("nereid_gm_reconcile_duration_seconds")
                             .Help("Time one reconcile took, by controller")
                             .Register(r);
  reports_ = &prometheus::BuildCounter()
                  .Name("nereid_gm_reports_total")
                  .Help("Edge status reports handled, by object kind and outcome")
                  .Register(r);
  report_duration_ = &prometheus::BuildHistogram()
                          .Name("nereid_gm_report_duration_seconds")
                          .Help("Report received by the router -> outcome (queue wait included)")
                          .Register(r);
  report_queue_depth_ = &prometheus::BuildGauge()
                             .Name("nereid_gm_report_queue_depth")
                             .Help("Edge reports waiting for a report worker")
                             .Register(r)
                             .Add({});
  leader_ = &prometheus::BuildGauge()
                 .Name("nereid_gm_leader")
                 .Help("1 while this GM replica holds the leader Lease and runs the controllers")
                 .Register(r)
                 .Add({});
  ready_ = &prometheus::BuildGauge()
                .Name("nereid_gm_ready")
                .Help("1 while this GM replica is ready (/readyz 200: it leads, its caches synced "
                      "and its edge hub serves), sampled at each scrape")
                .Register(r)
                .Add({});
  queue_depth_ = &prometheus::BuildGauge()
                      .Name("nereid_gm_workqueue_depth")
                      .Help("Keys queued and ready for a worker, by controller")
                      .Register(r);
  queue_waiting_ = &prometheus::BuildGauge()
                        .Name("nereid_gm_workqueue_waiting")
                        .Help("Keys waiting for a retry or requeue time, by controller")
                        .Register(r);
  queue_duration_ = &prometheus::BuildHistogram()
                         .Name("nereid_gm_workqueue_queue_duration_seconds")
                         .Help("Time a key waited in a controller's queue before a worker took "
                               "it, by controller (client-go's workqueue_queue_duration_seconds)")
                         .Register(r);
  queue_processing_ = &prometheus::BuildGauge()
                           .Name("nereid_gm_workqueue_processing")
                           .Help("Keys a worker holds, by controller")
                           .Register(r);
}

void ControllerMetrics::TrackWorkQueue(const std::string& controller, kube::WorkQueue* queue) {
  prometheus::Histogram* waits =
      &queue_duration_->Add({{"controller", controller}}, DurationBuckets());
  queue->SetWaitObserver([waits](absl::Duration waited) {
    waits->Observe(absl::ToDoubleSeconds(waited));
  });
  absl::MutexLock lock(&queues_mu_);
  queues_[queue] = controller;
}

void ControllerMetrics::UntrackWorkQueue(kube::WorkQueue* queue) {
  queue->SetWaitObserver(nullptr);
  absl::MutexLock lock(&queues_mu_);
  auto it = queues_.find(queue);
  if (it == queues_.end()) return;
  const prometheus::Labels labels = {{"controller", it->second}};
  for (auto* family : {queue_depth_, queue_waiting_, queue_processing_}) family->Add(labels).Set(0);
  queues_.erase(it);
}

void ControllerMetrics::SampleWorkQueues() {
  absl::MutexLock lock(&queues_mu_);
  for (const auto& [queue, controller] : queues_) {
    const kube::WorkQueue::Metrics sample = queue->GetMetrics();
    const prometheus::Labels labels = {{"controller", controller}};
    queue_depth_->Add(labels).Set(static_cast<double>(sample.depth));
    queue_waiting_->Add(labels).Set(static_cast<double>(sample.waiting));
    queue_processing_->Add(labels).Set(static_cast<double>(sample.processing));
  }
}

void ControllerMetrics::ObserveReconcile(const std::string& controller, ReconcileResult result,
                                         absl::Duration duration) {
  reconciles_->Add({{"controller", controller}, {"result", std::string(ReconcileResultName(result))}})
      .Increment();
  reconcile_duration_->Add({{"controller", controller}}, DurationBuckets())
      .Observe(absl::ToDoubleSeconds(duration));
}

void ControllerMetrics::ObserveReport(const std::string& kind, ReportResult result,
                                      absl::Duration duration) {
  reports_->Add({{"kind", kind}, {"outcome", std::string(ReportResultName(result))}}).Increment();
  report_duration_->Add({{"kind", kind}}, DurationBuckets())
      .Observe(absl::ToDoubleSeconds(duration));
}

double ControllerMetrics::ReconcileCount(const std::string& controller, ReconcileResult result) {
  return reconciles_
      ->Add({{"controller", controller}, {"result", std::string(ReconcileResultName(result))}})
      .Value();
}

double ControllerMetrics::ReportCount(const std::string& kind, ReportResult result) {
  return reports_->Add({{"kind", kind}, {"outcome", std::string(ReportResultName(result))}})
      .Value();
}

}  // namespace nereid::gm
