#pragma once

// A stand-in for a worker that runs Sedna's Python SDK, for the integration tests that relay
// worker reports through a real LC (edge_e2e_test, staged_jobs_test). It knows nothing but the
// environment the GM gave its container, reads from it only what the SDK reads for its report,
// and builds and posts the report exactly as the SDK does (sedna 0.4.x):
//   sedna/common/config.py BaseConfig   LC_SERVER    (default "http://127.0.0.1:9100")
//                                       NAMESPACE    (default "")
//                                       WORKER_NAME  (default "")
//                                       SERVICE_NAME (default "")
//                                       JOB_NAME     (default "sedna")
//   sedna/core/base.py JobBase          ownerName = JOB_NAME or SERVICE_NAME (so "sedna" unless
//                                       JOB_NAME is set: SERVICE_NAME is never reached);
//                                       name = WORKER_NAME or "<ownerName>-<worker id>" (1 for the
//                                       first job object of a process);
//                                       report_task_info: {name, namespace, ownerName, ownerKind,
//                                       kind, status, results[, ownerInfo]};
//   sedna/service/client.py             LCReporter (JointInference's periodic report): the same
//                                       without "status", kind "inference", results [], ownerInfo
//                                       {startTime, updateTime, inferenceNumber, hardExampleNumber,
//                                       uploadCloudRatio}; LCClient.send POSTs to
//                                       "<LC_SERVER>/sedna/workers/<name>/info".
// ownerKind is fixed by the SDK class: JointInference "jointinferenceservice", IncrementalLearning
// "incrementallearningjob", LifelongLearning "lifelonglearningjob", MultiObjectTracking and
// ObjectDetector "multiedgetrackingservice", FederatedLearning never sets it: "default".
// Header-only; the tests link Catch2 and httplib.

#include <catch2/catch.hpp>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "tests/integration/loopback_helpers.h"

namespace nereid::testing {

enum class SdkClass {
  kJointInference,
  kFederatedLearning,
  kIncrementalLearning,
  kLifelongLearning,
  kMultiObjectTracking,
};

class SdkWorker {
 public:
  using Json = nlohmann::json;

  // The worker of a Pod, or of a Deployment's pod template (anything with spec.containers): the
  // first container's env, literal values only (a valueFrom would be resolved by the kubelet,
  // which these tests do not run).
  SdkWorker(const Json& pod, SdkClass sdk_class) : class_(sdk_class) {
    REQUIRE(pod.contains("spec"));
    const Json* spec = &pod.at("spec");
    if (spec->contains("template")) spec = &spec->at("template").at("spec");
    REQUIRE(spec->contains("containers"));
    for (const Json& e : spec->at("containers").at(0).value("env", Json::array())) {
      if (e.contains("value")) env_[e.value("name", "")] = e.value("value", "");
    }
  }

  std::string OwnerKind() const {
    switch (class_) {
      case SdkClass::kJointInference:
        return "jointinferenceservice";
      case SdkClass::kFederatedLearning:
        return "default";
      case SdkClass::kIncrementalLearning:
        return "incrementallearningjob";
      case SdkClass::kLifelongLearning:
        return "lifelonglearningjob";
      case SdkClass::kMultiObjectTracking:
        return "multiedgetrackingservice";
    }
    return "default";
  }
  std::string OwnerName() const {
    const std::string job = Getenv("JOB_NAME", "sedna");
    return job.empty() ? Getenv("SERVICE_NAME", "") : job;
  }
  std::string Name() const {
    const std::string worker = Getenv("WORKER_NAME", "");
    return worker.empty() ? OwnerName() + "-1" : worker;
  }

  // JobBase.report_task_info.
  Json TaskReport(const std::string& kind, const std::string& status, const Json& results,
                  const Json& task_info = nullptr) const {
    Json message = {{"name", Name()},
                    {"namespace", Getenv("NAMESPACE", "")},
                    {"ownerName", OwnerName()},
                    {"ownerKind", OwnerKind()},
                    {"kind", kind},
                    {"status", status},
                    {"results", results}};
    if (task_info.is_object() && !task_info.empty()) message["ownerInfo"] = task_info;
    return message;
  }

  // LCReporter's periodic report of a JointInference (or tracking) worker.
  Json InferenceReport(int inferences, int hard_examples) const {
    return {{"name", Name()},
            {"namespace", Getenv("NAMESPACE", "")},
            {"ownerName", OwnerName()},
            {"ownerKind", OwnerKind()},
            {"kind", "inference"},
            {"results", Json::array()},
            {"ownerInfo",
             {{"startTime", "2026-12-07 10:00:00"},
              {"updateTime", "2026-12-07 10:00:30"},
              {"inferenceNumber", inferences},
              {"hardExampleNumber", hard_examples},
              {"uploadCloudRatio",
               inferences == 0 ? 0.0 : static_cast<double>(hard_examples) / inferences}}}};
  }

  // LCClient.send: POST <LC_SERVER>/sedna/workers/<name>/info. LC_SERVER must name a loopback
  // port (the tests' LC).
  HttpReply Post(const Json& message) const {
    std::string server = Getenv("LC_SERVER", "http://127.0.0.1:9100");
    INFO("LC_SERVER=" << server);
    REQUIRE((absl::StartsWith(server, "http://127.0.0.1:") ||
             absl::StartsWith(server, "http://localhost:")));
    int port = 0;
    REQUIRE(absl::SimpleAtoi(server.substr(server.rfind(':') + 1), &port));
    return HttpPost(port, absl::StrCat("/sedna/workers/", Name(), "/info"), message.dump());
  }

 private:
  // os.getenv(name, fallback): the fallback only when the variable is unset.
  std::string Getenv(const std::string& name, const std::string& fallback) const {
    auto it = env_.find(name);
    return it == env_.end() ? fallback : it->second;
  }

  SdkClass class_;
  std::map<std::string, std::string> env_;
};

}  // namespace nereid::testing
