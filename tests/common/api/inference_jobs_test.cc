// VideoAnalyticsJob and ReidJob: Sedna's own pedestrian-tracking manifests parse, validate, fit
// the CRDs and round-trip unchanged; the inline batch/v1 JobSpec fields are read and checked;
// everything the typed status writes passes the CRD schema.

#include <catch2/catch.hpp>
#include <functional>

#include "common/api/object_validation.h"
#include "common/api/reid_job.h"
#include "common/api/sedna_contract.h"
#include "common/api/validation.h"
#include "common/api/video_analytics_job.h"
#include "common/api/yaml_json.h"
#include "tests/common/api/schema_check.h"
#include "tests/common/api/test_data.h"

namespace nereid::api {
namespace {

using kube::Json;

// Sedna's examples/multiedgeinference/pedestrian_tracking/yaml/video-analytics-job.yaml (image
// and addresses shortened; every field kept).
constexpr char kSednaVideoAnalyticsJob[] = R"(
apiVersion: sedna.io/v1alpha1
kind: VideoAnalyticsJob
metadata:
  name: video-analytics
spec:
  backoffLimit: 5
  kafkaSupport: true
  model:
    name: detection-pedestrians-yolox
  template:
    spec:
      nodeSelector:
        node-role.kubernetes.io/master: ''
      containers:
        - image: kubeedge/sedna-example-multi-edge-inference-videoanalytics:v0.5.0
          imagePullPolicy: Always
          name:  detection
          env:
          - name: KAFKA_BIND_IPS
            value: "MASTER_NODE_IP|kafka-service"
          - name: KAFKA_BIND_PORTS
            value: "9092|9092"
          - name: hostname
            valueFrom:
              fieldRef:
                fieldPath: spec.nodeName
          resources:
            requests:
              memory: 2Gi
              cpu: 1000m
            limits:
              memory: 4Gi
          volumeMounts:
            - mountPath: /data/network_shared/reid/
              name: vol1
      restartPolicy: Never
      volumes:
        - name: vol1
          persistentVolumeClaim:
            claimName: reid-pvc
)";

// Sedna's .../yaml/reid-job.yaml.
constexpr char kSednaReidJob[] = R"(
apiVersion: sedna.io/v1alpha1
kind: ReidJob
metadata:
  name: reid
spec:
  backoffLimit: 5
  kafkaSupport: false
  template:
    spec:
      nodeSelector:
        node-role.kubernetes.io/master: ''
      containers:
        - image: kubeedge/sedna-example-multi-edge-inference-pedestrian-tracking-reid:v0.5.0
          name:  reid
          imagePullPolicy: Always
          env:
          - name: match_thresh
            value: "0.35"
          resources:
            requests:
              memory: 2Gi
              cpu: 2000m
          volumeMounts:
          - name: vol1
            mountPath: /data/network_shared/reid/
      restartPolicy: Never
      volumes:
        - name: vol1
          persistentVolumeClaim:
            claimName: reid-pvc
)";

Json Yaml(const char* text) {
  absl::StatusOr<std::vector<Json>> docs = YamlToJson(text);
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 1);
  return (*docs)[0];
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

bool Has(const Causes& causes, const std::string& field) {
  for (const auto& c : causes) {
    if (c.field == field) return true;
  }
  return false;
}

Causes ValidateMutated(const Json& base, const std::function<void(Json&)>& mutate) {
  Json copy = base;
  mutate(copy);
  absl::StatusOr<Causes> causes = ValidateObject(copy);
  REQUIRE(causes.ok());
  for (const auto& c : *causes) CHECK(c.message.size() > 10);
  return *causes;
}

TEST_CASE("Sedna's pedestrian-tracking VideoAnalyticsJob applies unchanged") {
  Json doc = Yaml(kSednaVideoAnalyticsJob);
  auto job = VideoAnalyticsJob::FromJson(doc);
  REQUIRE(job.ok());
  CHECK(job->spec.model.name == "detection-pedestrians-yolox");
  CHECK(job->spec.kafka_support == true);
  CHECK(job->spec.job.backoff_limit == 5);
  CHECK(job->spec.job.Completions() == 1);
  CHECK(TemplateRestartPolicy(job->spec.job.pod_template) == "Never");
  CHECK(job->Validate().empty());
  CHECK(job->ToJson()["spec"] == doc["spec"]);
  std::vector<std::string> errors =
      testing::CheckAgainstSchema(testing::SchemaFor(kinds::kVideoAnalyticsJob), doc);
  INFO(Join(errors));
  CHECK(errors.empty());
}

