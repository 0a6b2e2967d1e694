// Integration, S3 credentials (GM side): devapiserver + the `globalmanager` binary + a `localcontroller`
// over mTLS + a real S3 server (s3rver), driven by kubectl:
//   - a Secret in Sedna's format and an s3:// Dataset naming it → the GM reads the Secret, sends
//     the credential to the dataset's node, the LC counts the object in S3 → numberOfSamples;
//   - a Dataset naming a Secret that does not exist → SpecValid=False reason CredentialsNotFound
//     and a Warning Event;
//   - a JointInferenceService whose Model is s3:// with credentialName → its Deployment has Sedna's
//     storage-initializer init container and secretKeyRef env;
//   - an IncrementalLearningJob (s3 deploy Model, s3 Dataset and outputDir) and a
//     FederatedLearningJob (s3 Dataset, transmitter.s3) → their inference, train and aggregation
//     Pods have the storage-initializer (args, /downloads volume and mounts) where they read s3
//     inputs, ACCESS_KEY_ID/SECRET_ACCESS_KEY by secretKeyRef and S3_ENDPOINT_URL, no key value;
//   - the secret key appears in no Dataset, Model, Deployment, Pod or Event, no annotation, no LC
//     REST answer and no GM or LC log line.
//   - reading the Secret Forbidden (devapiserver --enable-debug-faults answering the GM's Secret
//     GETs 403, as without deploy/optional's RoleBinding) → SpecValid=False CredentialsForbidden
//     and a Warning Event, nothing sent; allowed again → the Dataset proceeds and is counted.

#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/s3/credential.h"
#include "localcontroller/s3/curl_s3_client.h"
#include "nlohmann/json.hpp"
#include "tests/integration/edge_cluster.h"
#include "tests/integration/loopback_helpers.h"
#include "tests/support/s3_server.h"

namespace nereid {
namespace {

using Json = nlohmann::json;
using testing::Contains;
using testing::Lc;
using testing::S3Server;

constexpr absl::Duration kPoll = testing::kEdgePoll;

testing::EdgeBinaries Binaries() {
  return {NEREID_DEVAPISERVER_BIN, NEREID_GM_BIN, NEREID_LC_BIN, NEREID_KUBECTL, NEREID_SOURCE_DIR};
}

std::string SecretYaml(const std::string& endpoint) {
  return absl::StrCat(R"(apiVersion: v1
kind: Secret
metadata:
  name: mysecret
  namespace: default
  annotations:
    s3-endpoint: ")", endpoint, R"("
    s3-usehttps: "0"
type: Opaque
stringData:
  ACCESS_KEY_ID: )", S3Server::kAccessKeyId, R"(
  SECRET_ACCESS_KEY: )", S3Server::kSecretAccessKey, "\n");
}

std::string S3DatasetYaml(const std::string& name, const std::string& credential) {
  return absl::StrCat("apiVersion: sedna.io/v1alpha1\nkind: Dataset\nmetadata:\n  name: ", name,
                      "\n  namespace: default\nspec:\n  url: s3://data/sets/train.txt\n"
                      "  format: txt\n  nodeName: edge-a\n  credentialName: ",
                      credential, "\n");
}

constexpr char kModelAndService[] = R"(apiVersion: sedna.io/v1alpha1
kind: Model
metadata:
  name: big
  namespace: default
spec:
  url: s3://data/models/big.pb
  format: pb
  credentialName: mysecret
---
apiVersion: sedna.io/v1alpha1
kind: Model
metadata:
  name: little
  namespace: default
spec:
  url: /models/little.pb
  format: pb
---
apiVersion: sedna.io/v1alpha1
kind: JointInferenceService
metadata:
  name: ji
  namespace: default
spec:
  edgeWorker:
    model: {name: little}
    hardExampleMining: {name: IBT}
    template:
      spec:
        nodeName: edge-a
        containers: [{name: little, image: little:1}]
  cloudWorker:
    model: {name: big}
    template:
      spec:
        containers: [{name: big, image: big:1}]
)";

// An IncrementalLearningJob on edge-a training on the s3 Dataset d1 into an s3 outputDir (the job's
// credentialName), deploying an s3 Model naming the same Secret; its trigger fires at once (d1 has
// 3 samples, more than 2).
constexpr char kIncrementalLearning[] = R"(apiVersion: sedna.io/v1alpha1
kind: Model
metadata: {name: il-initial, namespace: default}
spec: {url: /models/il/initial.pb, format: pb}
---
apiVersion: sedna.io/v1alpha1
kind: Model
metadata: {name: il-deploy, namespace: default}
spec: {url: "s3://data/models/il/deploy.pb", format: pb, credentialName: mysecret}
---
apiVersion: sedna.io/v1alpha1
kind: IncrementalLearningJob
metadata: {name: il, namespace: default}
spec:
  initialModel: {name: il-initial}
  dataset: {name: d1, trainProb: 1.0}
  outputDir: "s3://data/il"
  credentialName: mysecret
  trainSpec:
    template:
      spec:
        nodeName: edge-a
        containers: [{name: train-worker, image: train:1}]
    trigger:
      checkPeriodSeconds: 1
      condition: {operator: ">", threshold: 2, metric: num_of_samples}
  evalSpec:
    template:
      spec:
        nodeName: edge-a
        containers: [{name: eval-worker, image: eval:1}]
  deploySpec:
    model: {name: il-deploy}
    trigger:
      condition: {operator: ">", threshold: 0.01, metric: precision_delta}
    template:
      spec:
        nodeName: edge-a
        containers: [{name: infer-worker, image: infer:1}]
)";

