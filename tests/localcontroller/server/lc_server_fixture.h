#pragma once

// The LC REST server under test: a fixed StateView, a sink that records worker reports, a started
// server on 127.0.0.1 with a client, and the checks for the two error-body shapes.

#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "httplib.h"
#include "localcontroller/server/lc_server.h"
#include "nlohmann/json.hpp"

namespace nereid::lc::server {

using Json = nlohmann::json;

class FakeView final : public StateView {
 public:
  absl::Status Ready() override {
    absl::MutexLock lock(&mu_);
    return ready_;
  }
  absl::StatusOr<StatusInfo> Status() override {
    if (throw_) throw std::runtime_error("boom");
    StatusInfo info;
    info.node = "edge-a";
    info.version = "test";
    info.link.state = "backoff";
    info.link.last_error = "connection refused";
    info.outbox_depth = 3;
    info.datasets = 1;
    return info;
  }
  absl::StatusOr<std::vector<DatasetInfo>> Datasets() override { return std::vector{dataset_}; }
  absl::StatusOr<DatasetInfo> Dataset(std::string_view ns, std::string_view name) override {
    if (ns == dataset_.ns && name == dataset_.name) return dataset_;
    return absl::NotFoundError("dataset " + std::string(ns) + "/" + std::string(name) +
                               " is not on this node");
  }
  absl::StatusOr<std::vector<ModelInfo>> Models() override { return std::vector<ModelInfo>{}; }
  absl::StatusOr<ModelInfo> Model(std::string_view ns, std::string_view name) override {
    return absl::NotFoundError("no models");
  }
  std::vector<prometheus::MetricFamily> CollectMetrics() override {
    prometheus::MetricFamily family;
    family.name = "nereid_lc_outbox_depth";
    family.help = "test";
    family.type = prometheus::MetricType::Gauge;
    prometheus::ClientMetric metric;
    metric.gauge.value = 3;
    family.metric.push_back(metric);
    return {family};
  }

  void SetReady(absl::Status status) {
    absl::MutexLock lock(&mu_);
    ready_ = std::move(status);
  }

  DatasetInfo dataset_ = [] {
    DatasetInfo d;
    d.ns = "default";
    d.name = "ds1";
    d.url = "/data/train.txt";
    d.format = "txt";
    d.scanned = true;
    d.count = 42;
    d.last_scan = absl::FromUnixSeconds(1700000000);
    return d;
  }();
  std::atomic<bool> throw_{false};

 private:
  absl::Mutex mu_;
  absl::Status ready_ ABSL_GUARDED_BY(mu_);
};

class RecordingSink final : public worker::ReportSink {
 public:
  absl::Status Enqueue(edge::v1::StatusReport report) override {
    absl::MutexLock lock(&mu_);
    reports_.push_back(std::move(report));
    return absl::OkStatus();
  }
  size_t size() {
    absl::MutexLock lock(&mu_);
    return reports_.size();
  }

 private:
  absl::Mutex mu_;
  std::vector<edge::v1::StatusReport> reports_ ABSL_GUARDED_BY(mu_);
};

struct Fixture {
  FakeView view;
  RecordingSink sink;
  worker::WorkerIntake intake{worker::WorkerIntake::Options{&sink}};
  std::unique_ptr<LcServer> server;
  std::unique_ptr<httplib::Client> client;

  explicit Fixture(size_t max_body = 4096, absl::Duration idle_timeout = absl::Seconds(10)) {
    ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.max_body_bytes = max_body;
    options.threads = 2;
    options.idle_timeout = idle_timeout;
    auto started = LcServer::Start(options, &view, &intake);
    INFO(started.status());
    REQUIRE(started.ok());
    server = std::move(*started);
    client = std::make_unique<httplib::Client>("127.0.0.1", server->port());
    client->set_read_timeout(10, 0);
  }
};

inline Json Body(const httplib::Result& result) {
  REQUIRE(result);
  Json j = Json::parse(result->body, nullptr, false);
  INFO(result->body);
  REQUIRE_FALSE(j.is_discarded());
  return j;
}

// The shape of every operator API error.
inline void CheckError(const httplib::Result& result, int code, const std::string& reason) {
  REQUIRE(result);
  CHECK(result->status == code);
  CHECK(result->get_header_value("Content-Type") == "application/json");
  Json body = Body(result);
  REQUIRE(body.contains("error"));
  CHECK(body["error"]["code"] == code);
  CHECK(body["error"]["reason"] == reason);
  CHECK(body["error"]["message"].is_string());
  CHECK(body.size() == 1);
}

// Sedna's ResponseMessage: exactly {"Status": int, "Message": string}.
inline void CheckSednaReply(const httplib::Result& result, int code,
                            const std::string& message_part) {
  REQUIRE(result);
  CHECK(result->status == code);
  Json body = Body(result);
  CHECK(body.size() == 2);
  CHECK(body["Status"] == code);
  REQUIRE(body["Message"].is_string());
  CHECK_THAT(body["Message"].get<std::string>(), Catch::Contains(message_part));
}

inline constexpr char kSdkBody[] =
    R"({"name": "edgeworker-x1", "namespace": "default", "ownerName": "helmet",)"
    R"( "ownerKind": "jointinferenceservice", "kind": "inference", "status": "running",)"
    R"( "ownerInfo": {"inferenceNumber": 3}, "results": []})";

}  // namespace nereid::lc::server
