// S3 in worker pods: Sedna's storage-initializer init container for s3:// models and datasets, the
// credential env by secretKeyRef (literal values only on request), and an s3 output's credential
// in every container.

#include "globalmanager/controllers/worker_s3.h"

#include <catch2/catch.hpp>

#include "common/api/joint_inference_service.h"
#include "globalmanager/controllers/joint_inference_workers.h"
#include "globalmanager/controllers/worker_template.h"

namespace nereid::gm {
namespace {

using kube::Json;

constexpr char kKeyId[] = "AKIDEXAMPLEKEYID0001";
constexpr char kSecretKey[] = "sEcReTvAlUe/DoNotLeak+0001";

WorkerS3Options Options(bool literal = false) {
  WorkerS3Options options;
  options.secret_name = "mysecret";
  options.credential = {"minio.local:9000", false, kKeyId, kSecretKey};
  options.literal_credentials = literal;
  return options;
}

Json Template() {
  return Json::parse(R"({"spec": {
    "initContainers": [{"name": "user-init", "image": "busybox"}],
    "containers": [{"name": "main", "image": "img:1",
                    "env": [{"name": "ACCESS_KEY_ID", "value": "user-choice"}]},
                   {"name": "side", "image": "img:2"}]}})");
}

const Json* EnvEntry(const Json& container, const std::string& name) {
  auto env = container.find("env");
  if (env == container.end()) return nullptr;
  for (const Json& e : *env) {
    if (e["name"] == name) return &e;
  }
  return nullptr;
}

bool Leaks(const Json& json) {
  const std::string text = json.dump();
  return text.find(kSecretKey) != std::string::npos || text.find(kKeyId) != std::string::npos;
}

TEST_CASE("an s3 model is fetched by Sedna's storage-initializer; keys come from the Secret") {
  WorkerParams params;
  params.worker_type = "cloud";
  params.mounts.push_back({"MODEL_URL", {"s3://kubeedge/model/m.pb"}, false, false, "model"});
  params.s3 = Options();
  params.s3.initializer_image = "registry.local/init:v1";
  absl::StatusOr<Json> built =
      BuildWorkerTemplate({"JointInferenceService", "ji", "ns", "u"}, Template(), params);
  REQUIRE(built.ok());
  const Json& spec = (*built)["spec"];
  CHECK_FALSE(Leaks(*built));

  REQUIRE(spec["initContainers"].size() == 2);
  CHECK(spec["initContainers"][0]["name"] == "user-init");  // Sedna appends after the user's.
  const Json& init = spec["initContainers"][1];
  CHECK(init["name"] == "storage-initializer");
  CHECK(init["image"] == "registry.local/init:v1");
  CHECK(init["args"] == Json::array({"s3://kubeedge/model/m.pb", "/downloads/kubeedge/model/"}));
  CHECK((*EnvEntry(init, "S3_ENDPOINT_URL"))["value"] == "http://minio.local:9000");
  CHECK((*EnvEntry(init, "ACCESS_KEY_ID"))["valueFrom"]["secretKeyRef"] ==
        Json{{"name", "mysecret"}, {"key", "ACCESS_KEY_ID"}});
  CHECK((*EnvEntry(init, "SECRET_ACCESS_KEY"))["valueFrom"]["secretKeyRef"]["name"] == "mysecret");
  CHECK((*EnvEntry(init, "INDIRECT_URL_MARK"))["value"] == "@");

  bool volume = false;
  for (const Json& v : spec["volumes"]) volume = volume || (v["name"] == "sedna-storage-initializer" && v.contains("emptyDir"));
  CHECK(volume);
  for (const Json& container : spec["containers"]) {
    CHECK((*EnvEntry(container, "MODEL_URL"))["value"] == "/downloads/kubeedge/model/m.pb");
    bool mounted = false;
    for (const Json& m : container["volumeMounts"]) {
      mounted = mounted || (m["mountPath"] == "/downloads" && m["readOnly"] == true);
    }
    CHECK(mounted);
    // A downloaded model needs no credential in the worker itself.
    CHECK(EnvEntry(container, "SECRET_ACCESS_KEY") == nullptr);
  }
}

