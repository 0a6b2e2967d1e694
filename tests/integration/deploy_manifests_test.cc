// Integration: deploy/ — Nereid's cluster manifests.
//   1. `kubectl kustomize deploy/` output obeys the deployment rules: every CRD file is installed,
//      RBAC is least privilege (no wildcards, no Secrets, the LC bound to nothing), every container
//      has resources, both probes, a locked-down securityContext and a pinned image, and the GM /
//      LC wiring matches what the daemons read (ports, env, mounts, config keys).
//   2. Against devapiserver with the real kubectl: `apply -k --dry-run=server` succeeds and persists
//      nothing; `apply -k` creates every object and re-applies unchanged; the TLS Secret script
//      works and refuses a certificate that does not name gm.sedna; `delete -k` removes it all.
//   3. deploy/install-node-pki.sh and scripts/demo-kubelet.sh do what they say.

#include <catch2/catch.hpp>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "common/api/yaml_json.h"
#include "common/kube/object.h"
#include "tests/support/subprocess.h"

namespace nereid {
namespace {

using kube::Json;
using testing::CommandResult;
using testing::Subprocess;
using testing::TempDir;

const std::string kServerBin = NEREID_DEVAPISERVER_BIN;
const std::string kKubectl = NEREID_KUBECTL;
const std::string kRepo = NEREID_SOURCE_DIR;
const std::string kDeploy = kRepo + "/deploy";

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TempDir MakeDir() {
  auto dir = TempDir::Create("deploy-it-");
  REQUIRE(dir.ok());
  return *std::move(dir);
}

CommandResult Run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {},
                  std::string_view stdin_data = "") {
  auto r = testing::RunCommand(argv, absl::Seconds(60), env, stdin_data);
  REQUIRE(r.ok());
  INFO(argv[0] << " stderr: " << r->err);
  REQUIRE_FALSE(r->timed_out);
  return *r;
}

// The objects `kubectl apply -k deploy/` would send, rendered by kubectl's own kustomize.
const std::vector<Json>& Rendered() {
  static const std::vector<Json> docs = [] {
    CommandResult r = Run({kKubectl, "kustomize", kDeploy});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto parsed = api::YamlToJson(r.out);
    INFO(parsed.status().ToString());
    REQUIRE(parsed.ok());
    return *parsed;
  }();
  return docs;
}

std::vector<Json> OfKind(const std::string& kind) {
  std::vector<Json> out;
  for (const Json& doc : Rendered()) {
    if (doc.value("kind", "") == kind) out.push_back(doc);
  }
  return out;
}

Json One(const std::string& kind, const std::string& name) {
  for (const Json& doc : OfKind(kind)) {
    if (kube::Name(doc) == name) return doc;
  }
  FAIL("no " << kind << " " << name << " in kubectl kustomize deploy/");
  return nullptr;
}

bool Has(const Json& array, const std::string& value) {
  return array.is_array() && std::find(array.begin(), array.end(), Json(value)) != array.end();
}

const Json& At(const Json& object, const std::string& path) {
  const Json* found = kube::FindPath(object, path);
  INFO("path " << path << " in " << object.dump().substr(0, 300));
  REQUIRE(found != nullptr);
  return *found;
}

// The pod templates of every workload kind in the output.
std::vector<std::pair<std::string, Json>> PodTemplates() {
  std::vector<std::pair<std::string, Json>> out;
  for (const Json& doc : Rendered()) {
    const std::string kind = doc.value("kind", "");
    if (kind == "Deployment" || kind == "DaemonSet" || kind == "StatefulSet" || kind == "Job") {
      out.emplace_back(kind + "/" + kube::Name(doc), At(doc, "spec.template"));
    }
  }
  return out;
}

Json Container(const Json& workload, const std::string& name) {
  for (const Json& c : At(workload, "spec.template.spec.containers")) {
    if (c.value("name", "") == name) return c;
  }
  FAIL("no container " << name);
  return nullptr;
}

Json EnvVar(const Json& container, const std::string& name) {
  for (const Json& e : container.value("env", Json::array())) {
    if (e.value("name", "") == name) return e;
  }
  return nullptr;
}

Json Volume(const Json& workload, const std::string& name) {
  for (const Json& v : At(workload, "spec.template.spec.volumes")) {
    if (v.value("name", "") == name) return v;
  }
  FAIL("no volume " << name);
  return nullptr;
}

Json Mount(const Json& container, const std::string& volume) {
  for (const Json& m : container.value("volumeMounts", Json::array())) {
    if (m.value("name", "") == volume) return m;
  }
  FAIL("no mount of volume " << volume);
  return nullptr;
}

TEST_CASE("deploy: every CRD file in deploy/crds/ is installed by the kustomization") {
  std::set<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(kDeploy + "/crds")) {
    if (entry.path().extension() != ".yaml") continue;
    auto docs = api::YamlFileToJson(entry.path().string());
    REQUIRE(docs.ok());
    for (const Json& doc : *docs) {
      if (doc.value("kind", "") == "CustomResourceDefinition") files.insert(kube::Name(doc));
    }
  }
  std::set<std::string> rendered;
  for (const Json& crd : OfKind("CustomResourceDefinition")) rendered.insert(kube::Name(crd));
  CHECK(files.size() >= 6);
  CHECK(rendered == files);
  CHECK(rendered.count("datasets.sedna.io") == 1);
  // deploy/crds/ stays `kubectl apply -f`-clean: no kustomization file inside it.
  CHECK_FALSE(std::filesystem::exists(kDeploy + "/crds/kustomization.yaml"));
}