// A FederatedLearningJob whose one training worker reads the s3 Dataset d1 and whose workers
// exchange weights through transmitter.s3, both naming "mysecret".
constexpr char kFederatedLearning[] = R"(apiVersion: sedna.io/v1alpha1
kind: Model
metadata: {name: fl-model, namespace: default}
spec: {url: /models/fl/model.pb, format: pb}
---
apiVersion: sedna.io/v1alpha1
kind: FederatedLearningJob
metadata: {name: fl, namespace: default}
spec:
  transmitter:
    s3: {aggDataPath: "s3://data/agg", credentialName: mysecret}
  aggregationWorker:
    model: {name: fl-model}
    template:
      spec:
        containers: [{name: agg-worker, image: agg:1}]
  trainingWorkers:
    - dataset: {name: d1}
      template:
        spec:
          nodeName: edge-a
          containers: [{name: train-worker, image: train:1}]
)";

// The SpecValid condition of `object` ({} when none, or when `object` is not one).
Json SpecValid(const Json& object) {
  if (!object.is_object()) return Json::object();
  for (const Json& c : object.value("status", Json::object()).value("conditions", Json::array())) {
    if (c.value("type", "") == "SpecValid") return c;
  }
  return Json::object();
}

// The env entry `name` of `container` ({} when unset).
Json EnvEntry(const Json& container, const std::string& name) {
  for (const Json& e : container.value("env", Json::array())) {
    if (e.value("name", "") == name) return e;
  }
  return Json::object();
}

// `container` gets the keys of Secret "mysecret" by secretKeyRef, never as a literal value, and
// the endpoint of `s3` as S3_ENDPOINT_URL (the Secret's s3-endpoint annotation, s3-usehttps "0").
void CheckS3Env(const Json& container, const S3Server& s3) {
  INFO(container.dump());
  for (const char* key : {"ACCESS_KEY_ID", "SECRET_ACCESS_KEY"}) {
    const Json entry = EnvEntry(container, key);
    CHECK(entry.value("valueFrom", Json::object()) ==
          Json{{"secretKeyRef", {{"name", "mysecret"}, {"key", key}}}});
    CHECK_FALSE(entry.contains("value"));
  }
  CHECK(EnvEntry(container, "S3_ENDPOINT_URL").value("value", "") == "http://" + s3.endpoint());
}