TEST_CASE("indirect indexes: fetched by the initializer with '@'; a host-path one in it only") {
  WorkerParams params;
  params.worker_type = "train";
  // IL/LL ORIGINAL_DATASET_URL from the LC's dataIndexURL: a host-path index, and an s3 one.
  params.mounts.push_back({"ORIGINAL_DATASET_URL", {"/data/il/dataIndex.txt"}, true, false,
                           "index", /*download=*/true, /*indirect=*/true});
  params.mounts.push_back({"TEST_DATASET_URL", {"s3://b/il/index.txt"}, true, false, "s3 index",
                           /*download=*/true, /*indirect=*/true});
  params.mounts.push_back(
      {"MODEL_URLS", {"s3://b/m1.pb", "http://h/m2.pb"}, true, false, "models"});
  CHECK(UsesS3(params));
  params.s3 = Options();
  absl::StatusOr<Json> built =
      BuildWorkerTemplate({"IncrementalLearningJob", "il", "ns", "u"}, Template(), params);
  REQUIRE(built.ok());
  const Json& spec = (*built)["spec"];
  const Json& init = spec["initContainers"][1];
  CHECK(init["args"] == Json::array({"/home/data/data/il/dataIndex.txt", "@/downloads/data/il/",
                                     "s3://b/il/index.txt", "@/downloads/b/il/", "s3://b/m1.pb",
                                     "/downloads/b/"}));
  CHECK((*EnvEntry(init, "INDIRECT_URL_MARK"))["value"] == "@");
  CHECK((*EnvEntry(init, "ACCESS_KEY_ID"))["valueFrom"]["secretKeyRef"]["name"] == "mysecret");
  bool index_in_init = false;
  for (const Json& m : init["volumeMounts"]) {
    index_in_init = index_in_init ||
                    (m["name"] == "data-ilz" && m["mountPath"] == "/home/data/data/il/");
  }
  CHECK(index_in_init);
  bool index_volume = false;
  for (const Json& v : spec["volumes"]) {
    index_volume = index_volume ||
                   (v["name"] == "data-ilz" && v["hostPath"]["path"] == "/data/il/");
  }
  CHECK(index_volume);
  for (const Json& container : spec["containers"]) {
    CHECK((*EnvEntry(container, "ORIGINAL_DATASET_URL"))["value"] ==
          "/downloads/data/il/dataIndex.txt");
    CHECK((*EnvEntry(container, "TEST_DATASET_URL"))["value"] == "/downloads/b/il/index.txt");
    // ';' joins a mount's URLs; an http(s) URL reaches the worker unchanged, as Sedna's.
    CHECK((*EnvEntry(container, "MODEL_URLS"))["value"] == "/downloads/b/m1.pb;http://h/m2.pb");
    for (const Json& m : container.value("volumeMounts", Json::array())) {
      CHECK(m["name"] != "data-ilz");  // The index's directory is the initializer's only.
    }
  }
}

TEST_CASE("an s3 output is passed as is, with the credential env in every container") {
  WorkerParams params;
  params.worker_type = "train";
  params.mounts.push_back({"AGG_DATA_PATH", {"s3://bucket/agg"}, false, true, "aggDataPath",
                           /*download=*/false});
  params.s3 = Options();
  absl::StatusOr<Json> built = BuildWorkerTemplate({"FederatedLearningJob", "fl", "ns", "u"},
                                                   Template(), params);
  REQUIRE(built.ok());
  const Json& spec = (*built)["spec"];
  CHECK(spec["initContainers"].size() == 1);  // Only the user's.
  for (const Json& container : spec["containers"]) {
    CHECK((*EnvEntry(container, "AGG_DATA_PATH"))["value"] == "s3://bucket/agg");
    CHECK((*EnvEntry(container, "S3_ENDPOINT_URL"))["value"] == "http://minio.local:9000");
    CHECK(EnvEntry(container, "SECRET_ACCESS_KEY")->contains("valueFrom"));
  }
  // The user's own ACCESS_KEY_ID wins, as every env the GM injects.
  CHECK((*EnvEntry(spec["containers"][0], "ACCESS_KEY_ID"))["value"] == "user-choice");
  CHECK_FALSE(Leaks(*built));
}