TEST_CASE("deploy: namespaced objects live in sedna, images are pinned") {
  REQUIRE(One("Namespace", "sedna").is_object());
  const std::set<std::string> cluster_scoped = {"Namespace", "CustomResourceDefinition", "ClusterRole",
                                                "ClusterRoleBinding"};
  for (const Json& doc : Rendered()) {
    INFO(doc.value("kind", "") << " " << kube::Name(doc));
    if (cluster_scoped.count(doc.value("kind", "")) != 0) {
      CHECK(kube::Namespace(doc).empty());
    } else {
      CHECK(kube::Namespace(doc) == "sedna");
    }
    CHECK(kube::FindPath(doc, "metadata.labels") != nullptr);
  }
  for (const auto& [name, tpl] : PodTemplates()) {
    for (const char* list : {"containers", "initContainers"}) {
      for (const Json& c : tpl["spec"].value(list, Json::array())) {
        std::string image = c.value("image", "");
        INFO(name << " container " << c.value("name", "") << " image " << image);
        // name:tag or name@sha256:..., never :latest or untagged.
        const size_t slash = image.rfind('/');
        const size_t colon = image.find(':', slash == std::string::npos ? 0 : slash);
        const bool digest = Contains(image, "@sha256:");
        CHECK((digest || colon != std::string::npos));
        if (!digest && colon != std::string::npos) CHECK(image.substr(colon + 1) != "latest");
      }
    }
  }
}

TEST_CASE("deploy: RBAC is least privilege") {
  const std::set<std::string> forbidden_verbs = {"*", "escalate", "bind", "impersonate",
                                                  "deletecollection"};
  std::vector<Json> roles = OfKind("ClusterRole");
  for (const Json& r : OfKind("Role")) roles.push_back(r);
  REQUIRE(roles.size() >= 2);
  for (const Json& role : roles) {
    INFO(role["kind"] << " " << kube::Name(role));
    REQUIRE(role.contains("rules"));
    CHECK_FALSE(role.contains("aggregationRule"));
    for (const Json& rule : role["rules"]) {
      INFO(rule.dump());
      CHECK_FALSE(rule.contains("nonResourceURLs"));
      for (const char* field : {"apiGroups", "resources", "verbs", "resourceNames"}) {
        for (const Json& v : rule.value(field, Json::array())) {
          CHECK(v != "*");
          CHECK_FALSE(Contains(v.get<std::string>(), "*"));
        }
      }
      REQUIRE(rule.contains("verbs"));
      REQUIRE_FALSE(rule["verbs"].empty());
      for (const Json& verb : rule["verbs"]) CHECK(forbidden_verbs.count(verb) == 0);
      // The GM reads no Secret (its TLS files are mounted by the kubelet) and no ConfigMap; Nodes
      // it may only read (placement checks their labels and taints), never change.
      CHECK_FALSE(Has(rule["resources"], "secrets"));
      CHECK_FALSE(Has(rule["resources"], "configmaps"));
      if (Has(rule["resources"], "nodes")) {
        for (const Json& verb : rule["verbs"]) {
          CHECK((verb == "get" || verb == "list" || verb == "watch"));
        }
      }
      // Users own sedna.io specs: the GM never creates or updates them (status only). EdgeNodes
      // are the GM's own kind (checked below).
      if (Has(rule["apiGroups"], "sedna.io")) {
        for (const Json& res : rule["resources"]) {
          if (Contains(res.get<std::string>(), "/") || res == "edgenodes") continue;
          CHECK_FALSE(Has(rule["verbs"], "create"));
          CHECK_FALSE(Has(rule["verbs"], "update"));
          CHECK_FALSE(Has(rule["verbs"], "patch"));
        }
      }
    }
  }

  // The GM's cluster-wide role: sedna.io reads and status writes, events; leases are not in it.
  Json gm = One("ClusterRole", "nereid-gm");
  bool dataset_status = false, events = false;
  for (const Json& rule : gm["rules"]) {
    CHECK_FALSE(Has(rule["apiGroups"], "coordination.k8s.io"));
    if (Has(rule["resources"], "datasets/status")) dataset_status = Has(rule["verbs"], "update");
    if (Has(rule["resources"], "events")) {
      events = Has(rule["verbs"], "create") && Has(rule["verbs"], "patch");
    }
  }
  CHECK(dataset_status);
  CHECK(events);

  // EdgeNodes (`kubectl get en`): created and read, status patched; never updated or deleted
  // (the garbage collector removes them with their Node), each in a rule of its own.
  int edge_node_rules = 0;
  for (const Json& rule : gm["rules"]) {
    if (Has(rule["resources"], "edgenodes")) {
      ++edge_node_rules;
      CHECK(rule["resources"] == Json::array({"edgenodes"}));
      CHECK(rule["verbs"] == Json::array({"get", "list", "create"}));
    }
    if (Has(rule["resources"], "edgenodes/status")) {
      ++edge_node_rules;
      CHECK(rule["resources"] == Json::array({"edgenodes/status"}));
      CHECK(rule["verbs"] == Json::array({"patch"}));
    }
  }
  CHECK(edge_node_rules == 2);

  // Leader election: one Lease by name in sedna (create cannot be limited by name).
  Json election = One("Role", "nereid-gm-leader-election");
  for (const Json& rule : election["rules"]) {
    CHECK(rule["apiGroups"] == Json::array({"coordination.k8s.io"}));
    CHECK(rule["resources"] == Json::array({"leases"}));
    if (!Has(rule["verbs"], "create")) CHECK(rule["resourceNames"] == Json::array({"nereid-gm"}));
  }

  // Bindings name only the GM's ServiceAccount; nothing is bound to the LC's.
  std::vector<Json> bindings = OfKind("ClusterRoleBinding");
  for (const Json& b : OfKind("RoleBinding")) bindings.push_back(b);
  REQUIRE(bindings.size() >= 2);
  for (const Json& binding : bindings) {
    INFO(kube::Name(binding));
    for (const Json& subject : binding["subjects"]) {
      CHECK(subject["kind"] == "ServiceAccount");
      CHECK(subject["name"] == "nereid-gm");
      CHECK(subject["namespace"] == "sedna");
    }
    CHECK(Contains(binding["roleRef"]["name"].get<std::string>(), "nereid-gm"));
  }
  Json lc_sa = One("ServiceAccount", "nereid-lc");
  CHECK(lc_sa["automountServiceAccountToken"] == false);
}

