// API requests per object: what the GM costs the API server. A real `globalmanager`
// against a real `devapiserver`, which counts every request by verb, resource and user agent
// (GET /debug/requests); only the GM's own requests are reported.
//
//   api_requests_bench --devapiserver BIN --globalmanager BIN --crd deploy/crds
//       [--kind JointInferenceService|FeatureExtractionService|FederatedLearningJob]
//       [--services 200] [--quiet 1m]
//       [--settle 3s] [--resync 30s] [--kube-api-qps Q] [--kube-api-burst B] [--timeout 10m]
//       [--enforce] [--s3-models] [--gm-arg=ARG]...   (--help: every flag with its default)
//
// --kind: what is created (default JointInferenceService: two Deployments and a Service each;
// FeatureExtractionService: one Deployment and a Service each, its worker on a fixed node;
// FederatedLearningJob: an aggregation pod and its Service, one training pod on a fixed node with
// a Dataset there, and the job library's headless Service).
//
// Phases:
//   setup   devapiserver (in memory), every CRD, the two Models the services name (with
//           --s3-models: s3:// URLs naming one Secret in Sedna's format, which every service's
//           reconcile then needs, so the `get secrets` rows show what the GM's Secret cache
//           saves; compare with --gm-arg=--secret-cache-ttl=0s), the GM
//           (--insecure, no leader election: no Lease traffic) until /readyz.
//   create  N objects of --kind created at once (edge worker on a fixed node, so no Node
//           objects are needed; no LC is needed for the GM to create the children). Counted from
//           the first create until steady state: all their Deployments and Services exist, every
//           object has a status phase for its generation, and then the GM made no request for
//           --settle seconds (the wait for that is capped; the table says whether it went quiet).
//   quiet   one window of --quiet seconds with nothing changing. The GM's informer resync period
//           is --resync (the GM's --min-resync-period), so a window longer than 2×resync
//           sees a full resync pass.
// Watches and Leases are left out of the totals (the per-object targets leave them aside) but
// shown.
// Targets: create ≤ 1.25 × the writes needed (the Deployments, Services and N status writes),
// quiet window ≤ 5 requests per minute. Exit 1 when a phase fails; with --enforce also when a
// target is missed.

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/bench_setup.h"
#include "common/api/sedna_contract.h"
#include "common/kube/config.h"
#include "common/kube/object.h"
#include "common/kube/resource.h"
#include "common/kube/rest_client.h"
#include "common/status/macros.h"
#include "tests/support/subprocess.h"

namespace nereid::bench {
namespace {

using kube::Json;
using testing::Subprocess;

constexpr char kNamespace[] = "default";
constexpr char kS3Secret[] = "bench-s3";
constexpr double kTargetCreateRatio = 1.25;
constexpr double kTargetQuietPerMinute = 5;

constexpr char kDataset[] = "bench-ds";

// What the bench creates: a kind, its children per object and an object of it.
struct Workload {
  const kube::Resource* resource;
  int deployments = 0;  // per object
  int services = 0;     // per object
  int pods = 0;         // per object
  bool dataset = false;  // names the Dataset kDataset (created at setup)
  // The object `name`, its workers on node edge-0, naming the Models little-model / big-model.
  Json (*object)(const std::string& name);
};

Json FeatureExtractionServiceObject(const std::string& name) {
  const Json labels = {{"app", name}};
  return {{"apiVersion", "sedna.io/v1alpha1"},
          {"kind", "FeatureExtractionService"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"model", {{"name", "little-model"}}},
            {"selector", {{"matchLabels", labels}}},
            {"template",
             {{"metadata", {{"labels", labels}}},
              {"spec",
               {{"nodeName", "edge-0"},
                {"containers",
                 Json::array({{{"name", "fe"}, {"image", "example/fe"}}})}}}}}}}};
}

