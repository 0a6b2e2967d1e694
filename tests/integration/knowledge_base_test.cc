// Integration: deploy/optional/knowledge-base — Sedna's KB server for LifelongLearningJob workers.
//   1. `kubectl apply -k` against devapiserver with the real kubectl creates the KB's
//      ServiceAccount, PersistentVolumeClaim, Deployment and Service in `sedna`, and re-applies
//      unchanged.
//   2. The wiring holds together: the address the GM gives LL workers as KB_SERVER
//      (deploy/gm/configmap.yaml `knowledgeBaseServer.server`) names that Service and its port; the
//      Service selects the Deployment's pods and targets the port the container serves; the
//      Deployment mounts the claim that was created; no ServiceAccount token is mounted.

#include <catch2/catch.hpp>

#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/api/yaml_json.h"
#include "common/kube/object.h"
#include "tests/support/devapiserver_process.h"

namespace nereid {
namespace {

using kube::Json;

const std::string kRepo = NEREID_SOURCE_DIR;

testing::DevApiServerProcess::Options ApiOptions() {
  testing::DevApiServerProcess::Options options;
  options.devapiserver = NEREID_DEVAPISERVER_BIN;
  options.kubectl = NEREID_KUBECTL;
  options.source_dir = kRepo;
  options.temp_prefix = "knowledge-base-";
  return options;
}

Json Get(testing::DevApiServerProcess& api, const std::string& kind, const std::string& name) {
  return Json::parse(api.KubectlOk({"get", kind, name, "-n", "sedna", "-o", "json"}));
}

// host, port of an http://host:port URL.
std::pair<std::string, int> HostPort(const std::string& url) {
  absl::string_view rest = url;
  REQUIRE(absl::ConsumePrefix(&rest, "http://"));
  std::vector<std::string> parts = absl::StrSplit(rest, ':');
  REQUIRE(parts.size() == 2);
  int port = 0;
  REQUIRE(absl::SimpleAtoi(parts[1], &port));
  return {parts[0], port};
}

TEST_CASE("knowledge base: the optional manifests apply and are the KB_SERVER the GM hands out") {
  testing::DevApiServerProcess api(ApiOptions());
  api.KubectlOk({"apply", "-f", kRepo + "/deploy/namespace.yaml"});
  const std::string applied =
      api.KubectlOk({"apply", "-k", kRepo + "/deploy/optional/knowledge-base/"});
  CHECK(applied.find("deployment.apps/kb created") != std::string::npos);
  CHECK(applied.find("service/kb created") != std::string::npos);
  CHECK(applied.find("persistentvolumeclaim/kb-data created") != std::string::npos);
  const std::string again =
      api.KubectlOk({"apply", "-k", kRepo + "/deploy/optional/knowledge-base/"});
  CHECK(again.find("created") == std::string::npos);
  CHECK(again.find("configured") == std::string::npos);

  // The GM's KB_SERVER for LL workers: http://<service>.<namespace>:<port>.
  auto configmap = api::YamlFileToJson(kRepo + "/deploy/gm/configmap.yaml");
  REQUIRE(configmap.ok());
  REQUIRE(configmap->size() == 1);
  auto gm_yaml = api::YamlToJson((*configmap)[0]["data"]["gm.yaml"].get<std::string>());
  REQUIRE(gm_yaml.ok());
  REQUIRE(gm_yaml->size() == 1);
  const auto [host, port] =
      HostPort((*gm_yaml)[0]["knowledgeBaseServer"]["server"].get<std::string>());
  CHECK(host == "kb.sedna");

  const Json service = Get(api, "service", "kb");
  REQUIRE(service["spec"]["ports"].size() == 1);
  const Json& service_port = service["spec"]["ports"][0];
  CHECK(service_port["port"] == port);

  const Json deployment = Get(api, "deployment", "kb");
  const Json& pod = deployment["spec"]["template"];
  for (const auto& [key, value] : service["spec"]["selector"].items()) {
    INFO("selector " << key);
    CHECK(pod["metadata"]["labels"].value(key, "") == value);
  }
  REQUIRE(pod["spec"]["containers"].size() == 1);
  const Json& container = pod["spec"]["containers"][0];
  bool serves_target = false;
  for (const Json& p : container["ports"]) {
    if (p.value("name", "") == service_port["targetPort"]) serves_target = p["containerPort"] == port;
  }
  CHECK(serves_target);
  CHECK(pod["spec"]["automountServiceAccountToken"] == false);
  CHECK(container["securityContext"]["allowPrivilegeEscalation"] == false);

  std::string claim;
  for (const Json& v : pod["spec"]["volumes"]) {
    if (v.contains("persistentVolumeClaim")) claim = v["persistentVolumeClaim"]["claimName"];
  }
  REQUIRE(claim == "kb-data");
  CHECK(Get(api, "persistentvolumeclaim", claim)["spec"]["resources"]["requests"]["storage"] ==
        "1Gi");
}

}  // namespace
}  // namespace nereid
