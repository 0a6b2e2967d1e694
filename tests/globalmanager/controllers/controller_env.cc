#include "tests/globalmanager/controllers/controller_env.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/api/sedna_contract.h"
#include "globalmanager/controllers/cache_policy.h"
#include "tests/fakes/eventually.h"

namespace nereid::gm::testing {

ControllerEnv::ControllerEnv()
    : client_(&clock_), metrics_(nullptr) {
  informers_ = std::make_unique<kube::SharedInformerFactory>(&client_, &clock_,
                                                             absl::ZeroDuration(), GmCachePolicy);
  kube::EventRecorderOptions options;
  options.component = "nereid-gm";
  events_ = std::make_unique<kube::EventRecorder>(&client_, options, &clock_);
  events_->Start();
  context_.client = &client_;
  context_.informers = informers_.get();
  context_.events = events_.get();
  context_.edge = &edge_;
  context_.metrics = &metrics_;
  context_.clock = &clock_;
  context_.settings.workers = 2;
}

ControllerEnv::~ControllerEnv() {
  informers_->Stop();
  events_->Stop();
}

void ControllerEnv::StopInformers() { informers_->Stop(); }

void ControllerEnv::StopInformersAndController(GmController& controller) {
  StopInformers();
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    controller.Stop();
    stopped = true;
  });
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (!stopped && absl::Now() < deadline) {
    if (clock_.timed_waiters() > 0) clock_.Advance(absl::Milliseconds(10));
    absl::SleepFor(absl::Milliseconds(1));
  }
  if (!stopped) {
    // Joining would hang the test until ctest kills it (often after a failed REQUIRE, on this
    // destructor path) and detaching leaves a thread on freed state: fail here, loudly.
    std::fprintf(stderr,
                 "ControllerEnv: controller %s did not stop within 30 s (a worker is stuck in "
                 "Reconcile); aborting the test binary\n",
                 controller.name().c_str());
    std::abort();
  }
  stopper.join();
}

bool ControllerEnv::Converges(const std::function<bool()>& cond) {
  absl::Time last = absl::Now();
  return fakes::Eventually(
      [&] {
        if (cond()) return true;
        if (absl::Now() - last > absl::Milliseconds(100)) {
          clock_.Advance(absl::Seconds(1));
          last = absl::Now();
        }
        return false;
      },
      absl::Seconds(20));
}

kube::Json ControllerEnv::StatusOf(const kube::Resource& resource, const std::string& name,
                                   const std::string& ns) {
  kube::Json object = Get(resource, ns, name);
  return object.contains("status") ? object["status"] : kube::Json::object();
}

void ControllerEnv::StartInformers(const std::vector<kube::SharedInformer*>& informers) {
  informers_->Start();
  REQUIRE(fakes::Eventually([&] {
    for (kube::SharedInformer* informer : informers) {
      if (!informer->HasSynced()) return false;
    }
    return true;
  }));
}

kube::Json ControllerEnv::Create(const kube::Resource& resource, const kube::Json& object) {
  absl::StatusOr<kube::Json> created = client_.Create(resource, kube::Namespace(object), object);
  INFO(created.status().ToString());
  REQUIRE(created.ok());
  return *created;
}

kube::Json ControllerEnv::Get(const kube::Resource& resource, const std::string& ns,
                              const std::string& name) {
  absl::StatusOr<kube::Json> object = client_.Get(resource, ns, name);
  INFO(object.status().ToString());
  REQUIRE(object.ok());
  return *object;
}

kube::Json ControllerEnv::Patch(const kube::Resource& resource, const std::string& ns,
                                const std::string& name, const kube::Json& patch) {
  absl::StatusOr<kube::Json> patched =
      client_.Patch(resource, ns, name, kube::PatchType::kMerge, patch);
  INFO(patched.status().ToString());
  REQUIRE(patched.ok());
  return *patched;
}

void ControllerEnv::Delete(const kube::Resource& resource, const std::string& ns,
                           const std::string& name) {
  absl::Status deleted = client_.Delete(resource, ns, name);
  INFO(deleted.ToString());
  REQUIRE(deleted.ok());
}

std::vector<kube::Json> ControllerEnv::Events(const std::string& name, const std::string& reason) {
  auto matching = [&] {
    std::vector<kube::Json> out;
    for (const kube::Json& event : client_.Objects(kube::resources::Events())) {
      if (kube::StringAt(event, "involvedObject.name") == name &&
          kube::StringAt(event, "reason") == reason) {
        out.push_back(event);
      }
    }
    return out;
  };
  // A worker records an Event just after its status write, which the test may already have seen:
  // give it a moment when there is none yet.
  fakes::Eventually([&] { return events_->WaitIdle(absl::Seconds(1)) && !matching().empty(); },
                    absl::Seconds(2));
  REQUIRE(events_->WaitIdle(absl::Seconds(10)));
  return matching();
}

ReportOutcome RouteReport(ReportRouter& router, std::string_view node,
                          std::shared_ptr<const edge::v1::StatusReport> report) {
  absl::Mutex mu;
  std::optional<ReportOutcome> outcome;
  router.HandleReport(node, std::move(report), [&](ReportOutcome o) {
    absl::MutexLock lock(&mu);
    outcome = std::move(o);
  });
  REQUIRE(fakes::Eventually([&] {
    absl::MutexLock lock(&mu);
    return outcome.has_value();
  }));
  absl::MutexLock lock(&mu);
  return *outcome;
}

ReportOutcome ReportThroughHub(const FakeEdgeDispatcher& edge, ReportSink& sink,
                               std::string_view node, const edge::v1::StatusReport& report) {
  if (std::optional<ReportOutcome> refusal = edge.RefuseForeign(node, report)) return *refusal;
  return sink.HandleReport(node, report);
}

kube::Json DatasetObject(const std::string& name, const std::string& node, const std::string& url,
                         const std::string& format) {
  return kube::Json{{"apiVersion", std::string(api::kApiVersion)},
                    {"kind", "Dataset"},
                    {"metadata", {{"name", name}, {"namespace", "default"}}},
                    {"spec", {{"url", url}, {"format", format}, {"nodeName", node}}}};
}

kube::Json SednaS3Secret(const std::string& name, const std::string& secret_access_key,
                         const std::string& ns, const std::string& endpoint,
                         const std::string& access_key_id) {
  return kube::Json{
      {"apiVersion", "v1"},
      {"kind", "Secret"},
      {"metadata",
       {{"name", name},
        {"namespace", ns},
        {"annotations", {{"s3-endpoint", endpoint}, {"s3-usehttps", "0"}}}}},
      {"stringData", {{"ACCESS_KEY_ID", access_key_id}, {"SECRET_ACCESS_KEY", secret_access_key}}}};
}

kube::Json ModelObject(const std::string& name, const std::string& url, const std::string& sha256) {
  kube::Json spec = {{"url", url}, {"format", "pb"}};
  if (!sha256.empty()) spec["sha256"] = sha256;
  return kube::Json{{"apiVersion", std::string(api::kApiVersion)},
                    {"kind", "Model"},
                    {"metadata", {{"name", name}, {"namespace", "default"}}},
                    {"spec", spec}};
}

}  // namespace nereid::gm::testing
