// deploy/optional/monitoring/ applies: devapiserver with minimal prometheus-operator CRDs
// (tests/monitoring/crds/) and the real kubectl; the lc-metrics component renders over deploy/
// into an LC that serves /metrics on the node's address and names the port the PodMonitor scrapes.

#include <catch2/catch.hpp>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "common/api/yaml_json.h"
#include "common/kube/object.h"
#include "tests/monitoring/monitoring_files.h"
#include "tests/support/devapiserver_process.h"
#include "tests/support/subprocess.h"

namespace nereid::testing {
namespace {

using kube::Json;

const std::string kSource = NEREID_SOURCE_DIR;

DevApiServerProcess::Options ServerOptions() {
  DevApiServerProcess::Options options;
  options.devapiserver = NEREID_DEVAPISERVER_BIN;
  options.kubectl = NEREID_KUBECTL;
  options.source_dir = kSource;
  options.temp_prefix = "monitoring-manifests-";
  return options;
}

std::vector<Json> Parse(const std::string& yaml) {
  auto docs = api::YamlToJson(yaml);
  INFO(docs.status().ToString());
  REQUIRE(docs.ok());
  return *docs;
}

TEST_CASE("deploy/optional/monitoring applies with the prometheus-operator CRDs") {
  DevApiServerProcess server(ServerOptions());
  server.KubectlOk({"apply", "-f", kSource + "/tests/monitoring/crds/"});
  // Served once the CRDs are established; kubectl's discovery then finds the kinds.
  REQUIRE(WaitFor([&] { return server.Kubectl({"get", "prometheusrules", "-A"}).exit_code == 0; },
                  absl::Seconds(20)));
  server.KubectlOk({"apply", "-f", kSource + "/deploy/namespace.yaml"});

  const std::string applied = server.KubectlOk({"apply", "-k", MonitoringDir()});
  INFO(applied);
  for (const char* object : {"servicemonitor.monitoring.coreos.com/nereid-gm",
                             "podmonitor.monitoring.coreos.com/nereid-lc",
                             "prometheusrule.monitoring.coreos.com/nereid",
                             "configmap/nereid-grafana-dashboards"}) {
    CHECK(applied.find(std::string(object) + " created") != std::string::npos);
  }
  // Idempotent.
  const std::string again = server.KubectlOk({"apply", "-k", MonitoringDir()});
  CHECK(again.find("created") == std::string::npos);

  // What the API holds is what the files say: the rules as the promtool tests read them, the
  // ServiceMonitor on the GM Service's `metrics` port, the dashboards for Grafana's sidecar.
  const Json rule = Json::parse(server.KubectlOk({"-n", "sedna", "get", "prometheusrule", "nereid",
                                                  "-o", "json"}));
  CHECK(rule["spec"] == RuleFileSpec());
  const Json monitor = Json::parse(
      server.KubectlOk({"-n", "sedna", "get", "servicemonitor", "nereid-gm", "-o", "json"}));
  CHECK(monitor["spec"]["endpoints"][0]["port"] == "metrics");
  CHECK(monitor["spec"]["selector"]["matchLabels"]["app.kubernetes.io/name"] == "nereid-gm");
  const Json dashboards = Json::parse(server.KubectlOk(
      {"-n", "sedna", "get", "configmap", "nereid-grafana-dashboards", "-o", "json"}));
  CHECK(dashboards["metadata"]["labels"]["grafana_dashboard"] == "1");
  for (const std::string& file : DashboardFiles()) {
    INFO(file);
    REQUIRE(dashboards["data"].contains(file));
    CHECK(Json::parse(dashboards["data"][file].get<std::string>()) == Dashboard(file));
  }

  server.KubectlOk({"delete", "-k", MonitoringDir()});
  CHECK(Json::parse(server.KubectlOk({"-n", "sedna", "get", "prometheusrules", "-o", "json"}))
            ["items"].empty());
}

TEST_CASE("the lc-metrics component: metrics on the node's address, the REST API on loopback") {
  auto dir = TempDir::Create("lc-metrics-overlay-");
  REQUIRE(dir.ok());
  // An overlay of deploy/ with the component, as deploy/README.md shows it (kustomize takes only
  // relative paths: deploy/ is linked in).
  std::filesystem::create_directory_symlink(kSource + "/deploy", dir->File("deploy"));
  REQUIRE(dir->Write("kustomization.yaml",
                     "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                     "resources: [deploy]\n"
                     "components: [deploy/optional/monitoring/lc-metrics]\n")
              .ok());
  auto rendered = RunCommand({NEREID_KUBECTL, "kustomize", dir->path()}, absl::Seconds(60));
  REQUIRE(rendered.ok());
  INFO(rendered->err);
  REQUIRE(rendered->exit_code == 0);
  Json lc;
  for (const Json& doc : Parse(rendered->out)) {
    if (doc.value("kind", "") == "DaemonSet" && kube::Name(doc) == "lc") lc = doc;
  }
  REQUIRE(lc.is_object());
  const Json& container = lc["spec"]["template"]["spec"]["containers"][0];
  std::set<std::string> args;
  for (const Json& arg : container["args"]) args.insert(arg.get<std::string>());
  CHECK(args.count("--metrics-listen=$(NEREID_NODE_IP):9101") == 1);
  CHECK(args.count("--db=/var/lib/nereid/lc.db") == 1);  // the others kept
  bool node_ip = false;
  for (const Json& env : container["env"]) {
    node_ip = node_ip || (env["name"] == "NEREID_NODE_IP" &&
                          env["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP");
  }
  CHECK(node_ip);
  std::set<std::string> ports;
  for (const Json& port : container["ports"]) {
    ports.insert(port["name"].get<std::string>() + ":" +
                 std::to_string(port["containerPort"].get<int>()));
  }
  CHECK(ports == std::set<std::string>{"http:9100", "metrics:9101"});
  // The PodMonitor scrapes that port by name.
  for (const Json& doc : Parse(ReadText(MonitoringDir() + "/podmonitor.yaml"))) {
    CHECK(doc["spec"]["podMetricsEndpoints"][0]["port"] == "metrics");
  }
}

}  // namespace
}  // namespace nereid::testing
