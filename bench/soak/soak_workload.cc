#include "bench/soak/soak_workload.h"

#include <algorithm>
#include <fstream>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/bench_setup.h"
#include "common/api/sedna_contract.h"
#include "common/kube/object.h"
#include "tests/support/subprocess.h"

namespace nereid::bench {
namespace {

using Json = nlohmann::json;

constexpr int kLcChurnEvery = 5;
constexpr int kLcChurnWindow = 20;
constexpr int kModelEvery = 5;
constexpr int kServiceEvery = 10;
constexpr int kServiceWindow = 30;
constexpr char kLittleModel[] = "soak-little-model";
constexpr char kBigModel[] = "soak-big-model";

std::string SimDatasetName(int64_t round) { return absl::StrCat("soak-sim-", round); }
std::string LcChurnName(int64_t round) { return absl::StrCat("soak-lc-churn-", round); }
std::string ModelName(int64_t round) { return absl::StrCat("soak-model-", round); }
std::string ServiceName(int64_t round) { return absl::StrCat("soak-ji-", round); }

}  // namespace

Json SoakWorkload::DatasetObject(const std::string& name, const std::string& node,
                                 const std::string& url) const {
  return {{"apiVersion", "sedna.io/v1alpha1"},
          {"kind", "Dataset"},
          {"metadata", {{"name", name}, {"namespace", options_.ns}}},
          {"spec", {{"url", url}, {"format", "txt"}, {"nodeName", node}}}};
}

absl::Status SoakWorkload::Prepare() {
  kube::KubeClient& client = cluster_->client();
  for (const char* name : {kLittleModel, kBigModel}) {
    absl::StatusOr<Json> created =
        client.Create(api::resources::Models(), options_.ns, ModelObject(name));
    if (!created.ok()) return created.status();
  }
  for (SoakLc& lc : cluster_->lcs()) {
    // A small file the churned Datasets point at.
    AppendLines(lc.host_root + "/data/churn.txt", 10);
    for (int d = 0; d < 2; ++d) {
      const std::string name = absl::StrCat("soak-", lc.node, "-ds-", d);
      const std::string url = absl::StrCat("/data/", name, ".txt");
      lc_datasets_[name] = {lc.host_root + url, 0};
      AppendLines(lc.host_root + url, options_.lines_per_append);
      lc_datasets_[name].second = options_.lines_per_append;
      absl::StatusOr<Json> created = client.Create(api::resources::Datasets(), options_.ns,
                                                   DatasetObject(name, lc.node, url));
      if (!created.ok()) return created.status();
    }
  }
  return absl::OkStatus();
}

void SoakWorkload::Start() {
  started_ = true;
  thread_ = std::thread([this] { Loop(); });
}

void SoakWorkload::Stop() {
  if (!started_) return;
  started_ = false;
  if (!stop_.HasBeenNotified()) stop_.Notify();
  thread_.join();
}

SoakWorkload::Counts SoakWorkload::counts() const {
  absl::MutexLock lock(&mu_);
  return counts_;
}

void SoakWorkload::Loop() {
  const absl::Time start = absl::Now();
  absl::Time next = start;
  for (int64_t round = 0; !stop_.HasBeenNotified(); ++round) {
    Round(round);
    {
      absl::MutexLock lock(&mu_);
      ++counts_.rounds;
    }
    // A round that overran starts the next at once; missed rounds are not made up in a burst.
    next = std::max(next + options_.round, absl::Now());
    stop_.WaitForNotificationWithTimeout(next - absl::Now());
  }
}

void SoakWorkload::Round(int64_t round) {
  for (auto& [name, file] : lc_datasets_) {
    AppendLines(file.first, options_.lines_per_append);
    file.second += options_.lines_per_append;
  }

  const int nodes = static_cast<int>(cluster_->simulator().size());
  Create(api::resources::Datasets(),
         DatasetObject(SimDatasetName(round), SoakCluster::SimNodeName(round % nodes),
                       absl::StrCat("/data/sim/", round, ".txt")));
  if (round >= options_.sim_dataset_window) {
    Delete(api::resources::Datasets(), SimDatasetName(round - options_.sim_dataset_window));
  }
  if (round % options_.report_every == 0) {
    const std::size_t queued = cluster_->simulator().QueueDatasetReports(
        [round](const std::string&, const std::string&) { return round + 1; });
    absl::MutexLock lock(&mu_);
    counts_.reports_queued += static_cast<int64_t>(queued);
  }

  std::vector<SoakLc>& lcs = cluster_->lcs();
  if (round % kLcChurnEvery == 0 && !lcs.empty()) {
    const SoakLc& lc = lcs[(round / kLcChurnEvery) % lcs.size()];
    Create(api::resources::Datasets(),
           DatasetObject(LcChurnName(round), lc.node, "/data/churn.txt"));
    if (round >= kLcChurnWindow) {
      Delete(api::resources::Datasets(), LcChurnName(round - kLcChurnWindow));
    }
  }
  if (round % kModelEvery == 0) {
    Create(api::resources::Models(), ModelObject(ModelName(round)));
    const int64_t old = round - static_cast<int64_t>(options_.model_window) * kModelEvery;
    if (old >= 0) Delete(api::resources::Models(), ModelName(old));
  }
  if (round % kServiceEvery == 0 && !lcs.empty()) {
    const SoakLc& lc = lcs[(round / kServiceEvery) % lcs.size()];
    Create(api::resources::JointInferenceServices(),
           JointInferenceServiceObject(ServiceName(round), lc.node, kLittleModel, kBigModel));
    if (round >= kServiceWindow) {
      Delete(api::resources::JointInferenceServices(), ServiceName(round - kServiceWindow));
    }
  }
}

void SoakWorkload::AppendLines(const std::string& file, int lines) {
  std::ofstream out(file, std::ios::app);
  for (int i = 0; i < lines; ++i) out << "images/" << i << ".jpg 1\n";
  out.flush();
  absl::MutexLock lock(&mu_);
  if (!out) {
    ++counts_.failures;
    if (counts_.first_failure.empty()) counts_.first_failure = "append to " + file;
    return;
  }
  counts_.appended_lines += lines;
}

void SoakWorkload::Create(const kube::Resource& resource, Json object) {
  absl::StatusOr<Json> created = cluster_->client().Create(resource, options_.ns, object);
  if (!created.ok()) return Fail(absl::StrCat("create ", kube::Name(object)), created.status());
  absl::MutexLock lock(&mu_);
  ++counts_.creates;
}

void SoakWorkload::Delete(const kube::Resource& resource, const std::string& name) {
  absl::Status deleted = cluster_->client().Delete(resource, options_.ns, name);
  if (!deleted.ok()) return Fail(absl::StrCat("delete ", name), deleted);
  absl::MutexLock lock(&mu_);
  ++counts_.deletes;
}

void SoakWorkload::Fail(const std::string& what, const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  ++counts_.failures;
  if (counts_.first_failure.empty()) {
    counts_.first_failure = absl::StrCat(what, ": ", status.ToString());
  }
}

absl::Status SoakWorkload::WaitConverged(absl::Duration timeout) {
  std::string behind;
  const bool converged = testing::WaitFor(
      [&] {
        behind.clear();
        for (const auto& [name, file] : lc_datasets_) {
          absl::StatusOr<Json> dataset =
              cluster_->client().Get(api::resources::Datasets(), options_.ns, name);
          const Json* samples =
              dataset.ok() ? kube::FindPath(*dataset, "status.numberOfSamples") : nullptr;
          if (samples == nullptr || !samples->is_number_integer() ||
              samples->get<int64_t>() != file.second) {
            behind = absl::StrCat(name, " shows ", samples ? samples->dump() : "no count",
                                  ", its file has ", file.second, " lines");
            return false;
          }
        }
        const SimTally& tally = cluster_->simulator().tally();
        const int64_t answered = tally.reports_accepted.load() + tally.reports_rejected.load();
        if (answered < tally.reports_queued.load()) {
          behind = absl::StrCat(answered, " of ", tally.reports_queued.load(),
                                " simulated reports answered");
          return false;
        }
        return true;
      },
      timeout, absl::Milliseconds(500));
  if (converged) return absl::OkStatus();
  return absl::DeadlineExceededError(
      absl::StrCat("not converged ", absl::FormatDuration(timeout), " after the churn: ", behind));
}

}  // namespace nereid::bench