// A manifest of deploy/optional that is one Role and its RoleBinding.
std::pair<Json, Json> OptionalRoleAndBinding(const std::string& file) {
  auto docs = api::YamlFileToJson(kDeploy + "/optional/" + file);
  INFO(docs.status().ToString());
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 2);
  return {(*docs)[0], (*docs)[1]};
}

TEST_CASE("deploy: the optional S3 Role grants only get on secrets, in one namespace") {
  const auto [role, binding] = OptionalRoleAndBinding("s3-credentials-rbac.yaml");
  CHECK(role["kind"] == "Role");  // Namespaced: never a ClusterRole.
  REQUIRE(role["rules"].size() == 1);
  CHECK(role["rules"][0]["resources"] == Json::array({"secrets"}));
  CHECK(role["rules"][0]["verbs"] == Json::array({"get"}));  // No list, no watch.
  CHECK(binding["kind"] == "RoleBinding");
  CHECK(binding["roleRef"]["name"] == kube::Name(role));
  CHECK(binding["subjects"][0]["name"] == "nereid-gm");
  CHECK(binding["subjects"][0]["namespace"] == "sedna");
  // Not part of the default install.
  for (const Json& r : OfKind("Role")) CHECK(kube::Name(r) != kube::Name(role));
}

TEST_CASE("deploy: the optional edge-shards Role grants Leases only, in the GM's namespace") {
  const auto [role, binding] = OptionalRoleAndBinding("edge-shards-rbac.yaml");
  CHECK(role["kind"] == "Role");  // Namespaced: never a ClusterRole.
  CHECK(kube::Namespace(role) == "sedna");
  REQUIRE(role["rules"].size() == 1);
  CHECK(role["rules"][0]["apiGroups"] == Json::array({"coordination.k8s.io"}));
  CHECK(role["rules"][0]["resources"] == Json::array({"leases"}));
  CHECK(role["rules"][0]["verbs"] ==
        Json::array({"get", "list", "watch", "update", "delete"}));  // create: leader election's
  CHECK(binding["kind"] == "RoleBinding");
  CHECK(binding["roleRef"]["name"] == kube::Name(role));
  CHECK(binding["subjects"][0]["name"] == "nereid-gm");
  CHECK(binding["subjects"][0]["namespace"] == "sedna");
  for (const Json& r : OfKind("Role")) CHECK(kube::Name(r) != kube::Name(role));
}

