#include "common/kube/controller.h"

#include <atomic>
#include <catch2/catch.hpp>

#include "absl/cleanup/cleanup.h"
#include <map>
#include <stdexcept>
#include <string>

#include "common/kube/errors.h"
#include "common/kube/resource.h"
#include "common/time/fake_clock.h"
#include "tests/fakes/drain_queue.h"
#include "tests/fakes/eventually.h"
#include "tests/fakes/fake_kube_client.h"

namespace nereid::kube {
namespace {

using fakes::DrainReady;
using fakes::Eventually;
using fakes::FakeKubeClient;
using fakes::Verb;

// Runs a script per call and keeps score.
class ScriptedReconciler final : public Reconciler {
 public:
  using Script = std::function<absl::StatusOr<ReconcileResult>(const std::string& key, int call)>;
  explicit ScriptedReconciler(Script script) : script_(std::move(script)) {}

  absl::StatusOr<ReconcileResult> Reconcile(const std::string& key) override {
    int call;
    {
      absl::MutexLock lock(&mu_);
      call = ++calls_[key];
      if (++in_flight_[key] > 1) overlap_ = true;
      order_.push_back(key);
    }
    absl::StatusOr<ReconcileResult> result;
    try {
      result = script_(key, call);
    } catch (...) {
      absl::MutexLock lock(&mu_);
      --in_flight_[key];
      throw;
    }
    absl::MutexLock lock(&mu_);
    --in_flight_[key];
    return result;
  }

  int Calls(const std::string& key) const {
    absl::MutexLock lock(&mu_);
    auto it = calls_.find(key);
    return it == calls_.end() ? 0 : it->second;
  }
  bool Overlap() const {
    absl::MutexLock lock(&mu_);
    return overlap_;
  }
  std::vector<std::string> Order() const {
    absl::MutexLock lock(&mu_);
    return order_;
  }

