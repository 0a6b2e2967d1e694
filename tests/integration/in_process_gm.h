#pragma once

// InProcessGm: GM controllers run inside an integration test against a DevApiServerProcess — the
// shared informer factory, an Event recorder (component nereid-gm), the recording
// FakeEdgeDispatcher in place of the edge hub, the real clock and two reconcile workers per
// controller:
//
//   InProcessGm gm(api.client());
//   gm.Add(JointInferenceController::Create(gm.Context()));
//   gm.Start(kWait);  // caches synced, edge primed, controllers running
//   ...
//   gm.Stop();        // also on destruction; Context() again starts afresh
//
// Also what these tests ask the API server alike: DevApiOptions for a test target that defines
// NEREID_DEVAPISERVER_BIN, NEREID_KUBECTL and NEREID_SOURCE_DIR, StatusOf and HasEvent.

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/kube/event_recorder.h"
#include "common/kube/resource.h"
#include "common/kube/shared_informer_factory.h"
#include "globalmanager/controllers/cache_policy.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/gm_controller.h"
#include "tests/globalmanager/controllers/fake_edge_dispatcher.h"
#include "tests/support/devapiserver_process.h"

namespace nereid::gm::testing {

class InProcessGm {
 public:
  explicit InProcessGm(kube::KubeClient* client) : client_(client) {}
  ~InProcessGm() { Stop(); }
  InProcessGm(const InProcessGm&) = delete;
  InProcessGm& operator=(const InProcessGm&) = delete;

  // A fresh informer factory and recorder, and the context to create controllers from.
  ControllerContext Context() {
    factory_ = std::make_unique<kube::SharedInformerFactory>(client_, nullptr, absl::ZeroDuration(),
                                                             GmCachePolicy);
    kube::EventRecorderOptions recorder_options;
    recorder_options.component = "nereid-gm";
    recorder_ = std::make_unique<kube::EventRecorder>(client_, recorder_options);
    ControllerContext context;
    context.client = client_;
    context.informers = factory_.get();
    context.events = recorder_.get();
    context.edge = &edge_;
    context.clock = Clock::Real();
    context.settings.workers = 2;
    return context;
  }
  template <typename Controller>
  Controller* Add(absl::StatusOr<std::unique_ptr<Controller>> made) {
    INFO(made.status().ToString());
    REQUIRE(made.ok());
    Controller* controller = made->get();
    controllers_.push_back(*std::move(made));
    return controller;
  }
  void Start(absl::Duration wait) {
    recorder_->Start();
    factory_->Start();
    for (const std::unique_ptr<GmController>& c : controllers_) {
      REQUIRE(kube::WaitForCacheSync(c->informers(), absl::Now() + wait));
      REQUIRE(c->PrimeEdge().ok());
      REQUIRE(c->Start().ok());
    }
  }
  void Stop() {
    // Informers deliver into the controllers: stop them first (then those, then the recorder).
    if (factory_ != nullptr) factory_->Stop();
    for (const std::unique_ptr<GmController>& c : controllers_) c->Stop();
    if (recorder_ != nullptr) recorder_->Stop();
    controllers_.clear();
  }

  FakeEdgeDispatcher& edge() { return edge_; }

 private:
  kube::KubeClient* const client_;
  std::unique_ptr<kube::SharedInformerFactory> factory_;
  std::unique_ptr<kube::EventRecorder> recorder_;
  FakeEdgeDispatcher edge_;
  std::vector<std::unique_ptr<GmController>> controllers_;
};

#if defined(NEREID_DEVAPISERVER_BIN) && defined(NEREID_KUBECTL) && defined(NEREID_SOURCE_DIR)
inline nereid::testing::DevApiServerProcess::Options DevApiOptions(std::string temp_prefix,
                                                                   absl::Duration served_timeout) {
  nereid::testing::DevApiServerProcess::Options options;
  options.devapiserver = NEREID_DEVAPISERVER_BIN;
  options.kubectl = NEREID_KUBECTL;
  options.source_dir = NEREID_SOURCE_DIR;
  options.temp_prefix = std::move(temp_prefix);
  options.served_timeout = served_timeout;
  return options;
}
#endif

// The status of the object `name` in namespace "default" ({} while it has none or is gone).
inline kube::Json StatusOf(kube::KubeClient& client, const kube::Resource& resource,
                           const std::string& name) {
  auto object = client.Get(resource, "default", name);
  if (!object.ok() || !object->contains("status")) return kube::Json::object();
  return (*object)["status"];
}

// Whether an Event with `reason` about the object `name` in namespace "default" was recorded.
inline bool HasEvent(kube::KubeClient& client, const std::string& name, const std::string& reason) {
  auto list = client.List(kube::resources::Events(), "default", {});
  if (!list.ok()) return false;
  for (const kube::Json& e : list->items) {
    if (kube::StringAt(e, "involvedObject.name") == name && kube::StringAt(e, "reason") == reason) {
      return true;
    }
  }
  return false;
}

}  // namespace nereid::gm::testing