TEST_CASE("deploy: every container has resources, probes and a locked-down securityContext") {
  auto templates = PodTemplates();
  REQUIRE(templates.size() == 2);
  for (const auto& [name, tpl] : templates) {
    const Json& spec = tpl["spec"];
    INFO(name);
    CHECK(At(spec, "securityContext.seccompProfile.type") == "RuntimeDefault");
    CHECK_FALSE(spec.value("hostPID", false));
    CHECK_FALSE(spec.value("hostIPC", false));
    for (const Json& c : spec["containers"]) {
      INFO("container " << c.value("name", ""));
      CHECK(c.contains("livenessProbe"));
      CHECK(c.contains("readinessProbe"));
      CHECK(kube::FindPath(c, "resources.requests.cpu") != nullptr);
      CHECK(kube::FindPath(c, "resources.requests.memory") != nullptr);
      CHECK(kube::FindPath(c, "resources.limits.memory") != nullptr);
      const Json& sc = At(c, "securityContext");
      CHECK(sc.value("allowPrivilegeEscalation", true) == false);
      CHECK(sc.value("readOnlyRootFilesystem", false) == true);
      CHECK(sc.value("privileged", false) == false);
      CHECK(At(sc, "capabilities.drop") == Json::array({"ALL"}));
      CHECK_FALSE(kube::FindPath(sc, "capabilities.add") != nullptr);
    }
  }
}

TEST_CASE("deploy: GlobalManager Deployment, config and Service") {
  Json gm = One("Deployment", "gm");
  CHECK(At(gm, "spec.replicas") == 2);
  // The standby is never ready: only an all-at-once rollout can finish.
  CHECK(At(gm, "spec.strategy.rollingUpdate.maxSurge") == 0);
  CHECK(At(gm, "spec.strategy.rollingUpdate.maxUnavailable") == "100%");
  const Json& pod = At(gm, "spec.template.spec");
  CHECK(pod["serviceAccountName"] == "nereid-gm");
  CHECK(At(pod, "securityContext.runAsNonRoot") == true);
  CHECK(At(pod, "securityContext.runAsUser") != 0);
  CHECK_FALSE(pod.value("hostNetwork", false));

  Json c = Container(gm, "globalmanager");
  std::map<std::string, int> ports;
  for (const Json& p : c["ports"]) ports[p["name"]] = p["containerPort"];
  CHECK(ports["edgehub"] == 9000);
  CHECK(At(c, "livenessProbe.httpGet.path") == "/healthz");
  CHECK(At(c, "readinessProbe.httpGet.path") == "/readyz");
  CHECK(At(c, "livenessProbe.httpGet.port") == "http");
  CHECK(At(c, "readinessProbe.httpGet.port") == "http");
  CHECK(Has(c["args"], "--config=/etc/nereid/config/gm.yaml"));
  CHECK(At(EnvVar(c, "POD_NAME"), "valueFrom.fieldRef.fieldPath") == "metadata.name");
  CHECK(At(EnvVar(c, "POD_NAMESPACE"), "valueFrom.fieldRef.fieldPath") == "metadata.namespace");
  CHECK(At(EnvVar(c, "POD_IP"), "valueFrom.fieldRef.fieldPath") == "status.podIP");

  // TLS from the Secret, read-only; config from the ConfigMap.
  CHECK(At(Volume(gm, "tls"), "secret.secretName") == "nereid-gm-tls");
  CHECK(Mount(c, "tls")["readOnly"] == true);
  CHECK(Mount(c, "tls")["mountPath"] == "/etc/nereid/tls");
  CHECK(At(Volume(gm, "config"), "configMap.name") == "gm-config");
  CHECK(Mount(c, "config")["mountPath"] == "/etc/nereid/config");
  CHECK(Mount(c, "config")["readOnly"] == true);

  // The config the pod reads: ports match the container, TLS paths are in the Secret's mount,
  // leader election on. (globalmanager's own parser checks the keys: see the daemon tests.)
  Json cm = One("ConfigMap", "gm-config");
  REQUIRE(cm["data"].contains("gm.yaml"));
  auto config_docs = api::YamlToJson(cm["data"]["gm.yaml"].get<std::string>());
  REQUIRE(config_docs.ok());
  REQUIRE(config_docs->size() == 1);
  const Json& config = (*config_docs)[0];
  CHECK(config["listen"] == "0.0.0.0:9000");
  CHECK(config["httpListen"] == "0.0.0.0:" + std::to_string(ports["http"]));
  CHECK(config["leaderElection"]["enabled"] == true);
  CHECK(config["leaderElection"]["leaseName"] == "nereid-gm");
  for (const char* key : {"ca", "cert", "key"}) {
    CHECK(config["tls"][key].get<std::string>().rfind("/etc/nereid/tls/", 0) == 0);
  }
  CHECK_FALSE(config.contains("insecure"));
  CHECK_FALSE(config.contains("kubeConfig"));  // in-cluster

  // Sedna's GM address: gm.sedna:9000, a named TCP port onto the edge hub.
  Json svc = One("Service", "gm");
  CHECK(At(svc, "spec.type") == "ClusterIP");
  CHECK(At(svc, "spec.selector") == At(gm, "spec.selector.matchLabels"));
  REQUIRE(At(svc, "spec.ports").size() == 2);
  const Json& port = At(svc, "spec.ports")[0];
  CHECK(port["port"] == 9000);
  CHECK(port["targetPort"] == "edgehub");
  CHECK(port["name"].get<std::string>().rfind("tcp-", 0) == 0);
  // /metrics for a ServiceMonitor, and the scrape annotations on the pods for the others.
  const Json& metrics = At(svc, "spec.ports")[1];
  CHECK(metrics["name"] == "metrics");
  CHECK(metrics["port"] == ports["http"]);
  CHECK(metrics["targetPort"] == "http");
  const Json& annotations = At(gm, "spec.template.metadata.annotations");
  CHECK(annotations["prometheus.io/scrape"] == "true");
  CHECK(annotations["prometheus.io/port"] == std::to_string(ports["http"]));
  CHECK(annotations["prometheus.io/path"] == "/metrics");
}