 private:
  Script script_;
  mutable absl::Mutex mu_;
  std::map<std::string, int> calls_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> in_flight_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> order_ ABSL_GUARDED_BY(mu_);
  bool overlap_ ABSL_GUARDED_BY(mu_) = false;
};

ControllerOptions On(Clock* clock, int workers = 1) {
  ControllerOptions options;
  options.clock = clock;
  options.workers = workers;
  return options;
}

// The key is parked in the queue's delayed set (so nothing will happen until the clock moves).
bool Waiting(Controller& controller, size_t n) {
  auto metrics = controller.queue().GetMetrics();
  return metrics.waiting == n && metrics.depth == 0 && metrics.processing == 0;
}

TEST_CASE("controller: success forgets the key", "[controller]") {
  FakeClock clock;
  ScriptedReconciler reconciler([](const std::string&, int) { return ReconcileResult{}; });
  Controller controller("test", &reconciler, On(&clock));
  REQUIRE(controller.Start().ok());
  controller.Enqueue("ns/a");
  REQUIRE(Eventually([&] { return controller.GetStats().reconciles == 1; }));
  CHECK(reconciler.Calls("ns/a") == 1);
  CHECK(controller.queue().NumRequeues("ns/a") == 0);
  CHECK(Waiting(controller, 0));
}

TEST_CASE("controller: errors retry with per-key exponential backoff, then forget",
          "[controller]") {
  FakeClock clock;
  ScriptedReconciler reconciler(
      [](const std::string&, int call) -> absl::StatusOr<ReconcileResult> {
        if (call <= 3) return absl::UnavailableError("apiserver unreachable");
        return ReconcileResult{};
      });
  Controller controller("test", &reconciler, On(&clock));
  REQUIRE(controller.Start().ok());
  controller.Enqueue("ns/a");
  for (int failure = 1; failure <= 3; ++failure) {
    const absl::Duration delay = absl::Milliseconds(5) * (1 << (failure - 1));
    REQUIRE(Eventually([&] {
      return reconciler.Calls("ns/a") == failure && controller.GetStats().reconciles == failure &&
             Waiting(controller, 1);
    }));
    CHECK(controller.queue().NumRequeues("ns/a") == failure);
    clock.Advance(delay - absl::Microseconds(1));
    CHECK(Waiting(controller, 1));  // Not due yet.
    clock.Advance(absl::Microseconds(1));
  }
  REQUIRE(Eventually([&] { return controller.GetStats().reconciles == 4; }));
  CHECK(controller.queue().NumRequeues("ns/a") == 0);
  CHECK(controller.GetStats().errors == 3);
  CHECK(Waiting(controller, 0));
}

TEST_CASE("controller: NotFound ends the work for a key", "[controller]") {
  FakeClock clock;
  ScriptedReconciler reconciler([](const std::string& key, int) -> absl::StatusOr<ReconcileResult> {
    return NotFoundError("datasets.sedna.io", key);
  });
  Controller controller("test", &reconciler, On(&clock));
  REQUIRE(controller.Start().ok());
  controller.Enqueue("ns/gone");
  REQUIRE(Eventually([&] { return controller.GetStats().reconciles == 1; }));
  CHECK(Waiting(controller, 0));
  clock.Advance(absl::Hours(1));
  CHECK(Waiting(controller, 0));
  CHECK(controller.queue().NumRequeues("ns/gone") == 0);
  CHECK(controller.GetStats().errors == 0);
}

TEST_CASE("controller: requeue_after forgets the backoff and re-adds after the delay",
          "[controller]") {
  FakeClock clock;
  ScriptedReconciler reconciler(
      [](const std::string&, int call) -> absl::StatusOr<ReconcileResult> {
        if (call == 1) return absl::InternalError("transient");
        if (call == 2) return ReconcileResult{.requeue = false, .requeue_after = absl::Seconds(30)};
        return ReconcileResult{};
      });
  Controller controller("test", &reconciler, On(&clock));
  REQUIRE(controller.Start().ok());
  controller.Enqueue("ns/a");
  REQUIRE(
      Eventually([&] { return controller.GetStats().reconciles == 1 && Waiting(controller, 1); }));
  CHECK(controller.queue().NumRequeues("ns/a") == 1);
  clock.Advance(absl::Milliseconds(5));
  REQUIRE(
      Eventually([&] { return controller.GetStats().reconciles == 2 && Waiting(controller, 1); }));
  CHECK(controller.queue().NumRequeues("ns/a") == 0);  // Forgotten.
  clock.Advance(absl::Seconds(30) - absl::Milliseconds(1));
  CHECK(Waiting(controller, 1));
  clock.Advance(absl::Milliseconds(1));
  REQUIRE(Eventually([&] { return controller.GetStats().reconciles == 3; }));
  CHECK(controller.GetStats().requeues == 1);
}

TEST_CASE("controller: requeue re-adds rate-limited", "[controller]") {
  FakeClock clock;
  ScriptedReconciler reconciler(
      [](const std::string&, int call) -> absl::StatusOr<ReconcileResult> {
        return ReconcileResult{.requeue = call <= 2, .requeue_after = absl::ZeroDuration()};
      });
  Controller controller("test", &reconciler, On(&clock));
  REQUIRE(controller.Start().ok());
  controller.Enqueue("ns/a");
  REQUIRE(
      Eventually([&] { return controller.GetStats().reconciles == 1 && Waiting(controller, 1); }));
  CHECK(controller.queue().NumRequeues("ns/a") == 1);
  clock.Advance(absl::Milliseconds(5));
  REQUIRE(
      Eventually([&] { return controller.GetStats().reconciles == 2 && Waiting(controller, 1); }));
  CHECK(controller.queue().NumRequeues("ns/a") == 2);
  clock.Advance(absl::Milliseconds(10));
  REQUIRE(Eventually([&] { return controller.GetStats().reconciles == 3; }));
  CHECK(controller.queue().NumRequeues("ns/a") == 0);
  CHECK(controller.GetStats().errors == 0);
}

TEST_CASE("controller: a throwing reconciler is retried, not fatal", "[controller]") {
  FakeClock clock;
  ScriptedReconciler reconciler(
      [](const std::string&, int call) -> absl::StatusOr<ReconcileResult> {
        if (call == 1) throw std::runtime_error("bad object");
        if (call == 2) throw 42;  // Not even a std::exception.
        return ReconcileResult{};
      });
  Controller controller("test", &reconciler, On(&clock));
  REQUIRE(controller.Start().ok());
  controller.Enqueue("ns/a");
  REQUIRE(
      Eventually([&] { return controller.GetStats().reconciles == 1 && Waiting(controller, 1); }));
  clock.Advance(absl::Milliseconds(5));
  REQUIRE(
      Eventually([&] { return controller.GetStats().reconciles == 2 && Waiting(controller, 1); }));
  clock.Advance(absl::Milliseconds(10));
  REQUIRE(Eventually([&] { return controller.GetStats().reconciles == 3; }));
  CHECK(controller.GetStats().errors == 2);
  CHECK(controller.queue().NumRequeues("ns/a") == 0);
}

TEST_CASE("controller: workers run different keys in parallel, never one key twice",
          "[controller]") {
  // Two keys, two workers: each reconcile waits until both are in flight, which only happens if
  // the workers really run in parallel.
  std::atomic<int> in_flight{0};
  std::atomic<bool> met{false};
  ScriptedReconciler parallel([&](const std::string&, int) -> absl::StatusOr<ReconcileResult> {
    ++in_flight;
    if (Eventually([&] { return in_flight.load() >= 2; }, absl::Seconds(5))) met = true;
    return ReconcileResult{};
  });
  {
    Controller controller("par", &parallel, On(Clock::Real(), 2));
    REQUIRE(controller.Start().ok());
    controller.Enqueue("ns/a");
    controller.Enqueue("ns/b");
    REQUIRE(Eventually([&] { return controller.GetStats().reconciles == 2; }));
    CHECK(met.load());
  }

  ScriptedReconciler busy([](const std::string&, int) -> absl::StatusOr<ReconcileResult> {
    for (int i = 0; i < 50; ++i) std::this_thread::yield();
    return ReconcileResult{};
  });
  Controller controller("busy", &busy, On(Clock::Real(), 4));
  REQUIRE(controller.Start().ok());
  for (int round = 0; round < 200; ++round) {
    for (int k = 0; k < 5; ++k) controller.Enqueue("ns/k" + std::to_string(k));
  }
  REQUIRE(Eventually([&] {
    auto m = controller.queue().GetMetrics();
    return m.depth == 0 && m.processing == 0;
  }));
  CHECK_FALSE(busy.Overlap());
  for (int k = 0; k < 5; ++k) CHECK(busy.Calls("ns/k" + std::to_string(k)) >= 1);
  controller.Stop();
}

TEST_CASE("controller with an informer: waits for sync, reconciles from the lister",
          "[controller]") {
  FakeClock clock;
  FakeKubeClient client(&clock);
  REQUIRE(client.Create(resources::Pods(), "ns", {{"metadata", {{"name", "a"}}}}).ok());
  SharedInformer informer(&client, resources::Pods(), {}, &clock);
  Lister lister = informer.GetLister();
  std::atomic<int> not_found{0};
  ScriptedReconciler reconciler(
      [&](const std::string& key, int) -> absl::StatusOr<ReconcileResult> {
        absl::StatusOr<ObjectPtr> pod = lister.GetByKey(key);
        if (!pod.ok()) {
          ++not_found;
          return pod.status();
        }
        return ReconcileResult{};
      });
  Controller controller("pods", &reconciler, On(&clock, 2));
  // The informer feeds the controller and the controller reads the informer: stop the informer
  // first, whatever way this test exits.
  absl::Cleanup stop_informer = [&] { informer.Stop(); };
  informer.AddEventHandler(controller.EnqueueHandler());
  informer.Start();
  REQUIRE(controller.Start({&informer}).ok());
  REQUIRE(Eventually([&] { return reconciler.Calls("ns/a") == 1; }));
  REQUIRE(client.Create(resources::Pods(), "ns", {{"metadata", {{"name", "b"}}}}).ok());
  REQUIRE(Eventually([&] { return reconciler.Calls("ns/b") == 1; }));
  REQUIRE(client.Delete(resources::Pods(), "ns", "a").ok());
  REQUIRE(Eventually([&] { return reconciler.Calls("ns/a") == 2 && not_found.load() == 1; }));
  CHECK(Waiting(controller, 0));  // NotFound: no retry.
  controller.Stop();
  informer.Stop();
}

TEST_CASE("controller Start fails when caches do not sync in time", "[controller]") {
  FakeKubeClient client;
  client.FailNext(Verb::kList, 1000, absl::UnavailableError("down"));
  SharedInformer informer(&client, resources::Pods(), {}, Clock::Real());
  informer.Start();
  ScriptedReconciler reconciler([](const std::string&, int) { return ReconcileResult{}; });
  ControllerOptions options = On(Clock::Real());
  options.cache_sync_timeout = absl::Milliseconds(100);
  Controller controller("pods", &reconciler, std::move(options));
  CHECK(absl::IsDeadlineExceeded(controller.Start({&informer})));
}

TEST_CASE("controller owner handler enqueues the controlling owner of a kind", "[controller]") {
  ScriptedReconciler reconciler([](const std::string&, int) { return ReconcileResult{}; });
  Controller controller("jobs", &reconciler, On(Clock::Real()));
  ResourceEventHandlerFuncs handler = controller.EnqueueOwnerHandler("FederatedLearningJob");
  auto pod = [](const std::string& name, const std::string& kind, const std::string& owner) {
    Json json = {{"metadata", {{"name", name}, {"namespace", "ns"}}}};
    if (!owner.empty()) {
      json["metadata"]["ownerReferences"] = Json::array(
          {{{"kind", kind}, {"name", owner}, {"uid", "u-" + owner}, {"controller", true}}});
    }
    return std::make_shared<const Json>(json);
  };
  handler.on_add(pod("p1", "FederatedLearningJob", "job1"));
  handler.on_add(pod("p2", "ReplicaSet", "rs1"));  // Another kind: ignored.
  handler.on_add(pod("p3", "", ""));               // No owner: ignored.
  // Adoption moves the pod: both owners are told.
  handler.on_update(pod("p4", "FederatedLearningJob", "job2"),
                    pod("p4", "FederatedLearningJob", "job3"));
  handler.on_delete(DeletedFinalStateUnknown{"ns/p5", pod("p5", "FederatedLearningJob", "job4")});
  CHECK(DrainReady(controller.queue()) ==
        std::vector<std::string>{"ns/job1", "ns/job3", "ns/job2", "ns/job4"});
}

TEST_CASE("controller handlers: a resync's update waits behind news", "[controller]") {
  ScriptedReconciler reconciler([](const std::string&, int) { return ReconcileResult{}; });
  Controller controller("jobs", &reconciler, On(Clock::Real()));
  ResourceEventHandlerFuncs own = controller.EnqueueHandler();
  ResourceEventHandlerFuncs owner = controller.EnqueueOwnerHandler("ReidJob");
  auto object = [](const std::string& name, const std::string& version,
                   const std::string& owned_by = "") {
    Json json = {{"metadata", {{"name", name}, {"namespace", "ns"}, {"resourceVersion", version}}}};
    if (!owned_by.empty()) {
      json["metadata"]["ownerReferences"] = Json::array(
          {{{"kind", "ReidJob"}, {"name", owned_by}, {"uid", "u"}, {"controller", true}}});
    }
    return std::make_shared<const Json>(json);
  };
  const ObjectPtr cached = object("resynced", "7");
  own.on_update(cached, cached);                                // The informer's resync replay.
  own.on_update(object("relisted", "8"), object("relisted", "8"));  // A relist, same version.
  owner.on_update(object("pod", "9", "owner"), object("pod", "9", "owner"));
  own.on_resync("ns/keyed");  // A replay that hands out keys only.
  own.on_update(object("changed", "10"), object("changed", "11"));  // News.
  own.on_add(object("added", "12"));
  CHECK(DrainReady(controller.queue()) ==
        std::vector<std::string>{"ns/changed", "ns/added", "ns/resynced", "ns/relisted",
                                 "ns/owner", "ns/keyed"});
}

TEST_CASE("controller Stop joins idle workers promptly", "[controller]") {
  ScriptedReconciler reconciler([](const std::string&, int) { return ReconcileResult{}; });
  Controller controller("idle", &reconciler, On(Clock::Real(), 3));
  REQUIRE(controller.Start().ok());
  const absl::Time start = absl::Now();
  controller.Stop();
  CHECK(absl::Now() - start < absl::Seconds(1));
}

}  // namespace
}  // namespace nereid::kube
