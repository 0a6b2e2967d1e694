#include "globalmanager/edgehub/report_scheduler.h"

#include <algorithm>
#include <utility>

namespace nereid::gm {

namespace {

// A report that carries the whole latest state of its object: a newer one makes it moot.
bool LatestWins(const edge::v1::StatusReport& report) {
  return report.has_dataset() || report.has_model();
}

}  // namespace

ReportScheduler::ReportScheduler(Options options) : options_(options) {}

std::size_t ReportScheduler::held(const std::string& node) const {
  auto it = nodes_.find(node);
  return it == nodes_.end() ? 0 : it->second.held;
}

std::size_t ReportScheduler::FairShare(bool one_more_holder) const {
  // One more than the holders: room is left for a node that holds nothing yet.
  const std::size_t holders = nodes_.size() + (one_more_holder ? 1 : 0) + 1;
  return std::max(options_.min_share, options_.max_total / holders);
}

bool ReportScheduler::Holds(const ObjectReports& object, uint64_t seq) {
  if (object.dispatched != nullptr && object.dispatched->seq() == seq) return true;
  if (std::find(object.riders.begin(), object.riders.end(), seq) != object.riders.end()) {
    return true;
  }
  return std::any_of(object.waiting.begin(), object.waiting.end(),
                     [seq](const ReportPtr& r) { return r->seq() == seq; });
}

ReportScheduler::Admission ReportScheduler::Admit(const std::string& node, const std::string& key,
                                                  ReportPtr report) {
  auto node_it = nodes_.find(node);
  const std::size_t node_held = node_it == nodes_.end() ? 0 : node_it->second.held;
  if (node_it != nodes_.end()) {
    auto object_it = node_it->second.objects.find(key);
    if (object_it != node_it->second.objects.end() && Holds(object_it->second, report->seq())) {
      return Admission::kDuplicate;
    }
  }
  if (node_held >= options_.max_per_node) return Admission::kNodeFull;
  if (node_held >= FairShare(node_it == nodes_.end())) return Admission::kOverShare;
  if (held_ >= options_.max_total) return Admission::kTotalFull;

  NodeReports& reports = node_it != nodes_.end() ? node_it->second : nodes_[node];
  ObjectReports& object = reports.objects[key];
  object.waiting.push_back(std::move(report));
  ++reports.held;
  ++held_;
  if (object.dispatched == nullptr && object.waiting.size() == 1) MarkReady(node, reports, key);
  return Admission::kQueued;
}

void ReportScheduler::MarkReady(const std::string& node, NodeReports& reports,
                                const std::string& key) {
  reports.ready.push_back(key);
  if (!reports.in_ring) {
    reports.in_ring = true;
    ring_.push_back(node);
  }
}

std::optional<ReportScheduler::Dispatch> ReportScheduler::Next() {
  if (dispatched_ >= options_.max_dispatched || ring_.empty()) return std::nullopt;
  std::string node = std::move(ring_.front());
  ring_.pop_front();
  NodeReports& reports = nodes_.at(node);
  std::string key = std::move(reports.ready.front());
  reports.ready.pop_front();
  if (reports.ready.empty()) {
    reports.in_ring = false;
  } else {
    ring_.push_back(node);  // its next object waits for every other node's turn
  }
  ObjectReports& object = reports.objects.at(key);
  // The newest of a leading run of latest-state reports answers the whole run.
  std::size_t take = 1;
  if (LatestWins(*object.waiting.front())) {
    while (take < object.waiting.size() && LatestWins(*object.waiting[take])) ++take;
  }
  for (std::size_t i = 0; i + 1 < take; ++i) object.riders.push_back(object.waiting[i]->seq());
  object.dispatched = object.waiting[take - 1];
  object.waiting.erase(object.waiting.begin(), object.waiting.begin() + take);
  ++dispatched_;
  return Dispatch{std::move(node), std::move(key), object.dispatched};
}

std::optional<std::vector<uint64_t>> ReportScheduler::Complete(const std::string& node,
                                                               const std::string& key,
                                                               uint64_t seq) {
  auto node_it = nodes_.find(node);
  if (node_it == nodes_.end()) return std::nullopt;
  NodeReports& reports = node_it->second;
  auto object_it = reports.objects.find(key);
  if (object_it == reports.objects.end()) return std::nullopt;
  ObjectReports& object = object_it->second;
  if (object.dispatched == nullptr || object.dispatched->seq() != seq) return std::nullopt;

  std::vector<uint64_t> answered = std::move(object.riders);
  object.riders.clear();
  answered.push_back(seq);
  object.dispatched.reset();
  --dispatched_;
  reports.held -= answered.size();
  held_ -= answered.size();
  if (!object.waiting.empty()) {
    MarkReady(node, reports, key);
  } else {
    reports.objects.erase(object_it);
    if (reports.held == 0) nodes_.erase(node_it);
  }
  return answered;
}

}  // namespace nereid::gm
