// FeatureExtractionService, ObjectSearchService and ObjectTrackingService: Sedna's manifests parse,
// validate and round-trip unchanged; every broken field is named.

#include <catch2/catch.hpp>
#include <functional>
#include <string>

#include "common/api/feature_extraction_service.h"
#include "common/api/object_search_service.h"
#include "common/api/object_tracking_service.h"
#include "common/api/object_validation.h"
#include "common/api/validation.h"
#include "common/api/yaml_json.h"

namespace nereid::api {
namespace {

using kube::Json;

Json FromYaml(std::string_view yaml) {
  auto docs = YamlToJson(yaml);
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 1);
  return (*docs)[0];
}

// Sedna's pedestrian-tracking FeatureExtractionService (examples/multiedgeinference), as written.
constexpr std::string_view kFeYaml = R"(
apiVersion: sedna.io/v1alpha1
kind: FeatureExtractionService
metadata:
  name: feature-extraction
spec:
  replicas: 1
  kafkaSupport: true
  model:
    name: feature-extraction-m3l
  selector:
    matchLabels:
      app: feature-extraction
  template:
    metadata:
      labels:
        app: feature-extraction
    spec:
      nodeSelector:
        node-role.kubernetes.io/master: ''
      containers:
      - image: kubeedge/sedna-example-multi-edge-inference-pedestrian-tracking-feature-extraction:v0.5.0
        imagePullPolicy: Always
        name: feature-extraction
        env:
        - name: KAFKA_BIND_IPS
          value: "MASTER_NODE_IP|kafka-service"
        resources:
          limits:
            memory: 2Gi
)";

// Sedna's ObjectSearchService sample with its three faults fixed (env values are strings, names
// lower case, reidWorkers.selector present).
constexpr std::string_view kObjsYaml = R"(
apiVersion: sedna.io/v1alpha1
kind: ObjectSearchService
metadata:
  name: pedestrian-search
  namespace: default
spec:
  userWorker:
    template:
      spec:
        nodeSelector:
          edgeai/location: cloud
        containers:
          - name: userworker
            image: kubeedge/sedna-example-objects-search-apiserver:v0.1.0
  trackingWorkers:
    - template:
        spec:
          nodeSelector:
            edgeai/app: worker0
          containers:
            - name: trackingworker0
              image: kubeedge/sedna-example-multi-edge-inference-reid-dataload-and-tracking:v0.1.0
              env:
                - name: dataSources
                  value: "192.168.0.12,192.168.0.13"
    - template:
        spec:
          nodeName: edge-1
          containers:
            - name: trackingworker1
              image: kubeedge/sedna-example-multi-edge-inference-reid-dataload-and-tracking:v0.1.0
  reidWorkers:
    replicas: 5
    selector:
      matchLabels:
        app: reid
    template:
      metadata:
        labels:
          app: reid
      spec:
        containers:
          - name: reid
            image: kubeedge/sedna-example-multi-edge-inference-reid:v0.1.0
)";

constexpr std::string_view kObjtYaml = R"(
apiVersion: sedna.io/v1alpha1
kind: ObjectTrackingService
metadata:
  name: pedestrian-tracking
spec:
  trackingWorkers:
    - template:
        spec:
          nodeName: edge-0
          containers:
            - name: tracking
              image: kubeedge/sedna-example-multi-edge-inference-tracking:v0.1.0
  reidWorkers:
    selector:
      matchLabels:
        app: reid
    template:
      metadata:
        labels:
          app: reid
      spec:
        containers:
          - name: reid
            image: kubeedge/sedna-example-multi-edge-inference-reid:v0.1.0
)";

bool Has(const Causes& causes, const std::string& field) {
  for (const auto& c : causes) {
    if (c.field == field) return true;
  }
  return false;
}

Causes ValidateMutated(std::string_view yaml, const std::function<void(Json&)>& mutate) {
  Json doc = FromYaml(yaml);
  mutate(doc);
  auto causes = ValidateObject(doc);
  INFO((causes.ok() ? std::string("parsed") : std::string(causes.status().message())));
  REQUIRE(causes.ok());
  for (const auto& c : *causes) CHECK(c.message.size() > 10);
  return *causes;
}

TEST_CASE("FeatureExtractionService: Sedna's manifest parses, validates and round-trips") {
  Json doc = FromYaml(kFeYaml);
  auto fe = FeatureExtractionService::FromJson(doc);
  REQUIRE(fe.ok());
  CHECK(fe->metadata.name == "feature-extraction");
  CHECK(fe->spec.kafka_support == true);
  CHECK(fe->spec.model.name == "feature-extraction-m3l");
  CHECK(fe->spec.deployment.Replicas() == 1);
  CHECK(fe->spec.deployment.extra["selector"]["matchLabels"]["app"] == "feature-extraction");
  CHECK(fe->spec.deployment.pod_template["spec"]["containers"][0]["name"] == "feature-extraction");
  CHECK(fe->Validate().empty());
  CHECK(fe->ToJson()["spec"] == doc["spec"]);
}

