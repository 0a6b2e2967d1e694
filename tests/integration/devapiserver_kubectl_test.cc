// Integration: the devapiserver binary on a free loopback port, driven by the real kubectl.

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tests/support/subprocess.h"

namespace nereid {
namespace {

using Json = nlohmann::json;
using testing::CommandResult;
using testing::Subprocess;
using testing::TempDir;

const std::string kServerBin = NEREID_DEVAPISERVER_BIN;
const std::string kKubectl = NEREID_KUBECTL;
const std::string kTestdata = NEREID_TESTDATA_DIR;

std::string Testdata(const std::string& name) { return kTestdata + "/" + name; }

// One devapiserver process plus a kubectl bound to its generated kubeconfig.
class DevApiServer {
 public:
  explicit DevApiServer(const TempDir& dir, std::vector<std::string> extra = {},
                        const std::string& scheme = "http")
      : dir_(dir) {
    std::vector<std::string> argv = {kServerBin, "--listen", "127.0.0.1:0", "--kubeconfig-out",
                                     dir.File("kubeconfig")};
    argv.insert(argv.end(), extra.begin(), extra.end());
    Subprocess::Options options;
    options.argv = argv;
    auto started = Subprocess::Start(std::move(options));
    REQUIRE(started.ok());
    process_ = *std::move(started);
    auto line = process_->ReadLine(absl::Seconds(15));
    INFO(line.status().ToString());
    REQUIRE(line.ok());
    url_ = testing::ListenUrl(*line);
    REQUIRE(url_.rfind(scheme + "://127.0.0.1:", 0) == 0);
  }

  CommandResult Kubectl(std::vector<std::string> args, std::string_view stdin_data = "") {
    std::vector<std::string> argv = {kKubectl, "--kubeconfig", dir_.File("kubeconfig"),
                                     "--cache-dir", dir_.File("kubectl-cache")};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = testing::RunCommand(argv, absl::Seconds(30), {{"HOME", dir_.path()}}, stdin_data);
    REQUIRE(r.ok());
    return *r;
  }