TEST_CASE("deploy: LocalController DaemonSet") {
  Json lc = One("DaemonSet", "lc");
  const Json& pod = At(lc, "spec.template.spec");
  CHECK(pod["serviceAccountName"] == "nereid-lc");
  CHECK(pod["automountServiceAccountToken"] == false);
  CHECK(pod["hostNetwork"] == true);
  CHECK(pod["dnsPolicy"] == "ClusterFirstWithHostNet");
  const Json& term =
      At(pod, "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms")[0];
  CHECK(term["matchExpressions"][0] ==
        Json({{"key", "node-role.kubernetes.io/edge"}, {"operator", "Exists"}}));
  bool tolerates_edge = false;
  for (const Json& t : pod["tolerations"]) {
    tolerates_edge |= t["key"] == "node-role.kubernetes.io/edge" && t["operator"] == "Exists";
  }
  CHECK(tolerates_edge);

  Json c = Container(lc, "localcontroller");
  CHECK(At(EnvVar(c, "NODENAME"), "valueFrom.fieldRef.fieldPath") == "spec.nodeName");
  CHECK(EnvVar(c, "GM_ADDRESS")["value"] == "gm.sedna:9000");
  CHECK(EnvVar(c, "ROOTFS_MOUNT_DIR")["value"] == "/rootfs");
  const std::string bind_port = EnvVar(c, "BIND_PORT")["value"];
  CHECK(bind_port == "9100");
  for (const char* probe : {"livenessProbe", "readinessProbe"}) {
    INFO(probe);
    CHECK(At(c, std::string(probe) + ".httpGet.host") == "127.0.0.1");  // the LC binds loopback
    CHECK(std::to_string(At(c, std::string(probe) + ".httpGet.port").get<int>()) == bind_port);
  }
  CHECK(At(c, "livenessProbe.httpGet.path") == "/healthz");
  CHECK(At(c, "readinessProbe.httpGet.path") == "/readyz");

  // Of the node's filesystem only the data roots, each at /rootfs<path> and named in
  // --data-roots, read-only but for the outputDirs and the hot-update files; the database on its
  // own writable hostPath; the node's own certificate from the node.
  std::vector<std::string> data_roots;
  for (const Json& arg : c["args"]) {
    const std::string a = arg;
    if (a.rfind("--data-roots=", 0) == 0) data_roots = absl::StrSplit(a.substr(13), ',');
  }
  CHECK(data_roots == std::vector<std::string>{"/data", "/var/lib/sedna/model-hot-update"});
  std::set<std::string> writable;
  for (const Json& m : c["volumeMounts"]) {
    const std::string mount_path = m["mountPath"];
    const std::string host_path = At(Volume(lc, m["name"].get<std::string>()), "hostPath.path");
    INFO(mount_path << " from " << host_path);
    CHECK(host_path != "/");
    if (mount_path.rfind("/rootfs/", 0) != 0) continue;
    CHECK(mount_path == "/rootfs" + host_path);
    CHECK(std::any_of(data_roots.begin(), data_roots.end(), [&](const std::string& root) {
      return host_path == root || host_path.rfind(root + "/", 0) == 0;
    }));
    if (!m.value("readOnly", false)) writable.insert(host_path);
  }
  CHECK(writable == std::set<std::string>{"/data/output", "/var/lib/sedna/model-hot-update"});
  CHECK(Mount(c, "data")["readOnly"] == true);
  CHECK(At(Volume(lc, "db"), "hostPath.type") == "DirectoryOrCreate");
  const std::string db_dir = Mount(c, "db")["mountPath"];
  CHECK_FALSE(Mount(c, "db").value("readOnly", false));
  CHECK(Has(c["args"], "--db=" + db_dir + "/lc.db"));
  CHECK(Mount(c, "pki")["readOnly"] == true);
  const std::string pki_dir = Mount(c, "pki")["mountPath"];
  for (const char* flag : {"--tls-ca=", "--tls-cert=", "--tls-key="}) {
    bool found = false;
    for (const Json& arg : c["args"]) {
      const std::string a = arg;
      found |= a.rfind(flag, 0) == 0 && a.rfind(std::string(flag) + pki_dir + "/", 0) == 0;
    }
    INFO(flag);
    CHECK(found);
  }
  for (const Json& arg : c["args"]) CHECK(arg != "--insecure");
}