// Sedna's storage-initializer in `pod_spec`: the init container fetching only `url` into `dir`
// with the keys of "mysecret" by reference, the /downloads emptyDir it writes and every worker
// reads.
void CheckStorageInitializer(const Json& pod_spec, const std::string& url, const std::string& dir,
                             const S3Server& s3) {
  INFO(pod_spec.dump());
  REQUIRE(pod_spec.value("initContainers", Json::array()).size() == 1);
  const Json& init = pod_spec["initContainers"][0];
  CHECK(init["name"] == "storage-initializer");
  CHECK(init["image"] == "kubeedge/sedna-storage-initializer:v0.3.0");
  // (url, dir) pairs; a URL several env vars name (IL's TRAIN_ and ORIGINAL_DATASET_URL) is
  // listed once per name today, fetched twice into the same place.
  const Json& args = init["args"];
  REQUIRE(args.size() >= 2);
  CHECK(args.size() % 2 == 0);
  for (size_t i = 0; i + 1 < args.size(); i += 2) {
    CHECK(Json::array({args[i], args[i + 1]}) == Json::array({url, dir}));
  }
  CheckS3Env(init, s3);
  auto has = [](const Json& object, const char* field, const Json& element) {
    const Json array = object.value(field, Json::array());
    return std::find(array.begin(), array.end(), element) != array.end();
  };
  CHECK(has(pod_spec, "volumes",
            {{"name", "sedna-storage-initializer"}, {"emptyDir", Json::object()}}));
  Json mount = {{"name", "sedna-storage-initializer"}, {"mountPath", "/downloads"}};
  CHECK(has(init, "volumeMounts", mount));
  mount["readOnly"] = true;
  for (const Json& worker : pod_spec["containers"]) {
    INFO(worker["name"]);
    CHECK(has(worker, "volumeMounts", mount));
  }
}

// s3rver in the cluster's directory, bucket "data" holding sets/train.txt (3 lines).
std::unique_ptr<S3Server> StartS3WithDataset(testing::EdgeCluster& cluster) {
  S3Server::Options options;
  options.data_dir = cluster.dir().File("s3");
  options.buckets = {"data"};
  absl::StatusOr<std::unique_ptr<S3Server>> started = S3Server::Start(options);
  INFO(started.status());
  REQUIRE(started.ok());
  const ::nereid::s3::Credential credential{(*started)->endpoint(), false,
                                            S3Server::kAccessKeyId, S3Server::kSecretAccessKey};
  lc::s3::CurlS3Client store(lc::s3::CurlS3Options{});
  REQUIRE(store.Put(credential, {"data", "sets/train.txt"}, "a\nb\nc\n").ok());
  return *std::move(started);
}

// Waits for the first Pod labelled `selector` (kubectl -l) and returns it.
Json WaitPod(testing::EdgeCluster& cluster, const std::string& selector) {
  Json pod = Json::object();
  const bool found = testing::WaitFor(
      [&] {
        const Json list = Json::parse(
            cluster.Kubectl({"get", "pods", "-l", selector, "-o", "json"}), nullptr, false);
        if (!list.is_object() || list.value("items", Json::array()).empty()) return false;
        pod = list["items"][0];
        return true;
      },
      absl::Seconds(30), kPoll);
  INFO(selector);
  REQUIRE(found);
  return pod;
}

// Neither key of the account is anywhere in `pod` (spec, env, annotations, status).
void CheckNoCredentialIn(const Json& pod) {
  INFO(pod.dump());
  CHECK_FALSE(Contains(pod.dump(), S3Server::kAccessKeyId));
  CHECK_FALSE(Contains(pod.dump(), S3Server::kSecretAccessKey));
}

// Waits until Dataset `name` says SpecValid reason `reason` and a Warning Event with that reason
// exists; the Dataset as last read.
Json WaitCredentialProblem(testing::EdgeCluster& cluster, const std::string& name,
                           const std::string& reason) {
  Json dataset;
  REQUIRE(testing::WaitFor(
      [&] {
        dataset =
            Json::parse(cluster.Kubectl({"get", "dataset", name, "-o", "json"}), nullptr, false);
        return SpecValid(dataset).value("reason", "") == reason;
      },
      absl::Seconds(20), kPoll));
  REQUIRE(testing::WaitFor(
      [&] {
        return Contains(cluster.Kubectl({"get", "events", "--field-selector",
                                         "involvedObject.name=" + name, "-o", "json"}),
                        reason);
      },
      absl::Seconds(20), kPoll));
  return dataset;
}