  // kubectl that must succeed; returns stdout.
  std::string Ok(std::vector<std::string> args, std::string_view stdin_data = "") {
    CommandResult r = Kubectl(args, stdin_data);
    INFO("kubectl " << args[0] << " stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    return r.out;
  }

  Json GetJson(std::vector<std::string> args) {
    args.insert(args.begin(), "get");
    args.push_back("-o");
    args.push_back("json");
    Json doc = Json::parse(Ok(args), nullptr, false);
    REQUIRE(doc.is_object());
    return doc;
  }

  Subprocess& process() { return *process_; }
  const std::string& url() const { return url_; }

  int Stop() {
    auto code = process_->Stop(absl::Seconds(10));
    REQUIRE(code.ok());
    return *code;
  }

  std::vector<std::string> KubectlArgv(std::vector<std::string> args) const {
    std::vector<std::string> argv = {kKubectl, "--kubeconfig", dir_.File("kubeconfig"),
                                     "--cache-dir", dir_.File("kubectl-cache")};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }

 private:
  const TempDir& dir_;
  std::unique_ptr<Subprocess> process_;
  std::string url_;
};

TempDir MakeDir() {
  auto dir = TempDir::Create("devapi-it-");
  REQUIRE(dir.ok());
  return *std::move(dir);
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST_CASE("kubectl: CRD with schema, printer columns and status; CR lifecycle") {
  TempDir dir = MakeDir();
  DevApiServer server(dir);
  CHECK(Contains(server.Ok({"version"}), "Server Version: v1.32"));
  CHECK(Contains(server.Ok({"apply", "-f", Testdata("widgets-crd.yaml")}), "created"));
  CHECK(Contains(server.Ok({"apply", "-f", Testdata("widget-a.yaml")}), "widget.test.nereid.io/widget-a created"));
  CHECK(Contains(server.Ok({"apply", "-f", Testdata("widget-a.yaml")}), "unchanged"));

  Json w = server.GetJson({"widget", "widget-a"});
  CHECK(w["spec"]["replicas"] == 1);  // schema default
  CHECK(w["spec"]["format"] == "csv");
  CHECK(w["metadata"]["generation"] == 1);
  CHECK(w["spec"]["extra"]["anything"] == Json::array({1, 2, 3}));  // preserve-unknown-fields

  // Table output shows the printer columns; wide adds the priority-1 column; short name and
  // category resolve.
  std::string table = server.Ok({"get", "widgets"});
  CHECK(Contains(table, "NAME"));
  CHECK(Contains(table, "FORMAT"));
  CHECK(Contains(table, "REPLICAS"));
  CHECK_FALSE(Contains(table, "OWNER"));
  CHECK(Contains(table, "widget-a"));
  std::string wide = server.Ok({"get", "wdg", "-o", "wide"});
  CHECK(Contains(wide, "OWNER"));
  CHECK(Contains(wide, "alice"));
  CHECK(Contains(server.Ok({"get", "nereidtest"}), "widget-a"));

  // Patches: merge, json, status subresource (the Ready column follows a JSONPath filter).
  server.Ok({"patch", "widget", "widget-a", "--type", "merge", "-p", R"({"spec":{"replicas":3}})"});
  server.Ok({"patch", "widget", "widget-a", "--type", "json", "-p",
             R"([{"op":"replace","path":"/spec/owner","value":"bob"}])"});
  server.Ok({"patch", "widget", "widget-a", "--subresource", "status", "--type", "merge", "-p",
             R"({"status":{"conditions":[{"type":"Ready","status":"True"}]}})"});
  w = server.GetJson({"widget", "widget-a"});
  CHECK(w["spec"]["replicas"] == 3);
  CHECK(w["spec"]["owner"] == "bob");
  CHECK(w["metadata"]["generation"] == 3);
  CHECK(w["status"]["conditions"][0]["status"] == "True");
  std::string row = server.Ok({"get", "widget", "widget-a", "--no-headers"});
  CHECK(Contains(row, "True"));
  // Strategic merge is for built-in kinds only, as upstream.
  CommandResult smp = server.Kubectl({"patch", "widget", "widget-a", "--type", "strategic", "-p", "{}"});
  CHECK(smp.exit_code != 0);

  server.Ok({"label", "widget", "widget-a", "tier=gold"});
  server.Ok({"annotate", "widget", "widget-a", "note=hello"});
  CHECK(Contains(server.Ok({"get", "widgets", "-l", "tier=gold", "-o", "name"}), "widget-a"));
  CHECK(server.Ok({"get", "widgets", "-l", "tier!=gold", "-o", "name"}).empty());
  w = server.GetJson({"widget", "widget-a"});
  CHECK(w["metadata"]["annotations"]["note"] == "hello");
  CHECK(w["metadata"]["generation"] == 3);  // metadata changes do not bump generation

  // describe lists the object's events (field selector on involvedObject).
  std::string uid = w["metadata"]["uid"];
  std::string event = R"({"apiVersion":"v1","kind":"Event","metadata":{"name":"widget-a.1"},
      "involvedObject":{"apiVersion":"test.nereid.io/v1alpha1","kind":"Widget","name":"widget-a",
                        "namespace":"default","uid":")" + uid + R"("},
      "reason":"Configured","message":"widget is ready","type":"Normal","source":{"component":"it"}})";
  server.Ok({"create", "-f", "-"}, event);
  std::string described = server.Ok({"describe", "widget", "widget-a"});
  CHECK(Contains(described, "Name:"));
  CHECK(Contains(described, "widget-a"));
  CHECK(Contains(described, "widget is ready"));

  // An invalid object is refused with the fields named.
  CommandResult bad = server.Kubectl({"apply", "-f", Testdata("widget-invalid.yaml")});
  CHECK(bad.exit_code != 0);
  CHECK(Contains(bad.err, "spec.format"));
  CHECK(Contains(bad.err, "spec.replicas"));
  CHECK(Contains(bad.err, "Widget"));
  CommandResult unknown = server.Kubectl(
      {"apply", "-f", "-"},
      R"({"apiVersion":"test.nereid.io/v1alpha1","kind":"Widget","metadata":{"name":"w2"},"spec":{"format":"txt","colour":"red"}})");
  CHECK(unknown.exit_code != 0);
  CHECK(Contains(unknown.err, "spec.colour"));

  // Server-side apply is refused clearly.
  CommandResult ssa = server.Kubectl({"apply", "--server-side", "-f", Testdata("widget-a.yaml")});
  CHECK(ssa.exit_code != 0);
  CHECK(Contains(ssa.err, "server-side apply is not supported"));