TEST_CASE("Sedna's pedestrian-tracking ReidJob applies unchanged") {
  Json doc = Yaml(kSednaReidJob);
  auto job = ReidJob::FromJson(doc);
  REQUIRE(job.ok());
  CHECK(job->spec.kafka_support == false);
  CHECK(job->Validate().empty());
  CHECK(job->ToJson()["spec"] == doc["spec"]);
  std::vector<std::string> errors =
      testing::CheckAgainstSchema(testing::SchemaFor(kinds::kReidJob), doc);
  INFO(Join(errors));
  CHECK(errors.empty());
}

TEST_CASE("every batch/v1 JobSpec field is read, and the ones not acted on are kept") {
  Json doc = Yaml(kSednaReidJob);
  Json& spec = doc["spec"];
  spec["parallelism"] = 2;
  spec["completions"] = 2;
  spec["activeDeadlineSeconds"] = 600;
  spec["ttlSecondsAfterFinished"] = 30;
  spec["suspend"] = true;
  spec["completionMode"] = "Indexed";
  spec["selector"] = {{"matchLabels", {{"a", "b"}}}};
  spec["manualSelector"] = false;
  spec["podFailurePolicy"] = Json::parse(
      R"({"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]})");
  spec["backoffLimitPerIndex"] = 1;
  spec["maxFailedIndexes"] = 1;
  spec["podReplacementPolicy"] = "Failed";
  auto job = ReidJob::FromJson(doc);
  REQUIRE(job.ok());
  const InlineJobSpec& j = job->spec.job;
  CHECK(j.parallelism == 2);
  CHECK(j.Completions() == 2);
  CHECK(j.active_deadline_seconds == 600);
  CHECK(j.ttl_seconds_after_finished == 30);
  CHECK(j.suspend == true);
  CHECK(j.kept.size() == 7);
  CHECK(job->Validate().empty());
  CHECK(job->ToJson()["spec"] == doc["spec"]);
  CHECK(testing::CheckAgainstSchema(testing::SchemaFor(kinds::kReidJob), doc).empty());
}

TEST_CASE("validation refuses what can never work, naming the field") {
  Json va = Yaml(kSednaVideoAnalyticsJob);
  CHECK(ValidateMutated(va, [](Json& j) { j["spec"].erase("model"); }).size() == 1);
  CHECK(Has(ValidateMutated(va, [](Json& j) { j["spec"].erase("model"); }), "spec.model.name"));
  CHECK(Has(ValidateMutated(va, [](Json& j) { j["spec"].erase("template"); }), "spec.template"));
  auto restart = [](std::string policy) {
    return [policy](Json& j) { j["spec"]["template"]["spec"]["restartPolicy"] = policy; };
  };
  Causes always = ValidateMutated(va, restart("Always"));
  REQUIRE(Has(always, "spec.template.spec.restartPolicy"));
  CHECK(always[0].message.find("must be able to finish") != std::string::npos);
  CHECK(Has(ValidateMutated(va, restart("Sometimes")), "spec.template.spec.restartPolicy"));
  CHECK(ValidateMutated(va, restart("OnFailure")).empty());
  CHECK(ValidateMutated(va, [](Json& j) { j["spec"]["template"]["spec"].erase("restartPolicy"); })
            .empty());

  Json reid = Yaml(kSednaReidJob);
  CHECK(Has(ValidateMutated(reid, [](Json& j) { j["spec"]["completions"] = 0; }),
            "spec.completions"));
  CHECK(Has(ValidateMutated(reid, [](Json& j) { j["spec"]["parallelism"] = 0; }),
            "spec.parallelism"));
  CHECK(Has(ValidateMutated(reid,
                            [](Json& j) {
                              j["spec"]["completions"] = 3;
                              j["spec"]["parallelism"] = 2;
                            }),
            "spec.parallelism"));
  CHECK(Has(ValidateMutated(reid, [](Json& j) { j["spec"]["backoffLimit"] = -1; }),
            "spec.backoffLimit"));
  CHECK(Has(ValidateMutated(reid, [](Json& j) { j["spec"]["activeDeadlineSeconds"] = 0; }),
            "spec.activeDeadlineSeconds"));
  CHECK(Has(ValidateMutated(reid, [](Json& j) { j["spec"]["ttlSecondsAfterFinished"] = -5; }),
            "spec.ttlSecondsAfterFinished"));

  // Type errors fail parsing with the field path.
  Json bad = reid;
  bad["spec"]["backoffLimit"] = "five";
  bad["spec"]["kafkaSupport"] = "yes";
  absl::Status parsed = ReidJob::FromJson(bad).status();
  CHECK(absl::IsInvalidArgument(parsed));
  CHECK(std::string(parsed.message()).find("spec.backoffLimit") != std::string::npos);
  CHECK(std::string(parsed.message()).find("spec.kafkaSupport") != std::string::npos);
  CHECK_FALSE(VideoAnalyticsJob::FromJson(reid).ok());  // The kind is checked.
}