TEST_CASE("FeatureExtractionService: missing replicas means 1, and broken fields are named") {
  Json doc = FromYaml(kFeYaml);
  doc["spec"].erase("replicas");
  auto fe = FeatureExtractionService::FromJson(doc);
  REQUIRE(fe.ok());
  CHECK_FALSE(fe->spec.deployment.replicas.has_value());
  CHECK(fe->spec.deployment.Replicas() == 1);
  CHECK(fe->ToJson()["spec"] == doc["spec"]);  // Not invented on the way back.

  CHECK(Has(ValidateMutated(kFeYaml, [](Json& d) { d["spec"].erase("model"); }),
            "spec.model.name"));
  CHECK(Has(ValidateMutated(kFeYaml, [](Json& d) { d["spec"].erase("template"); }),
            "spec.template"));
  CHECK(Has(ValidateMutated(kFeYaml, [](Json& d) { d["spec"]["replicas"] = -1; }),
            "spec.replicas"));
  CHECK(Has(ValidateMutated(kFeYaml,
                            [](Json& d) {
                              d["spec"]["selector"]["matchLabels"]["app"] = "something-else";
                            }),
            "spec.selector.matchLabels"));
  CHECK(ValidateMutated(kFeYaml, [](Json& d) { d["spec"].erase("selector"); }).empty());

  Json junk = FromYaml(kFeYaml);
  junk["spec"]["kafkaSupport"] = "yes";
  junk["spec"]["replicas"] = "two";
  auto bad = FeatureExtractionService::FromJson(junk);
  REQUIRE_FALSE(bad.ok());
  const std::string message(bad.status().message());
  CHECK(message.find("spec.kafkaSupport") != std::string::npos);
  CHECK(message.find("spec.replicas") != std::string::npos);
}

TEST_CASE("ObjectSearchService: workers parse, validate and round-trip") {
  Json doc = FromYaml(kObjsYaml);
  auto objs = ObjectSearchService::FromJson(doc);
  REQUIRE(objs.ok());
  CHECK(objs->spec.tracking_workers.size() == 2);
  CHECK(objs->spec.reid_workers.Replicas() == 5);
  CHECK(TemplateNodeName(objs->spec.tracking_workers[1].pod_template) == "edge-1");
  CHECK(objs->Validate().empty());
  CHECK(objs->ToJson()["spec"] == doc["spec"]);

  CHECK(Has(ValidateMutated(kObjsYaml, [](Json& d) { d["spec"].erase("userWorker"); }),
            "spec.userWorker.template"));
  CHECK(Has(ValidateMutated(kObjsYaml,
                            [](Json& d) { d["spec"]["trackingWorkers"] = Json::array(); }),
            "spec.trackingWorkers"));
  CHECK(Has(ValidateMutated(kObjsYaml,
                            [](Json& d) {
                              d["spec"]["trackingWorkers"][1]["template"]["spec"]["containers"] =
                                  Json::array();
                            }),
            "spec.trackingWorkers[1].template.spec.containers"));
  CHECK(Has(ValidateMutated(kObjsYaml, [](Json& d) { d["spec"]["reidWorkers"].erase("template"); }),
            "spec.reidWorkers.template"));

  Json junk = FromYaml(kObjsYaml);
  junk["spec"]["trackingWorkers"][0] = "not a worker";
  auto bad = ObjectSearchService::FromJson(junk);
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("spec.trackingWorkers[0]") != std::string::npos);
}

TEST_CASE("ObjectTrackingService: workers parse, validate and round-trip") {
  Json doc = FromYaml(kObjtYaml);
  auto objt = ObjectTrackingService::FromJson(doc);
  REQUIRE(objt.ok());
  CHECK(objt->spec.tracking_workers.size() == 1);
  CHECK(objt->spec.reid_workers.Replicas() == 1);
  CHECK(objt->Validate().empty());
  CHECK(objt->ToJson()["spec"] == doc["spec"]);
  CHECK(Has(ValidateMutated(kObjtYaml, [](Json& d) { d["spec"].erase("trackingWorkers"); }),
            "spec.trackingWorkers"));

  // Status written by the controller reads back.
  doc["status"] = Json::parse(R"({"phase": "Running", "active": 2, "failed": 0,
      "startTime": "2026-01-02T03:04:05Z", "observedGeneration": 3,
      "conditions": [{"type": "Running", "status": "True", "reason": "WorkersAvailable"}]})");
  auto with_status = ObjectTrackingService::FromJson(doc);
  REQUIRE(with_status.ok());
  CHECK(with_status->status.phase == "Running");
  CHECK(with_status->status.active == 2);
  CHECK(with_status->status.observed_generation == 3);
  CHECK(with_status->StatusToJson()["conditions"][0]["reason"] == "WorkersAvailable");
}

}  // namespace
}  // namespace nereid::api