  CHECK(Contains(server.Ok({"delete", "widget", "widget-a"}), "deleted"));
  CommandResult gone = server.Kubectl({"get", "widget", "widget-a"});
  CHECK(gone.exit_code != 0);
  CHECK(Contains(gone.err, "NotFound"));
  CHECK(server.Stop() == 0);  // SIGTERM is a clean stop
}

TEST_CASE("kubectl: get --watch sees a change") {
  TempDir dir = MakeDir();
  DevApiServer server(dir);
  server.Ok({"apply", "-f", Testdata("widgets-crd.yaml")});
  server.Ok({"apply", "-f", Testdata("widget-a.yaml")});
  Subprocess::Options options;
  options.argv = server.KubectlArgv({"get", "widgets", "--watch"});
  options.env = {{"HOME", dir.path()}};
  options.capture_stderr = true;
  auto watch = Subprocess::Start(std::move(options));
  REQUIRE(watch.ok());
  REQUIRE((*watch)->WaitForStdoutContaining("widget-a", absl::Seconds(20)));
  server.Ok({"patch", "widget", "widget-a", "--type", "merge", "-p", R"({"spec":{"replicas":7}})"});
  bool saw = (*watch)->WaitForStdout(
      [](const std::string& out) {
        size_t first = out.find("widget-a");
        size_t second = out.find("widget-a", first + 1);
        return second != std::string::npos && out.find(" 7 ", second) != std::string::npos;
      },
      absl::Seconds(20));
  INFO("watch stdout: " << (*watch)->Stdout() << " stderr: " << (*watch)->Stderr());
  CHECK(saw);
  (void)(*watch)->Stop(absl::Seconds(5));
}

TEST_CASE("kubectl: cascade delete removes owned objects; namespaces take their contents") {
  TempDir dir = MakeDir();
  DevApiServer server(dir);
  server.Ok({"apply", "-f", Testdata("widgets-crd.yaml")});
  server.Ok({"apply", "-f", Testdata("widget-a.yaml")});
  std::string uid = server.GetJson({"widget", "widget-a"})["metadata"]["uid"];
  auto owned = [&](const std::string& name) {
    return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
           R"(","ownerReferences":[{"apiVersion":"test.nereid.io/v1alpha1","kind":"Widget",
           "name":"widget-a","uid":")" + uid + R"(","blockOwnerDeletion":true}]},"data":{"a":"b"}})";
  };
  server.Ok({"apply", "-f", "-"}, owned("owned-1"));
  server.Ok({"apply", "-f", "-"}, owned("owned-2"));
  server.Ok({"apply", "-f", "-"}, R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"free"}})");
  server.Ok({"delete", "widget", "widget-a", "--cascade=foreground"});
  CHECK(testing::WaitFor([&] {
    return server.Ok({"get", "configmaps", "-o", "name"}) == "configmap/free\n";
  }, absl::Seconds(20)));

  // Deployments: client-side apply twice sends a strategic merge patch.
  server.Ok({"apply", "-f", Testdata("deployment.yaml")});
  server.Ok({"apply", "-f", Testdata("deployment-v2.yaml")});
  Json d = server.GetJson({"deployment", "web"});
  const Json& web = d["spec"]["template"]["spec"]["containers"][0];
  CHECK(web["image"] == "nginx:2");
  CHECK(web["env"] == Json::parse(R"([{"name":"A","value":"1"},{"name":"C","value":"3"}])"));
  CHECK(web["ports"].size() == 2);
  CHECK(d["spec"]["template"]["spec"]["containers"][1]["name"] == "side");
  CHECK(d["metadata"]["generation"] == 2);
  server.Ok({"scale", "deployment", "web", "--replicas=4"});
  CHECK(server.GetJson({"deployment", "web"})["spec"]["replicas"] == 4);
  CHECK(Contains(server.Ok({"get", "deployments", "-o", "wide"}), "nginx:2,busybox:1"));

  // Typed-client generators send protobuf bodies.
  server.Ok({"create", "namespace", "gen"});
  server.Ok({"create", "configmap", "cfg", "-n", "gen", "--from-literal=k=v"});
  server.Ok({"create", "secret", "generic", "sec", "-n", "gen", "--from-literal=user=admin"});
  server.Ok({"create", "serviceaccount", "robot", "-n", "gen"});
  CHECK(server.GetJson({"configmap", "cfg", "-n", "gen"})["data"]["k"] == "v");
  CHECK(server.GetJson({"secret", "sec", "-n", "gen"})["data"]["user"] == "YWRtaW4=");
  CHECK(Contains(server.Ok({"get", "serviceaccounts", "-n", "gen"}), "robot"));

  // RBAC and DaemonSets are stored (deploy/ applies them), not enforced or run.
  CHECK(Contains(server.Ok({"apply", "-f", Testdata("rbac-daemonset.yaml")}), "daemonset.apps/agent created"));
  CHECK(Contains(server.Ok({"apply", "-f", Testdata("rbac-daemonset.yaml")}), "unchanged"));
  CHECK(Contains(server.Ok({"get", "daemonsets"}), "DESIRED"));
  CHECK(Contains(server.Ok({"get", "clusterrolebindings", "-o", "name"}), "clusterrolebinding.rbac.authorization.k8s.io/reader"));

  server.Ok({"apply", "-f", Testdata("namespace-team.yaml")});
  CHECK(Contains(server.Ok({"get", "configmaps", "-n", "team"}), "settings"));
  server.Ok({"delete", "namespace", "team", "--timeout=20s"});
  CommandResult ns = server.Kubectl({"get", "namespace", "team"});
  CHECK(ns.exit_code != 0);
  CHECK(Contains(ns.err, "NotFound"));
}