TEST_CASE("S3 credentials: Secret → LC over mTLS → counted in S3; never leaked",
          "[integration][s3]") {
  testing::EdgeCluster cluster(Binaries(), "s3-credentials-");
  std::unique_ptr<S3Server> s3_server = StartS3WithDataset(cluster);
  S3Server& s3 = *s3_server;

  cluster.StartGm();
  Lc lc = cluster.StartNodeLc("edge-a");
  REQUIRE(testing::WaitFor([&] { return lc.Synced(); }, absl::Seconds(20), kPoll));

  // The Secret in Sedna's format and a Dataset naming it: counted on edge-a from S3.
  cluster.Kubectl({"apply", "-f", "-"}, SecretYaml(s3.endpoint()));
  cluster.Kubectl({"apply", "-f", "-"}, S3DatasetYaml("d1", "mysecret"));
  CHECK(cluster.WaitSamples("d1", 3, absl::Seconds(30)));
  Json on_node = lc.Get("/api/v1/datasets/default/d1");
  INFO(on_node.dump());
  CHECK(on_node["spec"]["credentialReceived"] == true);

  // A Secret that does not exist: a condition and a Warning Event, nothing sent.
  cluster.Kubectl({"apply", "-f", "-"}, S3DatasetYaml("d2", "absent"));
  const Json d2 = WaitCredentialProblem(cluster, "d2", "CredentialsNotFound");
  CHECK(SpecValid(d2)["status"] == "False");
  CHECK(Contains(SpecValid(d2).value("message", ""), "\"absent\""));
  CHECK(lc.Get("/api/v1/datasets/default/d2").is_null());

  // A JointInferenceService with an s3 Model: Sedna's storage-initializer, keys by secretKeyRef.
  cluster.Kubectl({"apply", "-f", "-"}, kModelAndService);
  Json cloud;
  REQUIRE(testing::WaitFor(
      [&] {
        cloud = Json::parse(
            cluster.Kubectl({"get", "deployment", "ji-deployment-cloud", "-o", "json",
                             "--ignore-not-found"}),
            nullptr, false);
        return cloud.is_object();
      },
      absl::Seconds(20), kPoll));
  const Json& pod_spec = cloud["spec"]["template"]["spec"];
  CheckStorageInitializer(pod_spec, "s3://data/models/big.pb", "/downloads/data/models/", s3);
  CHECK(EnvEntry(pod_spec["containers"][0], "MODEL_URL")["value"] ==
        "/downloads/data/models/big.pb");

  // The key is nowhere but in the Secret: not in any object (spec, status, annotation), not in
  // the LC's REST answers, not in a log line.
  const std::string key = S3Server::kSecretAccessKey;
  for (const char* kind : {"datasets", "models", "jointinferenceservices", "deployments", "pods",
                           "events", "services"}) {
    INFO(kind);
    CHECK_FALSE(Contains(cluster.Kubectl({"get", kind, "-A", "-o", "json"}), key));
  }
  CHECK_FALSE(Contains(lc.Get("/api/v1/datasets").dump(), key));
  CHECK_FALSE(Contains(lc.Get("/api/v1/datasets/default/d1").dump(), key));
  CHECK_FALSE(Contains(lc.Get("/api/v1/status").dump(), key));
  CHECK_FALSE(Contains(cluster.GmStderr(), key));
  CHECK_FALSE(Contains(lc.process->Stderr(), key));
}