TEST_CASE("the CRDs reject bad counts and a missing model or template") {
  struct Case {
    const char* manifest;
    std::string field;
    std::function<void(Json&)> mutate;
  };
  std::vector<Case> cases = {
      {kSednaVideoAnalyticsJob, "spec", [](Json& j) { j["spec"].erase("model"); }},
      {kSednaReidJob, "spec", [](Json& j) { j["spec"].erase("template"); }},
      {kSednaReidJob, "spec.completions", [](Json& j) { j["spec"]["completions"] = 0; }},
      {kSednaReidJob, "spec.backoffLimit", [](Json& j) { j["spec"]["backoffLimit"] = -1; }},
      {kSednaReidJob, "spec.template.spec.containers",
       [](Json& j) { j["spec"]["template"]["spec"]["containers"] = Json::array(); }},
  };
  for (const Case& c : cases) {
    CAPTURE(c.field);
    Json doc = Yaml(c.manifest);
    c.mutate(doc);
    std::vector<std::string> errors =
        testing::CheckAgainstSchema(testing::SchemaFor(kube::StringAt(doc, "kind")), doc);
    INFO(Join(errors));
    bool at_field = false;
    for (const std::string& e : errors) at_field = at_field || e.rfind(c.field + ":", 0) == 0;
    CHECK(at_field);
  }
}

TEST_CASE("the typed status round-trips and passes the CRD schema") {
  InferenceJobStatus st;
  st.phase = std::string(inference_job_phases::kRunning);
  Condition c;
  c.type = std::string(inference_job_conditions::kRunning);
  c.reason = "JobRunning";
  c.message = "1/1 pods running";
  c.data = "{}";
  AppendCondition(&st.conditions, c, absl::FromUnixSeconds(1714557600));
  st.start_time = absl::FromUnixSeconds(1714557600);
  st.completion_time = absl::FromUnixSeconds(1714557660);
  st.active = 1;
  st.succeeded = 2;
  st.failed = 3;
  st.restarts = 4;
  st.metrics = {{"fps", "5"}, {"objects", "12"}};
  st.observed_generation = 2;
  st.job = Json::parse(R"({"phase": "Running", "restarts": 4, "taskSummary": "videoanalytics 1/1"})");

  VideoAnalyticsJob va = *VideoAnalyticsJob::FromJson(Yaml(kSednaVideoAnalyticsJob));
  va.status = st;
  Json json = va.ToJson();
  auto errors = testing::CheckAgainstSchema(testing::SchemaFor(kinds::kVideoAnalyticsJob), json);
  INFO(Join(errors));
  CHECK(errors.empty());
  auto back = VideoAnalyticsJob::FromJson(json);
  REQUIRE(back.ok());
  CHECK(back->status == st);

  ReidJob reid = *ReidJob::FromJson(Yaml(kSednaReidJob));
  reid.status = st;
  reid.status.metrics.clear();  // ReidJob has no upstream: the CRD has no status.metrics.
  CHECK(testing::CheckAgainstSchema(testing::SchemaFor(kinds::kReidJob), reid.ToJson()).empty());
  CHECK(kMaxInferenceJobMetrics ==
        testing::SchemaFor(kinds::kVideoAnalyticsJob)["properties"]["status"]["properties"]
                          ["metrics"]["maxItems"]
                              .get<size_t>());
}

}  // namespace
}  // namespace nereid::api