TEST_CASE("devapiserver: --data survives a restart") {
  TempDir dir = MakeDir();
  std::string data = dir.File("state.db");
  std::string uid;
  int64_t rv_before = 0;
  {
    DevApiServer server(dir, {"--data", data});
    server.Ok({"apply", "-f", Testdata("widgets-crd.yaml")});
    server.Ok({"apply", "-f", Testdata("widget-a.yaml")});
    Json w = server.GetJson({"widget", "widget-a"});
    uid = w["metadata"]["uid"];
    rv_before = std::stoll(w["metadata"]["resourceVersion"].get<std::string>());
    CHECK(server.Stop() == 0);
  }
  {
    DevApiServer server(dir, {"--data", data});
    Json w = server.GetJson({"widget", "widget-a"});
    CHECK(w["metadata"]["uid"] == uid);
    CHECK(Contains(server.Ok({"get", "widgets"}), "FORMAT"));  // the CRD came back too
    server.Ok({"label", "widget", "widget-a", "after=restart"});
    Json after = server.GetJson({"widget", "widget-a"});
    CHECK(std::stoll(after["metadata"]["resourceVersion"].get<std::string>()) > rv_before);
  }
}

TEST_CASE("devapiserver: HTTPS with a given certificate") {
  TempDir dir = MakeDir();
  auto cert = testing::RunCommand(
      {"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
       "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", dir.File("tls.key"),
       "-out", dir.File("tls.crt")},
      absl::Seconds(30));
  REQUIRE(cert.ok());
  if (cert->exit_code == 127) {
    WARN("openssl not installed: HTTPS not tested");
    return;
  }
  REQUIRE(cert->exit_code == 0);
  DevApiServer server(dir, {"--tls-cert", dir.File("tls.crt"), "--tls-key", dir.File("tls.key"),
                            "--tls-ca", dir.File("tls.crt")},
                      /*scheme=*/"https");
  CHECK(Contains(server.Ok({"get", "namespaces"}), "kube-system"));
}

TEST_CASE("devapiserver: --help says it is for development; bad flags fail clearly") {
  auto help = testing::RunCommand({kServerBin, "--help"}, absl::Seconds(10));
  REQUIRE(help.ok());
  CHECK(help->exit_code == 0);
  CHECK(Contains(help->out, "DEVELOPMENT AND TESTS ONLY"));
  auto remote = testing::RunCommand({kServerBin, "--listen", "0.0.0.0:0"}, absl::Seconds(10));
  REQUIRE(remote.ok());
  CHECK(remote->exit_code == 2);
  CHECK(Contains(remote->err, "non-loopback"));
  auto bogus = testing::RunCommand({kServerBin, "--bogus"}, absl::Seconds(10));
  REQUIRE(bogus.ok());
  CHECK(bogus->exit_code == 2);
}

}  // namespace
}  // namespace nereid
