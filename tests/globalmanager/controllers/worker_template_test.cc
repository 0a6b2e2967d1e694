#include "globalmanager/controllers/worker_template.h"

#include <catch2/catch.hpp>

#include "common/api/sedna_contract.h"

namespace nereid::gm {
namespace {

using kube::Json;

WorkerOwner Owner() { return {"JointInferenceService", "ji-1", "ns1", "uid-1"}; }

Json UserTemplate() {
  return Json::parse(R"({
    "metadata": {"name": "ignored", "labels": {"app": "mine", "tier": "user"},
                 "annotations": {"note": "kept"}},
    "spec": {
      "containers": [
        {"name": "main", "image": "img:1",
         "env": [{"name": "LC_SERVER", "value": "http://user:1"},
                 {"name": "FROM_SECRET", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}],
         "ports": [{"containerPort": 8080}],
         "resources": {"limits": {"cpu": "1"}},
         "volumeMounts": [{"name": "cfg", "mountPath": "/etc/cfg"}]},
        {"name": "side", "image": "img:2"}
      ],
      "volumes": [{"name": "cfg", "configMap": {"name": "c"}}],
      "restartPolicy": "Always"
    }
  })");
}

std::map<std::string, std::string> EnvOf(const Json& container) {
  std::map<std::string, std::string> env;
  for (const Json& e : container.value("env", Json::array())) {
    env[e["name"].get<std::string>()] = e.value("value", std::string("<valueFrom>"));
  }
  return env;
}

TEST_CASE("worker labels, owner and names follow Sedna's scheme") {
  WorkerOwner owner = Owner();
  auto labels = owner.WorkerLabels("Edge");
  CHECK(labels.at("jointinferenceservice.sedna.io/name") == "ji-1");
  CHECK(labels.at("jointinferenceservice.sedna.io/uid") == "uid-1");
  CHECK(labels.at("jointinferenceservice.sedna.io/worker-type") == "edge");
  kube::OwnerReference ref = owner.ControllerRef();
  CHECK(ref.api_version == "sedna.io/v1alpha1");
  CHECK(ref.kind == "JointInferenceService");
  CHECK(ref.controller);
  CHECK(ref.block_owner_deletion);

  const std::string name = WorkerName(owner, "Cloud");
  CHECK(name.rfind("cloudworker-", 0) == 0);
  CHECK(name.size() == std::string("cloudworker-").size() + 5);
  CHECK(WorkerName(owner, "cloud") == name);  // stable
  WorkerOwner other = owner;
  other.uid = "uid-2";
  CHECK(WorkerName(other, "cloud") != name);
}

TEST_CASE("base env: SERVICE_NAME for services, JOB_NAME (the SDK's ownerName) for every kind") {
  auto env = BaseWorkerEnv(Owner(), "edge", "http://localhost:9100");
  REQUIRE(env.size() == 5);
  CHECK(env[0] == EnvVar{"NAMESPACE", "ns1"});
  CHECK(env[1] == EnvVar{"SERVICE_NAME", "ji-1"});
  CHECK(env[2] == EnvVar{"JOB_NAME", "ji-1"});
  CHECK(env[3].name == "WORKER_NAME");
  CHECK(env[4] == EnvVar{"LC_SERVER", "http://localhost:9100"});
  WorkerOwner fl{"FederatedLearningJob", "fl", "ns1", "u"};
  auto job_env = BaseWorkerEnv(fl, "train", "x");
  REQUIRE(job_env.size() == 4);
  CHECK(job_env[1] == EnvVar{"JOB_NAME", "fl"});
  for (std::string_view kind : {"FeatureExtractionService", "ObjectSearchService",
                                "ObjectTrackingService"}) {
    WorkerOwner service{std::string(kind), "s", "ns1", "u"};
    auto service_env = ReportEnv(service, "", "x");
    REQUIRE(service_env.size() == 4);  // no WORKER_NAME when none is given
    CHECK(service_env[1] == EnvVar{"SERVICE_NAME", "s"});
    CHECK(service_env[2] == EnvVar{"JOB_NAME", "s"});
  }
  for (std::string_view kind : {"VideoAnalyticsJob", "ReidJob", "IncrementalLearningJob",
                                "LifelongLearningJob"}) {
    WorkerOwner job{std::string(kind), "j", "ns1", "u"};
    CHECK_FALSE(IsSednaService(kind));
    CHECK(BaseWorkerEnv(job, "train", "x")[1] == EnvVar{"JOB_NAME", "j"});
  }
}

TEST_CASE("the user's template is kept and Nereid's env never overwrites a user value") {
  WorkerParams params;
  params.worker_type = "edge";
  params.env = BaseWorkerEnv(Owner(), "edge", "http://localhost:9100");
  params.env.push_back({"FROM_SECRET", "ours"});
  params.labels = {{"tier", "nereid"}, {"extra", "x"}};
  params.host_network = true;
  params.restart_policy = "OnFailure";
  params.dns_policy = "ClusterFirstWithHostNet";
  absl::StatusOr<Json> built = BuildWorkerTemplate(Owner(), UserTemplate(), params);
  REQUIRE(built.ok());
  const Json& t = *built;

  CHECK_FALSE(t["metadata"].contains("name"));
  CHECK(t["metadata"]["annotations"]["note"] == "kept");
  CHECK(t["metadata"]["labels"]["app"] == "mine");
  CHECK(t["metadata"]["labels"]["tier"] == "user");  // user wins on ordinary labels
  CHECK(t["metadata"]["labels"]["extra"] == "x");
  CHECK(t["metadata"]["labels"]["jointinferenceservice.sedna.io/worker-type"] == "edge");

  const Json& main = t["spec"]["containers"][0];
  auto env = EnvOf(main);
  CHECK(env.at("LC_SERVER") == "http://user:1");       // user value wins
  CHECK(env.at("FROM_SECRET") == "<valueFrom>");       // valueFrom counts as set
  CHECK(env.at("NAMESPACE") == "ns1");
  CHECK(env.at("SERVICE_NAME") == "ji-1");
  CHECK(env.at("JOB_NAME") == "ji-1");
  CHECK(main["env"].size() == 6);                      // no duplicates
  CHECK(main["ports"][0]["containerPort"] == 8080);
  CHECK(main["resources"]["limits"]["cpu"] == "1");
  CHECK(main["volumeMounts"].size() == 1);
  auto side_env = EnvOf(t["spec"]["containers"][1]);
  CHECK(side_env.at("LC_SERVER") == "http://localhost:9100");  // every container gets the env
  CHECK(side_env.at("FROM_SECRET") == "ours");

  CHECK(t["spec"]["restartPolicy"] == "Always");  // only when unset
  CHECK(t["spec"]["hostNetwork"] == true);
  CHECK(t["spec"]["dnsPolicy"] == "ClusterFirstWithHostNet");
  CHECK_FALSE(t["spec"].contains("nodeName"));
  CHECK(t["spec"]["volumes"].size() == 1);
}

TEST_CASE("defaults are not applied over the user's explicit values; nodeName from placement") {
  Json user = UserTemplate();
  user["spec"]["hostNetwork"] = false;
  WorkerParams params;
  params.worker_type = "train";
  params.host_network = true;
  params.restart_policy = "OnFailure";
  params.node_name = "edge-1";
  absl::StatusOr<Json> built = BuildWorkerTemplate(Owner(), user, params);
  REQUIRE(built.ok());
  CHECK((*built)["spec"]["hostNetwork"] == false);
  CHECK((*built)["spec"]["restartPolicy"] == "Always");
  CHECK((*built)["spec"]["nodeName"] == "edge-1");
}

TEST_CASE("a selector label the user set to another value is refused with the field named") {
  Json user = UserTemplate();
  user["metadata"]["labels"]["jointinferenceservice.sedna.io/worker-type"] = "cloud";
  WorkerParams params;
  params.worker_type = "edge";
  std::vector<kube::StatusCause> causes = CheckWorkerTemplate(Owner(), user, params,
                                                              "spec.edgeWorker.template");
  REQUIRE(causes.size() == 1);
  CHECK(causes[0].field ==
        "spec.edgeWorker.template.metadata.labels[jointinferenceservice.sedna.io/worker-type]");
  CHECK(causes[0].message.find("remove it") != std::string::npos);
  absl::StatusOr<Json> built = BuildWorkerTemplate(Owner(), user, params, "spec.edgeWorker.template");
  REQUIRE_FALSE(built.ok());
  CHECK(built.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(kube::Causes(built.status()).size() == 1);

  // The same value is fine; so is a selector label of params.selector_labels with its value.
  user["metadata"]["labels"]["jointinferenceservice.sedna.io/worker-type"] = "edge";
  user["metadata"]["labels"]["app.sedna.io"] = "other";
  CHECK(CheckWorkerTemplate(Owner(), user, params, "t").empty());
  params.selector_labels = {{"app.sedna.io", "ji-1-edge-svc"}};
  CHECK(CheckWorkerTemplate(Owner(), user, params, "t").size() == 1);
}

TEST_CASE("a template that is not an object is refused") {
  WorkerParams params;
  params.worker_type = "edge";
  CHECK_FALSE(BuildWorkerTemplate(Owner(), Json(), params).ok());
  CHECK_FALSE(BuildWorkerTemplate(Owner(), Json::array(), params).ok());
}

TEST_CASE("host-path URLs are mounted like Sedna's storage initializer; remote URLs pass through") {
  WorkerParams params;
  params.worker_type = "cloud";
  params.mounts.push_back({"MODEL_URL", {"/models/big/model.pb"}, true, false, "model"});
  params.mounts.push_back({"MODEL_URLS", {"/models/big/other.pb", "s3://b/k.pb"}, false, false,
                           "models"});
  params.mounts.push_back({"OUTPUT_URL", {"/out/dir/"}, false, true, "output"});
  params.mounts.push_back({"PRETRAINED_MODEL_URL", {"https://h/m.pb"}, false, false, "pre"});
  absl::StatusOr<Json> built = BuildWorkerTemplate(Owner(), UserTemplate(), params);
  REQUIRE(built.ok());
  const Json& spec = (*built)["spec"];
  // One volume per host directory (the model dir once), plus the user's, plus /downloads for the
  // s3 model the storage-initializer fetches.
  REQUIRE(spec["volumes"].size() == 4);
  CHECK(spec["volumes"][3]["name"] == "sedna-storage-initializer");
  CHECK(spec["volumes"][1]["name"] == "models-big");
  CHECK(spec["volumes"][1]["hostPath"]["path"] == "/models/big");
  CHECK(spec["volumes"][1]["hostPath"]["type"] == "Directory");
  CHECK(spec["volumes"][2]["hostPath"]["path"] == "/out/dir");
  CHECK(spec["volumes"][2]["hostPath"]["type"] == "DirectoryOrCreate");
  for (const Json& container : spec["containers"]) {
    auto env = EnvOf(container);
    CHECK(env.at("MODEL_URL") == "/home/data/models/big/model.pb");
    CHECK(env.at("MODEL_URLS") == "/home/data/models/big/other.pb;/downloads/b/k.pb");
    CHECK(env.at("OUTPUT_URL") == "/home/data/out/dir");
    CHECK(env.at("PRETRAINED_MODEL_URL") == "https://h/m.pb");
    CHECK(env.at("DATA_PATH_PREFIX") == "/home/data");
    bool mounted = false;
    for (const Json& m : container["volumeMounts"]) {
      if (m["mountPath"] == "/home/data/models/big") {
        mounted = true;
        CHECK(m["name"] == "models-big");
        CHECK(m["readOnly"] == true);
      }
    }
    CHECK(mounted);
  }
}

TEST_CASE("remote-only mounts add no volume and no DATA_PATH_PREFIX; bad URLs are refused") {
  WorkerParams params;
  params.worker_type = "cloud";
  params.mounts.push_back({"MODEL_URL", {"http://h/m.pb"}, false, false, "model"});
  absl::StatusOr<Json> built = BuildWorkerTemplate(Owner(), UserTemplate(), params);
  REQUIRE(built.ok());
  CHECK((*built)["spec"]["volumes"].size() == 1);
  CHECK(EnvOf((*built)["spec"]["containers"][0]).count("DATA_PATH_PREFIX") == 0);

  params.mounts = {{"MODEL_URL", {"relative/m.pb"}, false, false, "model \"m\" (spec.url)"},
                   {"MODEL_URL", {"ftp://h/m"}, false, false, "model"}};
  std::vector<kube::StatusCause> causes = CheckWorkerTemplate(Owner(), UserTemplate(), params, "t");
  REQUIRE(causes.size() == 2);
  CHECK(causes[0].message.find("model \"m\" (spec.url)") != std::string::npos);
  CHECK_FALSE(BuildWorkerTemplate(Owner(), UserTemplate(), params).ok());
}

TEST_CASE("a user volume with a colliding name is kept; one for the same host dir is reused") {
  Json user = UserTemplate();
  user["spec"]["volumes"].push_back({{"name", "models"}, {"emptyDir", Json::object()}});
  user["spec"]["volumes"].push_back(
      {{"name", "mine"}, {"hostPath", {{"path", "/data"}}}});
  user["spec"]["containers"][0]["volumeMounts"].push_back(
      {{"name", "mine"}, {"mountPath", "/home/data/data"}});
  WorkerParams params;
  params.worker_type = "edge";
  params.mounts = {{"MODEL_URL", {"/models/m.pb"}, false, false, "model"},
                   {"TRAIN_DATASET_URL", {"/data/train.txt"}, false, false, "dataset"}};
  absl::StatusOr<Json> built = BuildWorkerTemplate(Owner(), user, params);
  REQUIRE(built.ok());
  const Json& volumes = (*built)["spec"]["volumes"];
  REQUIRE(volumes.size() == 4);
  CHECK(volumes[3]["name"] == "models-2");
  const Json& mounts = (*built)["spec"]["containers"][0]["volumeMounts"];
  int data_mounts = 0;
  for (const Json& m : mounts) data_mounts += m["mountPath"] == "/home/data/data" ? 1 : 0;
  CHECK(data_mounts == 1);  // the user's mount is kept, not doubled
}

TEST_CASE("Deployment, Service and Pod built from a template") {
  WorkerParams params;
  params.worker_type = "cloud";
  absl::StatusOr<Json> tmpl = BuildWorkerTemplate(Owner(), UserTemplate(), params);
  REQUIRE(tmpl.ok());

  Json deployment = BuildWorkerDeployment(Owner(), *tmpl, "cloud", {"", 3, {}});
  CHECK(deployment["apiVersion"] == "apps/v1");
  CHECK(deployment["metadata"]["name"] == "ji-1-deployment-cloud");
  CHECK(deployment["metadata"]["namespace"] == "ns1");
  CHECK(deployment["metadata"]["ownerReferences"][0]["uid"] == "uid-1");
  CHECK(deployment["metadata"]["ownerReferences"][0]["controller"] == true);
  CHECK(deployment["spec"]["replicas"] == 3);
  const Json& selector = deployment["spec"]["selector"]["matchLabels"];
  CHECK(selector["app.sedna.io"] == "ji-1-cloud-svc");
  CHECK(selector["jointinferenceservice.sedna.io/uid"] == "uid-1");
  for (auto& [k, v] : selector.items()) {
    CHECK(deployment["spec"]["template"]["metadata"]["labels"][k] == v);
  }
  const std::string hash =
      deployment["metadata"]["annotations"][std::string(kTemplateHashAnnotation)];
  CHECK(hash == ContentHash(deployment["spec"]["template"]));
  CHECK(hash.size() == 16);

  Json no_replicas = BuildWorkerDeployment(Owner(), *tmpl, "cloud", {"x-node-a", std::nullopt,
                                                                    {{"nereid.io/node", "a"}}});
  CHECK(no_replicas["metadata"]["name"] == "x-node-a");
  CHECK_FALSE(no_replicas["spec"].contains("replicas"));
  CHECK(no_replicas["spec"]["selector"]["matchLabels"]["nereid.io/node"] == "a");
  CHECK(no_replicas["spec"]["template"]["metadata"]["labels"]["nereid.io/node"] == "a");

  ServicePort port;
  port.port = 5000;
  Json service = BuildWorkerService(Owner(), "cloud", {port});
  CHECK(service["metadata"]["name"] == "ji-1-cloud");
  CHECK(service["spec"]["ports"][0]["name"] == "tcp-0");
  CHECK(service["spec"]["ports"][0]["port"] == 5000);
  CHECK(service["spec"]["ports"][0]["targetPort"] == 5000);
  CHECK(service["spec"]["selector"]["jointinferenceservice.sedna.io/worker-type"] == "cloud");
  CHECK(service["metadata"]["ownerReferences"][0]["kind"] == "JointInferenceService");
  CHECK(ServiceHost(Owner(), "ji-1-cloud") == "ji-1-cloud.ns1");

  Json pod = BuildWorkerPod(Owner(), *tmpl, "cloud");
  CHECK(pod["metadata"]["generateName"] == "ji-1-cloud-");
  CHECK_FALSE(pod["metadata"].contains("name"));
  CHECK(pod["metadata"]["labels"]["app"] == "mine");
  CHECK(pod["spec"]["containers"].size() == 2);
  CHECK(IsControlledBy(pod, Owner()));
  WorkerOwner other = Owner();
  other.uid = "uid-9";
  CHECK_FALSE(IsControlledBy(pod, other));
}

TEST_CASE("content hash is stable and sensitive") {
  Json a = {{"b", 1}, {"a", {{"y", 2}, {"x", 3}}}};
  Json b = Json::parse(R"({"a": {"x": 3, "y": 2}, "b": 1})");
  CHECK(ContentHash(a) == ContentHash(b));
  b["b"] = 2;
  CHECK(ContentHash(a) != ContentHash(b));
  Json bad = {{"s", std::string("\xff\xfe")}};
  CHECK(ContentHash(bad).size() == 16);  // invalid UTF-8 does not throw
}

TEST_CASE("label values longer than Kubernetes allows are shortened deterministically") {
  CHECK(LabelValue("short") == "short");
  const std::string long_name(70, 'a');
  const std::string v = LabelValue(long_name);
  CHECK(v.size() == 63);
  CHECK(v.rfind(std::string(54, 'a') + "-", 0) == 0);
  CHECK(LabelValue(long_name) == v);
  CHECK(LabelValue(long_name + "b") != v);
  WorkerOwner owner{"JointInferenceService", long_name, "ns", "uid"};
  CHECK(owner.WorkerLabels("edge").at("jointinferenceservice.sedna.io/name") == v);
}

}  // namespace
}  // namespace nereid::gm