Json FederatedLearningJobObject(const std::string& name) {
  auto pod_spec = [](const std::string& container) {
    return Json{{"containers", Json::array({{{"name", container}, {"image", "example/fl"}}})}};
  };
  Json trainer_spec = pod_spec("train");
  trainer_spec["nodeName"] = "edge-0";
  return {{"apiVersion", "sedna.io/v1alpha1"},
          {"kind", "FederatedLearningJob"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"aggregationWorker",
             {{"model", {{"name", "little-model"}}}, {"template", {{"spec", pod_spec("agg")}}}}},
            {"trainingWorkers",
             Json::array({{{"dataset", {{"name", kDataset}}},
                           {"template", {{"spec", std::move(trainer_spec)}}}}})}}}};
}

absl::StatusOr<Workload> WorkloadOf(const std::string& kind) {
  if (kind == "JointInferenceService") {
    return Workload{&api::resources::JointInferenceServices(), 2, 1, 0, false,
                    [](const std::string& name) {
                      return JointInferenceServiceObject(name, "edge-0", "little-model",
                                                         "big-model");
                    }};
  }
  if (kind == "FeatureExtractionService") {
    return Workload{&api::resources::FeatureExtractionServices(), 1, 1, 0, false,
                    &FeatureExtractionServiceObject};
  }
  if (kind == "FederatedLearningJob") {
    return Workload{&api::resources::FederatedLearningJobs(), 0, 2, 2, true,
                    &FederatedLearningJobObject};
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--kind ", kind, ": JointInferenceService, FeatureExtractionService or FederatedLearningJob"));
}

struct Flags {
  std::string devapiserver;
  std::string globalmanager;
  std::vector<std::string> crds;
  std::string kind = "JointInferenceService";
  int services = 200;
  double quiet_seconds = 60;
  double settle_seconds = 3;
  int64_t resync_seconds = 30;
  int kube_api_qps = 0;    // 0: the GM's default
  int kube_api_burst = 0;  // 0: the GM's default
  double timeout_seconds = 600;
  bool enforce = false;
  bool s3_models = false;
  std::vector<std::string> gm_args;  // passed to the GM as they are
};

// Every flag, bound to the fields of `f` (whose values are the defaults --help shows).
config::OptionSet RegisterOptions(Flags& f) {
  config::OptionSet options(
      "api_requests_bench",
      "usage: api_requests_bench --devapiserver BIN --globalmanager BIN --crd DIR... [flags]", "");
  options.Add("devapiserver", &f.devapiserver, "devapiserver binary (required)");
  options.Add("globalmanager", &f.globalmanager, "globalmanager binary (required)");
  options.AddList("crd", &f.crds, "CRD file or directory (required)");
  options.AddCustom("kind", "KIND", f.kind,
                    "JointInferenceService, FeatureExtractionService or FederatedLearningJob",
                    [&f](std::string_view value, std::string*) -> absl::Status {
                      RETURN_IF_ERROR(WorkloadOf(std::string(value)).status());
                      f.kind = std::string(value);
                      return absl::OkStatus();
                    });
  options.Add("services", &f.services, "objects created", 1);
  options.AddSeconds("quiet", &f.quiet_seconds, "window with nothing changing",
                     absl::ZeroDuration());
  options.AddSeconds("settle", &f.settle_seconds, "GM silence that ends the create phase",
                     absl::ZeroDuration());
  options.AddSeconds("resync", &f.resync_seconds, "the GM's --min-resync-period", 0, 86400);
  options.Add("kube-api-qps", &f.kube_api_qps, "the GM's --kube-api-qps, 0 = its default", 0);
  options.Add("kube-api-burst", &f.kube_api_burst, "the GM's --kube-api-burst, 0 = its default",
              0);
  options.AddSeconds("timeout", &f.timeout_seconds, "limit of the create phase",
                     absl::Seconds(1));
  options.AddSwitch("enforce", &f.enforce, true, "exit 1 when a target is missed");
  options.AddSwitch("s3-models", &f.s3_models, true, "s3:// Models naming one Secret");
  options.AddList("gm-arg", &f.gm_args, "a GM flag, e.g. --gm-arg=--secret-cache-ttl=0s");
  return options;
}

absl::Status CheckRequired(const Flags& flags) {
  if (flags.devapiserver.empty() || flags.globalmanager.empty() || flags.crds.empty()) {
    return absl::InvalidArgumentError("--devapiserver, --globalmanager and --crd are required");
  }
  return absl::OkStatus();
}

// The GM's requests: "verb resource" → count.
using Counts = ApiRequestCounts;

// Watches and Leases: what the targets leave aside.
bool AsideFromTargets(const std::string& key) {
  return key.rfind("watch ", 0) == 0 || key.find(" leases") != std::string::npos;
}

int64_t Total(const Counts& counts) {
  int64_t total = 0;
  for (const auto& [key, count] : counts) {
    if (!AsideFromTargets(key)) total += count;
  }
  return total;
}

int64_t Count(const Counts& counts, const std::string& key) {
  auto it = counts.find(key);
  return it == counts.end() ? 0 : it->second;
}

class ApiRequestsBench {
 public:
  ApiRequestsBench(Flags flags, Workload workload)
      : flags_(std::move(flags)), workload_(workload) {}

  absl::Status Run();
  // Prints the tables; returns whether both targets were met.
  bool Report(std::ostream& out) const;
  bool stopped_cleanly() const { return gm_exit_ == 0; }

 private:
  absl::Status Setup();
  absl::Status CreateServices();
  absl::Status Quiet();
  absl::StatusOr<Counts> GmCounts() const;
  // Whether every child exists and every service has a status for its generation.
  absl::StatusOr<bool> Settled();
  std::string Dir(const std::string& name) const { return dir_->File(name); }

  const Flags flags_;
  const Workload workload_;
  std::optional<testing::TempDir> dir_;
  std::unique_ptr<Subprocess> api_;
  std::unique_ptr<Subprocess> gm_;
  int api_port_ = 0;
  std::unique_ptr<kube::RestClient> client_;

  std::string load_before_, load_after_;
  Counts create_, quiet_;
  double create_seconds_ = 0;   // first create → objects settled
  double settled_seconds_ = 0;  // first create → the GM went quiet (or the cap)
  bool went_quiet_ = false;
  double quiet_seconds_ = 0;
  int gm_exit_ = -1;
  double stop_seconds_ = 0;  // SIGTERM -> exit (or the 10 s limit)
};

absl::StatusOr<Counts> ApiRequestsBench::GmCounts() const {
  return FetchApiRequestCounts(api_port_, kGmUserAgent);
}

absl::Status ApiRequestsBench::Setup() {
  ASSIGN_OR_RETURN(testing::TempDir dir, testing::TempDir::Create("api-requests-"));
  dir_.emplace(std::move(dir));
  ASSIGN_OR_RETURN(DevApiServer api, StartDevApiServer(flags_.devapiserver, Dir("kubeconfig")));
  api_ = std::move(api.process);
  api_port_ = api.port;
  ASSIGN_OR_RETURN(kube::KubeConfig kube_config, kube::LoadKubeConfigFile(Dir("kubeconfig")));
  kube::RestClient::Options rest;
  rest.qps = 0;
  rest.user_agent = "api-requests-bench";
  ASSIGN_OR_RETURN(client_, kube::RestClient::Create(kube_config, rest));
  RETURN_IF_ERROR(CreateCrds(*client_, flags_.crds, *workload_.resource));
  if (flags_.s3_models) {
    const Json secret = {
        {"apiVersion", "v1"},
        {"kind", "Secret"},
        {"metadata",
         {{"name", kS3Secret},
          {"namespace", kNamespace},
          {"annotations", {{"s3-endpoint", "127.0.0.1:9000"}, {"s3-usehttps", "0"}}}}},
        {"stringData",
         {{"ACCESS_KEY_ID", "AKIDBENCHKEYID000001"}, {"SECRET_ACCESS_KEY", "bench-secret-key"}}}};
    RETURN_IF_ERROR(client_->Create(kube::resources::Secrets(), kNamespace, secret).status());
  }
  for (const char* model : {"little-model", "big-model"}) {
    Json object = ModelObject(model);
    if (flags_.s3_models) {
      object["spec"]["url"] = absl::StrCat("s3://models/", model, ".pb");
      object["spec"]["credentialName"] = kS3Secret;
    }
    RETURN_IF_ERROR(client_->Create(api::resources::Models(), kNamespace, object).status());
  }
  if (workload_.dataset) {
    const Json dataset = {{"apiVersion", "sedna.io/v1alpha1"},
                          {"kind", "Dataset"},
                          {"metadata", {{"name", kDataset}}},
                          {"spec",
                           {{"url", "/data/train.txt"}, {"format", "txt"}, {"nodeName", "edge-0"}}}};
    RETURN_IF_ERROR(
        client_->Create(api::resources::Datasets(), kNamespace, dataset).status());
  }

  Subprocess::Options gm;
  gm.argv = {flags_.globalmanager, "--kubeconfig", Dir("kubeconfig"), "--listen", "127.0.0.1:0",
             "--http-listen", "127.0.0.1:0", "--insecure", "--leader-elect=false",
             absl::StrCat("--min-resync-period=", flags_.resync_seconds, "s"),
             "--log-level", "warning"};
  if (flags_.kube_api_qps > 0) {
    gm.argv.push_back("--kube-api-qps");
    gm.argv.push_back(std::to_string(flags_.kube_api_qps));
  }
  if (flags_.kube_api_burst > 0) {
    gm.argv.push_back("--kube-api-burst");
    gm.argv.push_back(std::to_string(flags_.kube_api_burst));
  }
  for (const std::string& arg : flags_.gm_args) gm.argv.push_back(arg);
  gm.capture_stderr = true;
  ASSIGN_OR_RETURN(GlobalManager started, StartGlobalManager(std::move(gm)));
  gm_ = std::move(started.process);
  return absl::OkStatus();
}

absl::StatusOr<bool> ApiRequestsBench::Settled() {
  ASSIGN_OR_RETURN(kube::ObjectList deployments,
                   kube::ListAll(*client_, kube::resources::Deployments(), kNamespace, {}));
  ASSIGN_OR_RETURN(kube::ObjectList services,
                   kube::ListAll(*client_, kube::resources::Services(), kNamespace, {}));
  const size_t n = static_cast<size_t>(flags_.services);
  if (deployments.items.size() < static_cast<size_t>(workload_.deployments) * n ||
      services.items.size() < static_cast<size_t>(workload_.services) * n) {
    return false;
  }
  if (workload_.pods > 0) {
    ASSIGN_OR_RETURN(kube::ObjectList pods,
                     kube::ListAll(*client_, kube::resources::Pods(), kNamespace, {}));
    if (pods.items.size() < static_cast<size_t>(workload_.pods) * n) return false;
  }
  ASSIGN_OR_RETURN(kube::ObjectList objects,
                   kube::ListAll(*client_, *workload_.resource, kNamespace, {}));
  for (const Json& object : objects.items) {
    if (kube::StringAt(object, "status.phase").empty()) return false;
    const Json* observed = kube::FindPath(object, "status.observedGeneration");
    if (observed == nullptr || *observed != kube::Generation(object)) return false;
  }
  return objects.items.size() == n;
}

absl::Status ApiRequestsBench::CreateServices() {
  std::cerr << "api_requests_bench: creating " << flags_.services << " " << flags_.kind << "s"
            << std::endl;
  ASSIGN_OR_RETURN(const Counts before, GmCounts());
  const absl::Time start = absl::Now();
  for (int i = 0; i < flags_.services; ++i) {
    const Json object = workload_.object(absl::StrFormat("obj-%04d", i));
    RETURN_IF_ERROR(client_->Create(*workload_.resource, kNamespace, object).status());
  }
  const absl::Duration timeout = absl::Seconds(flags_.timeout_seconds);
  absl::Status last = absl::OkStatus();
  if (!testing::WaitFor(
          [&] {
            absl::StatusOr<bool> settled = Settled();
            last = settled.status();
            return settled.ok() && *settled;
          },
          timeout, absl::Milliseconds(200))) {
    return absl::DeadlineExceededError(absl::StrCat(
        "the children and statuses of ", flags_.services, " services did not settle in ",
        flags_.timeout_seconds, " s (", last.ToString(), "); GM log:\n", gm_->Stderr()));
  }
  create_seconds_ = absl::ToDoubleSeconds(absl::Now() - start);
  // Then until the GM has made no request for --settle seconds, at most 10 × --settle (or 30 s):
  // events and late status writes belong to the creation.
  const absl::Duration settle = absl::Seconds(flags_.settle_seconds);
  const absl::Time cap = absl::Now() + std::max(10 * settle, absl::Seconds(30));
  ASSIGN_OR_RETURN(Counts last_counts, GmCounts());
  absl::Time last_change = absl::Now();
  while (absl::Now() < cap) {
    absl::SleepFor(absl::Milliseconds(200));
    ASSIGN_OR_RETURN(Counts now, GmCounts());
    if (Total(now) != Total(last_counts)) {
      last_counts = std::move(now);
      last_change = absl::Now();
    } else if (absl::Now() - last_change >= settle) {
      went_quiet_ = true;
      break;
    }
  }
  settled_seconds_ = absl::ToDoubleSeconds(last_change - start);
  create_ = Minus(last_counts, before);
  return absl::OkStatus();
}

absl::Status ApiRequestsBench::Quiet() {
  std::cerr << "api_requests_bench: quiet window of " << flags_.quiet_seconds << " s" << std::endl;
  ASSIGN_OR_RETURN(const Counts before, GmCounts());
  const absl::Time start = absl::Now();
  // The window is the measurement: nothing is waited for, the GM's requests in it are counted.
  absl::SleepFor(absl::Seconds(flags_.quiet_seconds));
  ASSIGN_OR_RETURN(const Counts after, GmCounts());
  quiet_seconds_ = absl::ToDoubleSeconds(absl::Now() - start);
  quiet_ = Minus(after, before);
  return absl::OkStatus();
}

absl::Status ApiRequestsBench::Run() {
  load_before_ = LoadAverage();
  RETURN_IF_ERROR(Setup());
  RETURN_IF_ERROR(CreateServices());
  RETURN_IF_ERROR(Quiet());
  load_after_ = LoadAverage();
  if (!gm_->Running()) {
    return absl::InternalError(absl::StrCat("the GM exited; its log:\n", gm_->Stderr()));
  }
  // Counted already: a GM slow to stop (e.g. still sending throttled Events) is reported, not
  // fatal to the figures.
  const absl::Time stop = absl::Now();
  absl::StatusOr<int> exit_code = gm_->Stop(absl::Seconds(10));
  stop_seconds_ = absl::ToDoubleSeconds(absl::Now() - stop);
  gm_exit_ = exit_code.ok() ? *exit_code : -1;
  return absl::OkStatus();
}

void PrintCounts(std::ostream& out, const Counts& counts) {
  for (const auto& [key, count] : counts) {
    out << absl::StrFormat("  %-44s %8d%s\n", key, count,
                           AsideFromTargets(key) ? "  (aside)" : "");
  }
  out << absl::StrFormat("  %-44s %8d\n", "total (watches and leases aside)", Total(counts));
}

bool ApiRequestsBench::Report(std::ostream& out) const {
  const int n = flags_.services;
  const int deployments = workload_.deployments * n;
  const int services = workload_.services * n;
  const int pods = workload_.pods * n;
  const int64_t needed = deployments + services + pods + n;
  const std::string status_key = absl::StrCat(workload_.resource->resource, "/status");
  const int64_t made = Total(create_);
  const double ratio = static_cast<double>(made) / static_cast<double>(needed);
  const double quiet_per_minute =
      quiet_seconds_ > 0 ? static_cast<double>(Total(quiet_)) * 60.0 / quiet_seconds_ : 0;
  const bool create_ok = ratio <= kTargetCreateRatio;
  const bool quiet_ok = quiet_per_minute <= kTargetQuietPerMinute;

  out << absl::StrFormat(
      "api_requests_bench: %d %ss%s, GM resync %d s, kube-api-qps %s, "
      "burst %s, GM args [%s], load average %s -> %s\n",
      n, flags_.kind, flags_.s3_models ? " (s3 Models, one Secret)" : "", flags_.resync_seconds,
      flags_.kube_api_qps > 0 ? std::to_string(flags_.kube_api_qps) : "default",
      flags_.kube_api_burst > 0 ? std::to_string(flags_.kube_api_burst) : "default",
      absl::StrJoin(flags_.gm_args, " "), load_before_,
      load_after_);
  out << absl::StrFormat(
      "\ncreate: first create -> children and statuses settled %.1f s, GM quiet at %.1f s%s\n",
      create_seconds_, settled_seconds_, went_quiet_ ? "" : " (did NOT go quiet: capped)");
  PrintCounts(out, create_);
  out << absl::StrFormat(
      "  writes needed: %d Deployments + %d Services + %d Pods + %d status writes = %d; made: "
      "create deployments %d, create services %d, create pods %d, update status %d, events %d\n",
      deployments, services, pods, n, needed, Count(create_, "create deployments"),
      Count(create_, "create services"), Count(create_, "create pods"),
      Count(create_, absl::StrCat("update ", status_key)) +
          Count(create_, absl::StrCat("patch ", status_key)),
      Count(create_, "create events") + Count(create_, "patch events"));
  out << absl::StrFormat("  requests / writes needed = %.2fx (target <= %.2fx): %s\n", ratio,
                         kTargetCreateRatio, create_ok ? "met" : "MISSED");
  out << absl::StrFormat(
      "  at --kube-api-qps 5 that is %.0f s of requests (target <= %.0f s)\n",
      static_cast<double>(made) / 5.0, kTargetCreateRatio * static_cast<double>(needed) / 5.0);
  out << absl::StrFormat("\nquiet: %.1f s with nothing changing\n", quiet_seconds_);
  PrintCounts(out, quiet_);
  out << absl::StrFormat("  requests per minute = %.1f (target <= %.0f): %s\n", quiet_per_minute,
                         kTargetQuietPerMinute, quiet_ok ? "met" : "MISSED");
  out << absl::StrFormat("\nGM exit status after SIGTERM: %d, %.1f s after it%s\n", gm_exit_,
                         stop_seconds_, gm_exit_ == 0 ? "" : " (not a clean stop within 10 s)");
  return create_ok && quiet_ok;
}

}  // namespace
}  // namespace nereid::bench

int main(int argc, char** argv) {
  nereid::bench::Flags parsed;
  nereid::config::OptionSet options = nereid::bench::RegisterOptions(parsed);
  if (std::optional<int> exit_code = nereid::bench::ReadFlags(
          options, argc, argv, [&] { return nereid::bench::CheckRequired(parsed); })) {
    return *exit_code;
  }
  const bool enforce = parsed.enforce;
  const nereid::bench::Workload workload = *nereid::bench::WorkloadOf(parsed.kind);
  nereid::bench::ApiRequestsBench bench(std::move(parsed), workload);
  if (absl::Status s = bench.Run(); !s.ok()) {
    std::cerr << "api_requests_bench: " << s << "\n";
    return 1;
  }
  const bool met = bench.Report(std::cout);
  if (!bench.stopped_cleanly()) return 1;
  return enforce && !met ? 1 : 0;
}
