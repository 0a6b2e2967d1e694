#pragma once

// ControllerEnv: what a GM controller unit test runs against — FakeKubeClient and informers on a
// FakeClock, a started EventRecorder writing Events into the fake, a FakeEdgeDispatcher and a
// ControllerContext pointing at them. Objects are created through the fake API (so informers see
// them as they would a real server's) and the test waits on the state of the world.

#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/kube/event_recorder.h"
#include "common/kube/shared_informer_factory.h"
#include "common/time/fake_clock.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/controller_metrics.h"
#include "globalmanager/controllers/gm_controller.h"
#include "globalmanager/controllers/report_router.h"
#include "tests/fakes/fake_kube_client.h"
#include "tests/globalmanager/controllers/fake_edge_dispatcher.h"

namespace nereid::gm::testing {

class ControllerEnv {
 public:
  ControllerEnv();
  ~ControllerEnv();

  FakeClock& clock() { return clock_; }
  fakes::FakeKubeClient& client() { return client_; }
  FakeEdgeDispatcher& edge() { return edge_; }
  ControllerMetrics& metrics() { return metrics_; }
  kube::SharedInformerFactory& informers() { return *informers_; }
  ControllerContext& context() { return context_; }

  // Starts the informers and waits (real time, bounded) until `informers` synced.
  void StartInformers(const std::vector<kube::SharedInformer*>& informers);
  // The controller `created` (REQUIREd to be ok) with its informers synced, the edge registry
  // primed and its workers started: what every controller test starts from. Stop it with
  // StopInformersAndController.
  template <typename Controller>
  std::unique_ptr<Controller> Run(absl::StatusOr<std::unique_ptr<Controller>> created) {
    INFO(created.status().ToString());
    REQUIRE(created.ok());
    std::unique_ptr<Controller> controller = *std::move(created);
    StartInformers(controller->informers());
    REQUIRE(controller->PrimeEdge().ok());
    REQUIRE(controller->Start().ok());
    return controller;
  }
  // Waits (real time, bounded) for `cond`, advancing the fake clock now and then so rate-limited
  // retries (e.g. after a conflict with a lagging cache) run.
  bool Converges(const std::function<bool()>& cond);
  // Stops the informers (their handlers call into controllers): call it before a controller is
  // stopped and destroyed, as kube::Controller's lifetime rule says. Idempotent.
  void StopInformers();
  // Stops the informers, then `controller`. A worker waiting on the fake clock would only wake
  // when it advances: the clock is advanced in 10 ms steps until Stop returns. A controller that
  // has not stopped after 30 s aborts the test binary (a failure, never a hang).
  void StopInformersAndController(GmController& controller);

  // Creates `object` (REQUIREs success) and returns it as stored.
  kube::Json Create(const kube::Resource& resource, const kube::Json& object);
  kube::Json Get(const kube::Resource& resource, const std::string& ns, const std::string& name);
  // The object's status ({} while it has none).
  kube::Json StatusOf(const kube::Resource& resource, const std::string& name,
                      const std::string& ns = "default");
  // Merge-patches the object's spec (or metadata) as a user would.
  kube::Json Patch(const kube::Resource& resource, const std::string& ns, const std::string& name,
                   const kube::Json& patch);
  void Delete(const kube::Resource& resource, const std::string& ns, const std::string& name);

  // Events recorded about the object `name` with `reason` (after the recorder sent them).
  std::vector<kube::Json> Events(const std::string& name, const std::string& reason);

 private:
  FakeClock clock_;
  fakes::FakeKubeClient client_;
  FakeEdgeDispatcher edge_;
  ControllerMetrics metrics_;
  std::unique_ptr<kube::SharedInformerFactory> informers_;
  std::unique_ptr<kube::EventRecorder> events_;
  ControllerContext context_;
};

// The outcome `router` completes `report` with (handled on the router's workers; REQUIREs that it
// completes within the eventually.h deadline).
ReportOutcome RouteReport(ReportRouter& router, std::string_view node,
                          std::shared_ptr<const edge::v1::StatusReport> report);

// `report` from `node` as the edge hub hands it to `sink`: refused by the hub's ownership check
// against `edge` (what the controllers sent each node), else handled by `sink`.
ReportOutcome ReportThroughHub(const FakeEdgeDispatcher& edge, ReportSink& sink,
                               std::string_view node, const edge::v1::StatusReport& report);

// A Dataset manifest as kubectl would send it.
kube::Json DatasetObject(const std::string& name, const std::string& node,
                         const std::string& url = "/data/train.txt",
                         const std::string& format = "txt");
// A Secret in Sedna's S3 format (annotations s3-endpoint, s3-usehttps "0"; stringData keys).
kube::Json SednaS3Secret(const std::string& name, const std::string& secret_access_key,
                         const std::string& ns = "default",
                         const std::string& endpoint = "127.0.0.1:9000",
                         const std::string& access_key_id = "AKIDEXAMPLEKEYID0001");
// A Model manifest.
kube::Json ModelObject(const std::string& name, const std::string& url = "/models/m.pb",
                       const std::string& sha256 = "");

}  // namespace nereid::gm::testing
