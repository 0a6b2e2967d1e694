#pragma once

// Test helpers for whole-LC tests: a GM edge hub on 127.0.0.1 with mTLS that accepts and records
// every report, resource builders for node edge-a, and kDaemonWait, the bound on waits for a whole LC.

#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "globalmanager/edgehub/edge_hub.h"
#include "globalmanager/edgehub/server.h"
#include "nereid/edge/v1/sync.pb.h"
#include "tests/common/net/test_certs.h"
#include "tests/fakes/eventually.h"

namespace nereid::lc::testing {

namespace v1 = edge::v1;
using ::nereid::testing::TestCerts;

// A whole LC (threads, SQLite, the network) gets longer than Eventually's default.
inline constexpr absl::Duration kDaemonWait = absl::Seconds(20);

// The GM's side of reports: records every report and accepts it (as if written to the API).
class AcceptingHandler final : public gm::ReportHandler {
 public:
  void HandleReport(std::string_view node, std::shared_ptr<const v1::StatusReport> report,
                    gm::ReportCompletion done) override {
    {
      absl::MutexLock lock(&mu_);
      reports_.push_back(*report);
    }
    done(gm::ReportOutcome::Accepted());
  }
  // The latest report about `name` that satisfies `pred`, waiting for it (bounded).
  std::optional<v1::StatusReport> WaitFor(
      const std::function<bool(const v1::StatusReport&)>& pred) {
    std::optional<v1::StatusReport> found;
    fakes::Eventually([&] {
      absl::MutexLock lock(&mu_);
      for (auto it = reports_.rbegin(); it != reports_.rend(); ++it) {
        if (pred(*it)) {
          found = *it;
          return true;
        }
      }
      return false;
    }, kDaemonWait);
    return found;
  }
  size_t Count(const std::function<bool(const v1::StatusReport&)>& pred) {
    absl::MutexLock lock(&mu_);
    size_t n = 0;
    for (const v1::StatusReport& r : reports_) n += pred(r) ? 1 : 0;
    return n;
  }

 private:
  absl::Mutex mu_;
  std::vector<v1::StatusReport> reports_ ABSL_GUARDED_BY(mu_);
};

inline std::function<bool(const v1::StatusReport&)> DatasetCount(const std::string& name, int64_t n) {
  return [name, n](const v1::StatusReport& r) {
    return r.has_dataset() && r.ref().name() == name && r.dataset().error_reason().empty() &&
           r.dataset().number_of_samples() == n;
  };
}

inline v1::Resource DatasetResource(const std::string& name, const std::string& version,
                             const std::string& url, const std::string& format = "txt") {
  v1::Resource r;
  r.mutable_ref()->set_kind("Dataset");
  r.mutable_ref()->set_namespace_("default");
  r.mutable_ref()->set_name(name);
  r.mutable_ref()->set_uid("uid-" + name);
  r.set_version(version);
  r.mutable_dataset()->set_url(url);
  r.mutable_dataset()->set_format(format);
  r.mutable_dataset()->set_node_name("edge-a");
  return r;
}

inline v1::Resource ModelResource(const std::string& name, const std::string& url,
                           const std::string& sha256) {
  v1::Resource r;
  r.mutable_ref()->set_kind("Model");
  r.mutable_ref()->set_namespace_("default");
  r.mutable_ref()->set_name(name);
  r.mutable_ref()->set_uid("uid-" + name);
  r.set_version("1");
  r.mutable_model()->set_url(url);
  r.mutable_model()->set_format("pb");
  r.mutable_model()->set_sha256(sha256);
  return r;
}

inline v1::Resource JointInferenceResource(const std::string& name) {
  v1::Resource r;
  r.mutable_ref()->set_kind("JointInferenceService");
  r.mutable_ref()->set_namespace_("default");
  r.mutable_ref()->set_name(name);
  r.mutable_ref()->set_uid("uid-" + name);
  r.set_version("7");
  r.mutable_joint_inference_service()->mutable_edge_worker()->set_model_name("little-model");
  r.mutable_joint_inference_service()->mutable_edge_worker()->set_node_name("edge-a");
  r.mutable_joint_inference_service()->mutable_cloud_worker()->set_model_name("big-model");
  return r;
}

// A GM edge hub on 127.0.0.1 with mTLS; can be stopped and started again on the same port.
class Gm {
 public:
  Gm() { Start(0); }
  ~Gm() { Stop(); }

  void Start(int port) {
    gm::EdgeHub::Options options;
    options.report_handler = &handler;
    hub = std::make_unique<gm::EdgeHub>(options);
    gm::EdgeHubServerOptions server_options;
    server_options.listen = "127.0.0.1:" + std::to_string(port);
    server_options.tls = TestCerts().ServerTls();
    auto started = gm::EdgeHubServer::Start(hub.get(), server_options);
    INFO(started.status());
    REQUIRE(started.ok());
    server = std::move(*started);
    port_ = server->port();
  }
  void Stop() {
    if (!server) return;
    hub->Shutdown();
    server->Stop(absl::Seconds(1));
    server.reset();
    hub.reset();
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

  AcceptingHandler handler;
  std::unique_ptr<gm::EdgeHub> hub;
  std::unique_ptr<gm::EdgeHubServer> server;

 private:
  int port_ = 0;
};

}  // namespace nereid::lc::testing
