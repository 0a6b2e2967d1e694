#pragma once

// ControllerContext: everything a GM controller is constructed from (Sedna's ControllerContext:
// dependencies are passed in, never reached through globals). The daemon owns every pointee and
// keeps it alive until all controllers are stopped and destroyed; unit tests fill it with fakes
// (FakeKubeClient, FakeClock, a fake EdgeDispatcher). A controller copies what it needs in its
// constructor.

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#include "common/kube/client.h"
#include "common/kube/event_recorder.h"
#include "common/kube/shared_informer.h"
#include "common/kube/shared_informer_factory.h"
#include "common/time/clock.h"

namespace nereid::gm {

class ControllerMetrics;
class EdgeDispatcher;
class ModelRequirements;
class ReportRouter;
class SecretCache;

struct ControllerSettings {
  std::string lc_server = "http://localhost:9100";  // LC_SERVER injected into workers
  std::string kb_server = "http://localhost:9020";  // KB_SERVER (lifelong learning)
  std::string ns;                                   // namespace watched; "" = all
  int workers = 2;                                  // reconcile workers per controller
  // Sedna's storage-initializer image, for workers whose model or dataset is an s3:// URL.
  std::string storage_initializer_image = "kubeedge/sedna-storage-initializer:v0.3.0";
  // Copy S3 keys into worker env as literal values instead of secretKeyRef (weaker; for edge
  // runtimes that cannot resolve Secret references).
  bool literal_s3_credentials = false;
};

struct ControllerContext {
  kube::KubeClient* client = nullptr;
  kube::SharedInformerFactory* informers = nullptr;
  kube::EventRecorder* events = nullptr;
  EdgeDispatcher* edge = nullptr;
  ReportRouter* reports = nullptr;
  ControllerMetrics* metrics = nullptr;  // optional
  Clock* clock = Clock::Real();
  // The Model controller's requirement API; set by the registry once the Model controller exists
  // (controllers created after it may use it; null when it is not enabled).
  ModelRequirements* models = nullptr;
  // The Secrets read for credentialNames, shared by every controller (null: each read is a GET).
  SecretCache* secrets = nullptr;
  ControllerSettings settings;

  // InvalidArgument naming `controller` unless the client, informers and edge dispatcher that
  // every controller announcing objects to the edge needs are set.
  absl::Status RequireClientInformersEdge(std::string_view controller) const {
    if (client != nullptr && informers != nullptr && edge != nullptr) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(controller), ": client, informers and edge are required"));
  }

  // InformerOptions for this daemon's watch scope (the namespace from the settings).
  kube::InformerOptions ScopedInformerOptions() const {
    kube::InformerOptions options;
    options.ns = settings.ns;
    return options;
  }
};

}  // namespace nereid::gm