// `kubectl kustomize` of an overlay of deploy/ with the given components of deploy/optional/, as
// the README tells users to write it (kustomize wants relative paths).
std::vector<Json> RenderedWith(const std::vector<std::string>& components) {
  TempDir overlay = MakeDir();
  const std::string base = std::filesystem::relative(kDeploy, overlay.path()).string();
  std::string text = "resources: [" + base + "]\ncomponents:\n";
  for (const std::string& c : components) text += "  - " + base + "/optional/" + c + "\n";
  REQUIRE(overlay.Write("kustomization.yaml", text).ok());
  CommandResult r = Run({kKubectl, "kustomize", overlay.path()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto parsed = api::YamlToJson(r.out);
  REQUIRE(parsed.ok());
  return *parsed;
}

Json FindIn(const std::vector<Json>& docs, const std::string& kind, const std::string& name) {
  for (const Json& doc : docs) {
    if (doc.value("kind", "") == kind && kube::Name(doc) == name) return doc;
  }
  FAIL("no " << kind << " " << name);
  return nullptr;
}

TEST_CASE("deploy: optional gm-on-control-plane lets the GM onto a tainted control plane") {
  Json gm = FindIn(RenderedWith({"gm-on-control-plane"}), "Deployment", "gm");
  const Json& pod = At(gm, "spec.template.spec");
  CHECK(pod["nodeSelector"] == Json({{"node-role.kubernetes.io/control-plane", ""}}));
  bool tolerates = false;
  for (const Json& t : pod["tolerations"]) {
    tolerates |= t["key"] == "node-role.kubernetes.io/control-plane" &&
                 t["operator"] == "Exists" && t["effect"] == "NoSchedule";
  }
  CHECK(tolerates);
  // Still never on an edge node; the default install is unchanged.
  CHECK(At(pod, "affinity.nodeAffinity") == At(One("Deployment", "gm"), "spec.template.spec.affinity.nodeAffinity"));
  CHECK_FALSE(At(One("Deployment", "gm"), "spec.template.spec").contains("tolerations"));
}

TEST_CASE("deploy: optional lc-gm-host-alias routes gm.sedna through /etc/hosts") {
  Json lc = FindIn(RenderedWith({"lc-gm-host-alias"}), "DaemonSet", "lc");
  const Json& aliases = At(lc, "spec.template.spec.hostAliases");
  REQUIRE(aliases.size() == 1);
  CHECK(aliases[0]["hostnames"] == Json::array({"gm.sedna"}));
  CHECK_FALSE(aliases[0].value("ip", "").empty());
  // The name the GM certificate carries, on the exposed port; the env is set once.
  Json c = Container(lc, "localcontroller");
  int gm_address = 0;
  for (const Json& e : c["env"]) gm_address += e["name"] == "GM_ADDRESS";
  CHECK(gm_address == 1);
  const std::string address = EnvVar(c, "GM_ADDRESS")["value"];
  CHECK(address.rfind("gm.sedna:", 0) == 0);
  CHECK(EnvVar(c, "NODENAME") != nullptr);  // the other variables are kept
}

TEST_CASE("deploy: optional lc-whole-host-root is the old whole-node view, read-only") {
  Json lc = FindIn(RenderedWith({"lc-whole-host-root"}), "DaemonSet", "lc");
  Json c = Container(lc, "localcontroller");
  CHECK(At(Volume(lc, "rootfs"), "hostPath.path") == "/");
  CHECK(Mount(c, "rootfs")["mountPath"] == "/rootfs");
  CHECK(Mount(c, "rootfs")["readOnly"] == true);
  CHECK(c["args"].back() == "--data-roots=/");  // the last one wins
  // The writable mounts are unchanged.
  CHECK_FALSE(Mount(c, "output").value("readOnly", false));
  CHECK_FALSE(Mount(c, "model-hot-update").value("readOnly", false));
}

// devapiserver on a free loopback port with kubectl bound to its kubeconfig.
class DevApiServer {
 public:
  explicit DevApiServer(const TempDir& dir) : dir_(dir) {
    Subprocess::Options options;
    options.argv = {kServerBin, "--listen", "127.0.0.1:0", "--kubeconfig-out", dir.File("kubeconfig")};
    auto started = Subprocess::Start(std::move(options));
    REQUIRE(started.ok());
    process_ = *std::move(started);
    auto line = process_->ReadLine(absl::Seconds(15));
    INFO(line.status().ToString());
    REQUIRE(line.ok());
    REQUIRE(testing::ListenUrl(*line).rfind("http://127.0.0.1:", 0) == 0);
  }

  std::map<std::string, std::string> Env() const {
    return {{"HOME", dir_.path()}, {"KUBECONFIG", dir_.File("kubeconfig")}};
  }

  CommandResult Kubectl(std::vector<std::string> args, std::string_view stdin_data = "") {
    std::vector<std::string> argv = {kKubectl, "--cache-dir", dir_.File("kubectl-cache")};
    argv.insert(argv.end(), args.begin(), args.end());
    return Run(argv, Env(), stdin_data);
  }

  std::string Ok(std::vector<std::string> args, std::string_view stdin_data = "") {
    CommandResult r = Kubectl(args, stdin_data);
    INFO("kubectl " << args[0] << " stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    return r.out;
  }

  Json GetJson(std::vector<std::string> args) {
    args.insert(args.begin(), "get");
    args.insert(args.end(), {"-o", "json"});
    Json doc = Json::parse(Ok(args), nullptr, false);
    REQUIRE(doc.is_object());
    return doc;
  }

  // kind/name of every object the kustomization names that exists now.
  std::set<std::string> Installed() {
    std::string out_text = Ok({"get", "-k", kDeploy, "--ignore-not-found", "-o", "json"});
    std::set<std::string> out;
    if (out_text.empty()) return out;
    Json list = Json::parse(out_text, nullptr, false);
    REQUIRE(list.is_object());
    // One object comes back as itself, several as a List.
    Json items = list.value("kind", "") == "List" ? list["items"] : Json::array({list});
    for (const Json& item : items) out.insert(item.value("kind", "") + "/" + kube::Name(item));
    return out;
  }

 private:
  const TempDir& dir_;
  std::unique_ptr<Subprocess> process_;
};

std::set<std::string> RenderedKindNames() {
  std::set<std::string> out;
  for (const Json& doc : Rendered()) out.insert(doc.value("kind", "") + "/" + kube::Name(doc));
  return out;
}

TEST_CASE("deploy: kubectl apply -k against devapiserver (server dry run, apply, TLS Secret, delete)") {
  TempDir dir = MakeDir();
  DevApiServer server(dir);
  const std::set<std::string> expected = RenderedKindNames();

  // Server-side dry run. As on a real API server, objects in a namespace that does not exist yet
  // are refused even in a dry run, so the namespace is created first.
  server.Ok({"apply", "-f", kDeploy + "/namespace.yaml"});
  std::string dry = server.Ok({"apply", "-k", kDeploy, "--dry-run=server"});
  size_t dry_lines = 0;
  for (size_t pos = 0; (pos = dry.find("(server dry run)", pos)) != std::string::npos; ++pos) ++dry_lines;
  CHECK(dry_lines == expected.size());
  CHECK(server.Installed() == std::set<std::string>{"Namespace/sedna"});  // nothing persisted
  CHECK(server.GetJson({"crd"})["items"].empty());

  // The real thing: every object created, and a second apply changes nothing.
  std::string applied = server.Ok({"apply", "-k", kDeploy});
  CHECK(Contains(applied, "deployment.apps/gm created"));
  CHECK(Contains(applied, "daemonset.apps/lc created"));
  CHECK(server.Installed() == expected);
  std::string again = server.Ok({"apply", "-k", kDeploy});
  size_t unchanged = 0;
  for (size_t pos = 0; (pos = again.find(" unchanged", pos)) != std::string::npos; ++pos) ++unchanged;
  INFO(again);
  CHECK(unchanged == expected.size());
  // The CRDs are served at once. (kubectl expands a category from its discovery cache, which
  // predates the CRDs; a lookup by resource name refreshes it, as on any cluster.)
  CHECK(server.Kubectl({"get", "datasets,models,distributedjobs"}).exit_code == 0);
  CHECK(server.Kubectl({"get", "sedna"}).exit_code == 0);
  Json deployment = server.GetJson({"-n", "sedna", "deployment", "gm"});
  CHECK(At(deployment, "spec.replicas") == 2);

  // The GM's TLS Secret from scripts/gen-certs.sh output, by the documented script.
  const std::string pki = dir.File("pki");
  CommandResult certs = Run({kRepo + "/scripts/gen-certs.sh", "--san", "DNS:gm.sedna,DNS:gm.sedna.svc",
                             pki, "edge-0"});
  REQUIRE(certs.exit_code == 0);
  CommandResult tls = Run({kDeploy + "/install-gm-tls.sh", pki}, server.Env());
  INFO(tls.err);
  REQUIRE(tls.exit_code == 0);
  Json secret = server.GetJson({"-n", "sedna", "secret", "nereid-gm-tls"});
  std::set<std::string> keys;
  for (const auto& [key, value] : secret["data"].items()) keys.insert(key);
  CHECK(keys == std::set<std::string>{"ca.crt", "tls.crt", "tls.key"});
  // Idempotent.
  CHECK(Run({kDeploy + "/install-gm-tls.sh", pki}, server.Env()).exit_code == 0);
  // A GM certificate that does not name gm.sedna would fail every node's TLS check: refused.
  const std::string plain = dir.File("plain-pki");
  REQUIRE(Run({kRepo + "/scripts/gen-certs.sh", plain}).exit_code == 0);
  CommandResult refused = Run({kDeploy + "/install-gm-tls.sh", plain}, server.Env());
  CHECK(refused.exit_code != 0);
  CHECK(Contains(refused.err, "does not name gm.sedna"));

  // Uninstall: everything the kustomization created goes (the namespace takes its contents).
  // --ignore-not-found: deleting the namespace may already have taken what is listed after it.
  server.Ok({"delete", "-k", kDeploy, "--wait=false", "--ignore-not-found"});
  CHECK(testing::WaitFor([&] { return server.Installed().empty(); }, absl::Seconds(20),
                         absl::Milliseconds(200)));
  CHECK(server.GetJson({"-n", "sedna", "secret"})["items"].empty());
}

mode_t Mode(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

TEST_CASE("deploy: install-node-pki.sh installs one node's certificate and refuses a wrong one") {
  TempDir dir = MakeDir();
  const std::string pki = dir.File("pki");
  REQUIRE(Run({kRepo + "/scripts/gen-certs.sh", pki, "edge-0", "edge-1"}).exit_code == 0);
  const std::string dest = dir.File("node/etc/nereid/pki");
  CommandResult ok = Run({kDeploy + "/install-node-pki.sh", pki, "edge-0", dest});
  INFO(ok.err);
  REQUIRE(ok.exit_code == 0);
  CHECK(Mode(dest) == 0700);
  CHECK(Mode(dest + "/tls.key") == 0600);
  CHECK(Mode(dest + "/tls.crt") == 0644);
  CHECK(Mode(dest + "/ca.crt") == 0644);
  CommandResult subject = Run({"openssl", "x509", "-in", dest + "/tls.crt", "-noout", "-subject"});
  CHECK(Contains(subject.out, "CN = edge-0"));

  // Unknown node: no files, clear message.
  CommandResult missing = Run({kDeploy + "/install-node-pki.sh", pki, "edge-9", dir.File("x")});
  CHECK(missing.exit_code != 0);
  CHECK(Contains(missing.err, "edge-9.crt is missing"));
  CHECK_FALSE(std::filesystem::exists(dir.File("x")));
  // edge-1's certificate filed under edge-0's name: refused (the GM would see edge-1).
  std::filesystem::copy_file(pki + "/nodes/edge-1.crt", pki + "/nodes/edge-0.crt",
                             std::filesystem::copy_options::overwrite_existing);
  CommandResult wrong = Run({kDeploy + "/install-node-pki.sh", pki, "edge-0", dir.File("y")});
  CHECK(wrong.exit_code != 0);
  CHECK(Contains(wrong.err, "is for 'edge-1', not 'edge-0'"));
}

TEST_CASE("quickstart: demo-kubelet.sh fakes pod phases, loudly, and only on devapiserver") {
  TempDir dir = MakeDir();
  DevApiServer server(dir);
  server.Ok({"apply", "-f", "-"}, R"({"apiVersion":"v1","kind":"Pod",
      "metadata":{"name":"worker-0","namespace":"default"},
      "spec":{"nodeName":"edge-0","restartPolicy":"Never",
              "containers":[{"name":"train","image":"example:1"},
                                                {"name":"sidecar","image":"example:1"}]}})");
  CHECK(server.GetJson({"pod", "worker-0"})["status"]["phase"] == "Pending");

  const std::string script = kRepo + "/scripts/demo-kubelet.sh";
  CommandResult first = Run({script, "--once", "--run-seconds", "1"}, server.Env());
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(Contains(first.out, "DEMO ONLY"));
  CHECK(Contains(first.out, "FAKED pod default/worker-0 → Running"));
  Json pod = server.GetJson({"pod", "worker-0"});
  CHECK(At(pod, "status.phase") == "Running");
  CHECK(At(pod, "status.containerStatuses").size() == 2);
  CHECK(At(pod, "status.containerStatuses")[1]["name"] == "sidecar");
  CHECK(kube::FindPath(pod, "status.startTime") != nullptr);

  // After --run-seconds the pod "succeeds" with exit code 0 in every container.
  bool succeeded = testing::WaitFor(
      [&] {
        CommandResult pass = Run({script, "--once", "--run-seconds", "1"}, server.Env());
        return pass.exit_code == 0 && Contains(pass.out, "FAKED pod default/worker-0 → Succeeded");
      },
      absl::Seconds(20), absl::Milliseconds(500));
  CHECK(succeeded);
  pod = server.GetJson({"pod", "worker-0"});
  CHECK(At(pod, "status.phase") == "Succeeded");
  CHECK(At(pod, "status.containerStatuses")[0]["state"]["terminated"]["exitCode"] == 0);

  // Not devapiserver (a server whose /version is not ours): refused.
  std::map<std::string, std::string> env = server.Env();
  const std::string fake_kubeconfig = dir.File("real-cluster.kubeconfig");
  auto written = dir.Write("real-cluster.kubeconfig",
                           "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "
                           "'http://127.0.0.1:1'}}]\ncontexts: [{name: c, context: {cluster: c}}]\n"
                           "current-context: c\n");
  REQUIRE(written.ok());
  env["KUBECONFIG"] = fake_kubeconfig;
  CommandResult refused = Run({script, "--once"}, env);
  CHECK(refused.exit_code != 0);
  CHECK(Contains(refused.err, "refusing to fake pod status"));
}

}  // namespace
}  // namespace nereid