TEST_CASE("literal credentials (the weaker GM switch) copy the values, as Sedna did") {
  WorkerParams params;
  params.worker_type = "train";
  params.mounts.push_back({"AGG_DATA_PATH", {"s3://bucket/agg"}, false, true, "aggDataPath",
                           /*download=*/false});
  params.s3 = Options(/*literal=*/true);
  absl::StatusOr<Json> built = BuildWorkerTemplate({"FederatedLearningJob", "fl", "ns", "u"},
                                                   Template(), params);
  REQUIRE(built.ok());
  CHECK((*EnvEntry((*built)["spec"]["containers"][1], "SECRET_ACCESS_KEY"))["value"] == kSecretKey);
}

TEST_CASE("an s3 model without a Secret is fetched anonymously; host paths add no initializer") {
  WorkerParams params;
  params.worker_type = "cloud";
  params.mounts.push_back({"MODEL_URL", {"s3://public/m.pb"}, false, false, "model"});
  params.mounts.push_back({"DATASET_URL", {"/data/d.txt"}, true, false, "dataset"});
  absl::StatusOr<Json> built =
      BuildWorkerTemplate({"JointInferenceService", "ji", "ns", "u"}, Template(), params);
  REQUIRE(built.ok());
  const Json& init = (*built)["spec"]["initContainers"][1];
  CHECK(EnvEntry(init, "S3_ENDPOINT_URL") == nullptr);
  CHECK(init["args"] == Json::array({"s3://public/m.pb", "/downloads/public/"}));

  params.mounts.erase(params.mounts.begin());
  built = BuildWorkerTemplate({"JointInferenceService", "ji", "ns", "u"}, Template(), params);
  REQUIRE(built.ok());
  CHECK((*built)["spec"]["initContainers"].size() == 1);
}

TEST_CASE("JointInferenceService workers: each gets its own Model's Secret") {
  Json object = Json::parse(R"({
    "apiVersion": "sedna.io/v1alpha1", "kind": "JointInferenceService",
    "metadata": {"name": "ji", "namespace": "ns", "uid": "u1", "generation": 1},
    "spec": {
      "edgeWorker": {"model": {"name": "little"}, "hardExampleMining": {"name": "IBT"},
        "template": {"spec": {"nodeName": "edge-0", "containers": [{"name": "l", "image": "l:1"}]}}},
      "cloudWorker": {"model": {"name": "big"},
        "template": {"spec": {"containers": [{"name": "b", "image": "b:1"}]}}}}})");
  absl::StatusOr<api::JointInferenceService> parsed = api::JointInferenceService::FromJson(object);
  REQUIRE(parsed.ok());
  JiModelUrls urls{"/models/little/l.pb", "s3://bucket/big.pb"};
  urls.cloud_s3 = Options();
  absl::StatusOr<JiChildren> children =
      BuildJointInferenceChildren(object, *parsed, urls, Placement{Placement::Mode::kNodeName,
                                                                   {"edge-0"}},
                                  "http://localhost:9100");
  REQUIRE(children.ok());
  const Json& cloud = children->deployments[0].object;
  const Json& edge = children->deployments[1].object;
  REQUIRE(cloud["spec"]["template"]["spec"]["initContainers"].size() == 1);
  CHECK(cloud["spec"]["template"]["spec"]["initContainers"][0]["name"] == "storage-initializer");
  CHECK_FALSE(edge["spec"]["template"]["spec"].contains("initContainers"));
  CHECK_FALSE(Leaks(cloud));
}

}  // namespace
}  // namespace nereid::gm