TEST_CASE("S3 credentials: IL and FL worker pods get the storage-initializer and secretKeyRef env",
          "[integration][s3]") {
  testing::EdgeCluster cluster(Binaries(), "s3-workers-");
  std::unique_ptr<S3Server> s3_server = StartS3WithDataset(cluster);
  const S3Server& s3 = *s3_server;
  cluster.StartGm();
  Lc lc = cluster.StartNodeLc("edge-a");
  REQUIRE(testing::WaitFor([&] { return lc.Synced(); }, absl::Seconds(20), kPoll));
  cluster.Kubectl({"apply", "-f", "-"}, SecretYaml(s3.endpoint()));
  cluster.Kubectl({"apply", "-f", "-"}, S3DatasetYaml("d1", "mysecret"));
  REQUIRE(cluster.WaitSamples("d1", 3, absl::Seconds(30)));

  // IncrementalLearningJob: the inference worker from the s3 deploy Model, then a train round.
  {
    cluster.Kubectl({"apply", "-f", "-"}, kIncrementalLearning);
    const Json inference =
        WaitPod(cluster, "incrementallearningjob.sedna.io/worker-type=inference");
    CheckStorageInitializer(inference["spec"], "s3://data/models/il/deploy.pb",
                            "/downloads/data/models/il/", s3);
    CHECK(EnvEntry(inference["spec"]["containers"][0], "MODEL_URL")["value"] ==
          "/downloads/data/models/il/deploy.pb");
    CheckNoCredentialIn(inference);

    // The LC's trigger counts d1 in S3 and reports the round: the train worker reads d1 through
    // the initializer and writes its model to S3 itself, so it holds the keys (by reference).
    const Json train = WaitPod(cluster, "incrementallearningjob.sedna.io/worker-type=train");
    CheckStorageInitializer(train["spec"], "s3://data/sets/train.txt", "/downloads/data/sets/", s3);
    const Json& worker = train["spec"]["containers"][0];
    CheckS3Env(worker, s3);
    CHECK(EnvEntry(worker, "TRAIN_DATASET_URL")["value"] == "/downloads/data/sets/train.txt");
    CHECK(EnvEntry(worker, "MODEL_URL")["value"] == "s3://data/il/train/1");
    CheckNoCredentialIn(train);
  }

  // FederatedLearningJob: an s3 Dataset and transmitter.s3.
  {
    cluster.Kubectl({"apply", "-f", "-"}, kFederatedLearning);
    const Json train = WaitPod(cluster, "federatedlearningjob.sedna.io/worker-type=train");
    CheckStorageInitializer(train["spec"], "s3://data/sets/train.txt", "/downloads/data/sets/", s3);
    const Json& worker = train["spec"]["containers"][0];
    CheckS3Env(worker, s3);
    CHECK(EnvEntry(worker, "TRANSMITTER")["value"] == "s3");
    CHECK(EnvEntry(worker, "AGG_DATA_PATH")["value"] == "s3://data/agg");
    CheckNoCredentialIn(train);

    // The aggregator reads no s3 input (no initializer) but uses the transmitter: keys by
    // reference.
    const Json aggregation =
        WaitPod(cluster, "federatedlearningjob.sedna.io/worker-type=aggregation");
    CHECK_FALSE(aggregation["spec"].contains("initContainers"));
    CheckS3Env(aggregation["spec"]["containers"][0], s3);
    CheckNoCredentialIn(aggregation);
  }
}

TEST_CASE("S3 credentials: a Forbidden Secret read waits with a condition, then proceeds",
          "[integration][s3]") {
  testing::EdgeCluster cluster(Binaries(), "s3-forbidden-", "", {"--enable-debug-faults"});
  std::unique_ptr<S3Server> s3_server = StartS3WithDataset(cluster);
  S3Server& s3 = *s3_server;

  // The GM may not read Secrets (kubectl may): what a namespace without the RoleBinding gives.
  const Json rule = {{"code", 403}, {"resource", "secrets"}, {"userAgent", "nereid-globalmanager"}};
  REQUIRE(testing::HttpPost(cluster.api_port(), "/debug/faults", rule.dump()).status == 200);
  cluster.StartGm();
  Lc lc = cluster.StartNodeLc("edge-a");
  REQUIRE(testing::WaitFor([&] { return lc.Synced(); }, absl::Seconds(20), kPoll));
  cluster.Kubectl({"apply", "-f", "-"}, SecretYaml(s3.endpoint()));
  cluster.Kubectl({"apply", "-f", "-"}, S3DatasetYaml("d1", "mysecret"));

  Json d1 = WaitCredentialProblem(cluster, "d1", "CredentialsForbidden");
  CHECK(SpecValid(d1)["status"] == "False");
  CHECK(Contains(SpecValid(d1).value("message", ""), "s3-credentials-rbac.yaml"));
  CHECK(lc.Get("/api/v1/datasets/default/d1").is_null());
  const Json faults =
      Json::parse(testing::HttpGet(cluster.api_port(), "/debug/faults").body, nullptr, false);
  CHECK(faults.value("injected", 0) >= 1);

  // The RoleBinding is granted: the next recheck (60 s) reads the Secret; the Dataset goes on.
  REQUIRE(testing::HttpDelete(cluster.api_port(), "/debug/faults").status == 200);
  CHECK(cluster.WaitSamples("d1", 3, absl::Seconds(100)));
  d1 = Json::parse(cluster.Kubectl({"get", "dataset", "d1", "-o", "json"}), nullptr, false);
  CHECK(SpecValid(d1)["status"] == "True");
  CHECK(lc.Get("/api/v1/datasets/default/d1")["spec"]["credentialReceived"] == true);
}

}  // namespace
}  // namespace nereid
