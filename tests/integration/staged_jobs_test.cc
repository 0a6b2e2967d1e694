// Integration: an IncrementalLearningJob's lifecycle with real processes on loopback —
// devapiserver, the `globalmanager` binary and a `localcontroller` binary (mTLS), driven by
// kubectl, pod phases written through the pods' status subresource as a kubelet would:
//   - the Dataset/Model CRDs and examples/incremental-learning-job.yaml (node, paths and
//     checkPeriodSeconds adapted) applied; the job waits for its train trigger on the dataset's
//     node while the dataset holds too few samples;
//   - the dataset file grows → the LC's trigger fires (live count, every checkPeriodSeconds), writes
//     the round's samples under its host root, and the GM creates the train pod with Sedna's labels,
//     env and owner;
//   - the train worker reports its model through the LC's REST, the pod Succeeds → Eval: the LC
//     prepares it, the eval pod runs and reports metrics (new model better by 0.1), Succeeds →
//     the LC's deploy trigger (precision_delta > 0.01) fires → the LC writes the hot-update
//     model_config.json under its host root → Deploy Completed, the job waits for round 2;
//   - the job deleted → its pods are garbage-collected (including an inference worker the GM may
//     re-create from its stale cache just after the deletion: devapiserver collects a dependent
//     whose owners are all gone, as upstream's garbage collector does).
// A LifelongLearningJob (examples/lifelong-learning-job.yaml adapted) the same way: no inference
// worker before the first deploy; the deploy always happens: the LC copies the trained knowledge
// base to <outputDir>/deploy/index.pkl under its host root, the GM starts the inference worker on
// it, and Deploy completes once that pod runs; deleting the job collects the pods.
// Both cases run in about 10 s together (5-7 s on an idle machine).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "tests/common/net/test_certs.h"
#include "tests/integration/loopback_helpers.h"
#include "tests/integration/sdk_worker.h"
#include "tests/support/devapiserver_process.h"
#include "tests/support/subprocess.h"

namespace nereid {
namespace {

using Json = nlohmann::json;
using testing::DumpOnFailure;
using testing::FreePort;
using testing::HttpGet;
using testing::HttpReply;
using testing::Subprocess;
using testing::TempDir;

const std::string kServerBin = NEREID_DEVAPISERVER_BIN;
const std::string kGmBin = NEREID_GM_BIN;
const std::string kLcBin = NEREID_LC_BIN;
const std::string kKubectl = NEREID_KUBECTL;
const std::string kSourceDir = NEREID_SOURCE_DIR;

constexpr absl::Duration kPoll = absl::Milliseconds(100);
constexpr size_t kStderrTail = 8000;  // DumpOnFailure
constexpr char kNode[] = "edge-a";
constexpr char kJob[] = "helmet-detection-incremental";
constexpr char kLlJob[] = "atcii-classifier";

void AppendLines(const std::string& path, int from, int to) {
  std::ofstream out(path, std::ios::app);
  for (int i = from; i <= to; ++i) out << "images/" << i << ".jpg labels/" << i << ".txt\n";
  out.flush();
  REQUIRE(out.good());
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string EnvOf(const Json& pod, const std::string& name) {
  for (const Json& e : pod["spec"]["containers"][0].value("env", Json::array())) {
    if (e.value("name", "") == name) return e.value("value", "");
  }
  return "<unset>";
}

std::string LabelOf(const Json& pod, const std::string& name) {
  const Json& labels = pod["metadata"].value("labels", Json::object());
  return labels.value(name, "<unset>");
}

// devapiserver + the globalmanager binary + one localcontroller for kNode, all on loopback.
testing::DevApiServerProcess::Options ApiOptions() {
  testing::DevApiServerProcess::Options options;
  options.devapiserver = kServerBin;
  options.kubectl = kKubectl;
  options.source_dir = kSourceDir;
  options.temp_prefix = "staged-jobs-";
  return options;
}

class Cluster {
 public:
  Cluster() : api_(ApiOptions()), gm_port_(FreePort()), lc_port_(FreePort()) {
    Kubectl({"apply", "-f", kSourceDir + "/deploy/crds/"});
    gm_config_ = *dir().Write("gm.yaml",
                             "leaderElection: {leaseDuration: 3s, renewDeadline: 2s, "
                             "retryPeriod: 500ms}\n");
    std::filesystem::create_directories(root());
  }

  ~Cluster() {
    DumpOnFailure("localcontroller", lc_.get(), kStderrTail);
    DumpOnFailure("globalmanager", gm_.get(), kStderrTail);
  }

  const TempDir& dir() const { return api_.dir(); }
  std::string kubeconfig() const { return api_.kubeconfig(); }
  std::string root() const { return dir().File("root"); }
  std::string HostFile(const std::string& path) const { return root() + path; }
  // The job the helpers below look at: its lower-case kind and name.
  void Watch(const std::string& kind, const std::string& name) {
    kind_ = kind;
    job_ = name;
  }

  std::string Kubectl(const std::vector<std::string>& args, std::string_view stdin_data = "") {
    return api_.KubectlOk(args, stdin_data);
  }

  Json GetJson(const std::vector<std::string>& what) {
    std::vector<std::string> args = {"get"};
    args.insert(args.end(), what.begin(), what.end());
    args.insert(args.end(), {"-o", "json"});
    return Json::parse(Kubectl(args), nullptr, false);
  }

  Json JobStatus() {
    Json job = GetJson({kind_, job_});
    if (!job.is_object()) return Json::object();
    return job.value("status", Json::object());
  }

  // "Type(Stage)" of the job's latest condition, "" while none.
  std::string Latest() {
    Json status = JobStatus();
    const Json conditions = status.value("conditions", Json::array());
    if (conditions.empty()) return "";
    const Json& c = conditions.back();
    return absl::StrCat(c.value("type", ""), "(", c.value("stage", ""), ")");
  }

  bool WaitLatest(const std::string& want, absl::Duration timeout = absl::Seconds(20)) {
    std::string last;
    const bool ok = testing::WaitFor([&] { return (last = Latest()) == want; }, timeout, kPoll);
    if (!ok) UNSCOPED_INFO("latest condition " << last << ", want " << want);
    return ok;
  }

  // The job's pods whose worker type label is `type` (train, eval, inference), not being deleted.
  std::vector<Json> Pods(const std::string& type) {
    Json list = GetJson({"pods", "-l", absl::StrCat(kind_, ".sedna.io/worker-type=", type)});
    std::vector<Json> out;
    if (!list.is_object()) return out;
    for (Json& pod : list["items"]) {
      if (pod["metadata"].contains("deletionTimestamp")) continue;
      out.push_back(std::move(pod));
    }
    return out;
  }

  std::optional<Json> WaitPod(const std::string& type) {
    std::optional<Json> found;
    testing::WaitFor(
        [&] {
          std::vector<Json> pods = Pods(type);
          if (pods.size() != 1) return false;
          found = pods[0];
          return true;
        },
        absl::Seconds(20), kPoll);
    return found;
  }

  void PodPhase(const std::string& pod, const std::string& phase) {
    Kubectl({"patch", "pod", pod, "--subresource", "status", "--type", "merge", "-p",
             Json{{"status", {{"phase", phase}}}}.dump()});
  }

  bool HasEvent(const std::string& reason) {
    Json list = GetJson({"events"});
    if (!list.is_object()) return false;
    for (const Json& e : list["items"]) {
      if (e["involvedObject"].value("name", "") == job_ && e.value("reason", "") == reason) {
        return true;
      }
    }
    return false;
  }

  void StartGm() {
    const testing::CertSet& certs = testing::TestCerts();
    Subprocess::Options options;
    options.argv = {kGmBin,       "--kubeconfig",      kubeconfig(),
                    "--listen",   absl::StrCat("127.0.0.1:", gm_port_),
                    "--http-listen", "127.0.0.1:0",   "--tls-ca",
                    certs.ca,     "--tls-cert",        certs.gm_cert,
                    "--tls-key",  certs.gm_key,        "--lease-namespace",
                    "default",    "--id",              "gm-staged",
                    "--config",   gm_config_,
                    // Workers reach the LC at LC_SERVER, as they would on a real node.
                    "--lc-server", absl::StrCat("http://127.0.0.1:", lc_port_)};
    options.capture_stderr = true;
    auto started = Subprocess::Start(std::move(options));
    REQUIRE(started.ok());
    gm_ = *std::move(started);
    auto line = gm_->ReadLine(absl::Seconds(20));
    INFO(line.status().ToString() << "\nGM stderr:\n" << gm_->Stderr());
    REQUIRE(line.ok());
    // "globalmanager: edge hub on port N, http on port M"
    std::vector<std::string> words = absl::StrSplit(*line, ' ');
    REQUIRE(words.size() == 10);
    REQUIRE(absl::SimpleAtoi(words[9], &gm_http_port_));
    REQUIRE(testing::WaitFor([&] { return HttpGet(gm_http_port_, "/readyz").status == 200; },
                             absl::Seconds(20), kPoll));
  }

  void StartLc() {
    const testing::CertSet& certs = testing::TestCerts();
    Subprocess::Options options;
    options.argv = {kLcBin,         "--node",        kNode,
                    "--gm",         absl::StrCat("127.0.0.1:", gm_port_),
                    "--db",         dir().File("lc.db"),
                    "--host-root",  root(),          "--listen",
                    absl::StrCat("127.0.0.1:", lc_port_),  "--tls-ca",      certs.ca,
                    "--tls-cert",   certs.NodeCert(kNode),
                    "--tls-key",    certs.NodeKey(kNode),
                    "--scan-period", "1s"};
    options.capture_stderr = true;
    auto started = Subprocess::Start(std::move(options));
    REQUIRE(started.ok());
    lc_ = *std::move(started);
    auto line = lc_->ReadLine(absl::Seconds(20));
    INFO(line.status().ToString() << "\nLC stderr:\n" << lc_->Stderr());
    REQUIRE(line.ok());
    const std::string url = testing::ListenUrl(*line);
    REQUIRE_FALSE(url.empty());
    int port = 0;
    REQUIRE(absl::SimpleAtoi(url.substr(url.rfind(':') + 1), &port));
    REQUIRE(port == lc_port_);
    REQUIRE(testing::WaitFor(
        [&] {
          HttpReply r = HttpGet(lc_port_, "/api/v1/status");
          if (r.status != 200) return false;
          Json s = Json::parse(r.body, nullptr, false);
          return s.is_object() && s["cloudLink"].value("synced", false);
        },
        absl::Seconds(20), kPoll));
  }

  void Stop() {
    if (lc_ != nullptr) {
      auto code = lc_->Stop(absl::Seconds(10));
      REQUIRE(code.ok());
      CHECK(*code == 0);
      lc_.reset();
    }
    if (gm_ != nullptr) {
      auto code = gm_->Stop(absl::Seconds(15));
      REQUIRE(code.ok());
      CHECK(*code == 0);
      gm_.reset();
    }
  }

  std::string LcStderr() const { return lc_ == nullptr ? "" : lc_->Stderr(); }

 private:
  testing::DevApiServerProcess api_;
  const int gm_port_;
  int gm_http_port_ = 0;
  const int lc_port_;
  std::string kind_ = "incrementallearningjob";
  std::string job_ = kJob;
  std::string gm_config_;
  std::unique_ptr<Subprocess> gm_;
  std::unique_ptr<Subprocess> lc_;
};

// examples/incremental-learning-job.yaml with this test's node, a 1 s train trigger check and a
// 1 s deploy trigger check.
std::string IlJobYaml() {
  std::string yaml = ReadFile(kSourceDir + "/examples/incremental-learning-job.yaml");
  REQUIRE_FALSE(yaml.empty());
  auto replace_all = [&](const std::string& from, const std::string& to) {
    int n = 0;
    for (size_t at = yaml.find(from); at != std::string::npos; at = yaml.find(from, at + to.size())) {
      yaml.replace(at, from.size(), to);
      ++n;
    }
    return n;
  };
  REQUIRE(replace_all("nodeName: \"edge-0\"", absl::StrCat("nodeName: \"", kNode, "\"")) == 3);
  REQUIRE(replace_all("checkPeriodSeconds: 60", "checkPeriodSeconds: 1") == 1);
  REQUIRE(replace_all("pollPeriodSeconds: 60", "pollPeriodSeconds: 1") == 1);
  return yaml;
}

TEST_CASE("an IncrementalLearningJob's round with devapiserver + GM + LC over mTLS",
          "[integration][staged]") {
  Cluster cluster;
  const std::string dataset_file = cluster.HostFile("/data/helmet_detection/train_data/train_data.txt");
  std::filesystem::create_directories(std::filesystem::path(dataset_file).parent_path());
  AppendLines(dataset_file, 1, 3);
  for (const char* model : {"/data/models/helmet_detection/initial/model.pb",
                            "/data/models/helmet_detection/deploy/model.pb"}) {
    std::filesystem::create_directories(std::filesystem::path(cluster.HostFile(model)).parent_path());
    std::ofstream(cluster.HostFile(model)) << "model\n";
  }

  cluster.StartGm();
  cluster.StartLc();

  // The Dataset on this node, the two Models, then the job.
  {
    std::string dataset = ReadFile(kSourceDir + "/examples/dataset.yaml");
    dataset = dataset.substr(0, dataset.find("\n---"));  // helmet-detection-dataset
    const size_t at = dataset.find("nodeName: \"edge-0\"");
    REQUIRE(at != std::string::npos);
    dataset.replace(at, std::string("nodeName: \"edge-0\"").size(),
                    absl::StrCat("nodeName: \"", kNode, "\""));
    cluster.Kubectl({"apply", "-f", "-"}, dataset);
  }
  cluster.Kubectl({"apply", "-f", kSourceDir + "/examples/model.yaml"});
  REQUIRE(testing::WaitFor(
      [&] {
        Json d = cluster.GetJson({"dataset", "helmet-detection-dataset"});
        return d.is_object() && d.value("status", Json::object()).value("numberOfSamples", -1) == 3;
      },
      absl::Seconds(20), kPoll));
  cluster.Kubectl({"apply", "-f", "-"}, IlJobYaml());

  // The job starts waiting for its train trigger (3 samples: not more than 5); the inference worker
  // runs the deploy model from the start, with hot update.
  REQUIRE(cluster.WaitLatest("Waiting(Train)"));
  std::optional<Json> inference = cluster.WaitPod("inference");
  REQUIRE(inference.has_value());
  CHECK(EnvOf(*inference, "MODEL_HOT_UPDATE") == "true");
  CHECK(cluster.Pods("train").empty());

  // The dataset grows past the threshold: the LC's trigger fires, the round's samples are written
  // under its host root, and the GM creates the train pod.
  AppendLines(dataset_file, 4, 12);
  std::optional<Json> train = cluster.WaitPod("train");
  REQUIRE(train.has_value());
  {
    const Json& pod = *train;
    INFO(pod.dump());
    CHECK(pod["metadata"]["name"] == std::string(kJob) + "-train-0");
    CHECK(LabelOf(pod, "incrementallearningjob.sedna.io/worker-type") == "train");
    CHECK(LabelOf(pod, "nereid.io/stage-run") == "1");
    CHECK(pod["spec"]["nodeName"] == kNode);
    REQUIRE(pod["metadata"]["ownerReferences"].size() == 1);
    CHECK(pod["metadata"]["ownerReferences"][0]["kind"] == "IncrementalLearningJob");
    CHECK(pod["metadata"]["ownerReferences"][0]["name"] == kJob);
    CHECK(pod["metadata"]["ownerReferences"][0]["controller"] == true);
    CHECK(EnvOf(pod, "JOB_NAME") == kJob);
    CHECK(EnvOf(pod, "WORKER_NAME").rfind("trainworker-", 0) == 0);
    CHECK(EnvOf(pod, "BASE_MODEL_URL") == "/home/data/data/models/helmet_detection/initial/model.pb");
    CHECK(EnvOf(pod, "MODEL_URL") == "/home/data/data/output/helmet_detection/train/1");
    CHECK(EnvOf(pod, "TRAIN_DATASET_URL") ==
          "/home/data/data/output/helmet_detection/data/train/1/data.txt");
  }
  // The round's samples, under the LC's host root: all 12 (nothing consumed before), split by
  // trainProb 0.8 into 9 to train on and 3 to evaluate with.
  {
    const std::string train_samples =
        ReadFile(cluster.HostFile("/data/output/helmet_detection/data/train/1/data.txt"));
    CHECK(std::count(train_samples.begin(), train_samples.end(), '\n') == 9);
    const std::string eval_samples =
        ReadFile(cluster.HostFile("/data/output/helmet_detection/data/eval/1/data.txt"));
    CHECK(std::count(eval_samples.begin(), eval_samples.end(), '\n') == 3);
  }
  const std::string train_pod = (*train)["metadata"]["name"];
  cluster.PodPhase(train_pod, "Running");
  REQUIRE(cluster.WaitLatest("Running(Train)"));

  // The train worker reports its model through the LC, then exits.
  {
    const testing::SdkWorker worker(*train, testing::SdkClass::kIncrementalLearning);
    HttpReply r = worker.Post(worker.TaskReport(
        "train", "completed",
        Json::array({{{"format", "pb"},
                      {"url", "/data/output/helmet_detection/train/1/model.pb"}}})));
    INFO(r.body);
    REQUIRE(r.status == 200);
  }
  REQUIRE(testing::WaitFor(
      [&] {
        return cluster.JobStatus().value("lastTrainedModel", "") ==
               "/data/output/helmet_detection/train/1/model.pb";
      },
      absl::Seconds(20), kPoll));
  cluster.PodPhase(train_pod, "Succeeded");

  // Eval follows: the LC prepares it, the GM runs the eval pod with the models to compare.
  std::optional<Json> eval = cluster.WaitPod("eval");
  REQUIRE(eval.has_value());
  CHECK((*eval)["metadata"]["name"] == std::string(kJob) + "-eval-0");
  CHECK(EnvOf(*eval, "MODEL_URLS").find("/data/output/helmet_detection/train/1/model.pb") !=
        std::string::npos);
  CHECK(cluster.JobStatus()["rounds"] == 1);
  // The train pod is deleted once its stage is over.
  REQUIRE(testing::WaitFor([&] { return cluster.Pods("train").empty(); }, absl::Seconds(20), kPoll));

  const std::string eval_pod = (*eval)["metadata"]["name"];
  cluster.PodPhase(eval_pod, "Running");
  REQUIRE(cluster.WaitLatest("Running(Eval)"));
  {
    const testing::SdkWorker worker(*eval, testing::SdkClass::kIncrementalLearning);
    Json metrics = Json::array(
        {{{"format", "pb"},
          {"url", "/data/output/helmet_detection/train/1/model.pb"},
          {"metrics", {{"precision", {0.9}}}}},
         {{"format", "pb"},
          {"url", "/data/models/helmet_detection/deploy/model.pb"},
          {"metrics", {{"precision", {0.8}}}}}});
    HttpReply r = worker.Post(worker.TaskReport("eval", "completed", metrics));
    INFO(r.body);
    REQUIRE(r.status == 200);
  }
  // Wait until the output is recorded on the Eval condition, then the pod exits.
  REQUIRE(testing::WaitFor(
      [&] {
        Json status = cluster.JobStatus();
        for (const Json& c : status.value("conditions", Json::array())) {
          if (c.value("stage", "") == "Eval" &&
              c.value("data", "").find("precision") != std::string::npos) {
            return true;
          }
        }
        return false;
      },
      absl::Seconds(20), kPoll));
  cluster.PodPhase(eval_pod, "Succeeded");

  // Deploy: the trigger fires (precision_delta 0.1 > 0.01), the LC writes the hot-update file
  // under its host root, the inference worker reloads in place; the job waits for round 2.
  const std::string hot_update = cluster.HostFile(absl::StrCat(
      "/var/lib/sedna/model-hot-update/default/incrementallearningjob/", kJob,
      "/model_config.json"));
  REQUIRE(testing::WaitFor([&] { return std::filesystem::exists(hot_update); }, absl::Seconds(20),
                           kPoll));
  {
    Json config = Json::parse(ReadFile(hot_update), nullptr, false);
    INFO(ReadFile(hot_update));
    REQUIRE(config.is_object());
    CHECK(config["model_config"]["model_path"] == "/data/output/helmet_detection/train/1/model.pb");
    CHECK(config["model_config"]["model_update_time"].is_string());
  }
  REQUIRE(cluster.WaitLatest("Waiting(Train)"));
  {
    Json status = cluster.JobStatus();
    INFO(status.dump());
    CHECK(status["rounds"] == 1);
    std::vector<std::string> seen;
    for (const Json& c : status.value("conditions", Json::array())) {
      seen.push_back(absl::StrCat(c.value("type", ""), "(", c.value("stage", ""), ")"));
    }
    const std::vector<std::string> tail = {"Ready(Deploy)", "Starting(Deploy)",
                                           "Completed(Deploy)", "Waiting(Train)"};
    REQUIRE(seen.size() >= tail.size());
    CHECK(std::vector<std::string>(seen.end() - tail.size(), seen.end()) == tail);
  }
  CHECK(testing::WaitFor([&] { return cluster.Pods("eval").empty(); }, absl::Seconds(20), kPoll));
  // The GM holds an Event for its coalescing window (3 s) before it sends it.
  CHECK(testing::WaitFor([&] { return cluster.HasEvent("DeployCompleted"); }, absl::Seconds(20),
                         kPoll));
  CHECK(testing::WaitFor([&] { return cluster.HasEvent("TrainReady"); }, absl::Seconds(20),
                         kPoll));
  // Hot update: the same inference worker keeps running.
  {
    std::vector<Json> now = cluster.Pods("inference");
    REQUIRE(now.size() == 1);
    CHECK(now[0]["metadata"]["name"] == (*inference)["metadata"]["name"]);
  }

  // The job deleted: its pods are garbage-collected.
  cluster.Kubectl({"delete", "incrementallearningjob", kJob});
  Json left;
  const bool collected = testing::WaitFor(
      [&] {
        left = cluster.GetJson({"pods"});
        return left.is_object() && left["items"].empty();
      },
      absl::Seconds(20), kPoll);
  INFO("pods left: " << left.dump());
  REQUIRE(collected);

  cluster.Stop();
}

// examples/lifelong-learning-job.yaml with this test's node and a 1 s train trigger check.
std::string LlJobYaml() {
  std::string yaml = ReadFile(kSourceDir + "/examples/lifelong-learning-job.yaml");
  REQUIRE_FALSE(yaml.empty());
  auto replace_all = [&](const std::string& from, const std::string& to) {
    int n = 0;
    for (size_t at = yaml.find(from); at != std::string::npos; at = yaml.find(from, at + to.size())) {
      yaml.replace(at, from.size(), to);
      ++n;
    }
    return n;
  };
  REQUIRE(replace_all("nodeName: \"edge-1\"", absl::StrCat("nodeName: \"", kNode, "\"")) == 3);
  REQUIRE(replace_all("checkPeriodSeconds: 60", "checkPeriodSeconds: 1") == 1);
  return yaml;
}

TEST_CASE("a LifelongLearningJob's round with devapiserver + GM + LC over mTLS",
          "[integration][staged]") {
  Cluster cluster;
  cluster.Watch("lifelonglearningjob", kLlJob);
  const std::string dataset_file = cluster.HostFile("/data/atcii/trainData.csv");
  std::filesystem::create_directories(std::filesystem::path(dataset_file).parent_path());
  {
    std::ofstream out(dataset_file);
    out << "temperature,humidity,comfort\n";
    for (int i = 1; i <= 3; ++i) out << 20 + i << ",50," << i % 3 << "\n";
  }

  cluster.StartGm();
  cluster.StartLc();
  cluster.Kubectl({"apply", "-f", "-"},
                  absl::StrCat("apiVersion: sedna.io/v1alpha1\nkind: Dataset\nmetadata:\n"
                               "  name: atcii-dataset\nspec:\n  url: \"/data/atcii/trainData.csv\"\n"
                               "  format: \"csv\"\n  nodeName: \"",
                               kNode, "\"\n"));
  REQUIRE(testing::WaitFor(
      [&] {
        Json d = cluster.GetJson({"dataset", "atcii-dataset"});
        return d.is_object() && d.value("status", Json::object()).value("numberOfSamples", -1) >= 3;
      },
      absl::Seconds(20), kPoll));
  cluster.Kubectl({"apply", "-f", "-"}, LlJobYaml());

  // Waiting for its train trigger; no inference worker before the first deploy.
  REQUIRE(cluster.WaitLatest("Waiting(Train)"));
  CHECK(cluster.Pods("inference").empty());
  CHECK(cluster.Pods("train").empty());

  // The dataset grows: train.
  {
    std::ofstream out(dataset_file, std::ios::app);
    for (int i = 4; i <= 14; ++i) out << 20 + i << ",50," << i % 3 << "\n";
  }
  std::optional<Json> train = cluster.WaitPod("train");
  REQUIRE(train.has_value());
  {
    const Json& pod = *train;
    INFO(pod.dump());
    CHECK(pod["metadata"]["name"] == std::string(kLlJob) + "-train-0");
    CHECK(LabelOf(pod, "lifelonglearningjob.sedna.io/worker-type") == "train");
    CHECK(pod["spec"]["nodeName"] == kNode);
    REQUIRE(pod["metadata"]["ownerReferences"].size() == 1);
    CHECK(pod["metadata"]["ownerReferences"][0]["kind"] == "LifelongLearningJob");
    CHECK(EnvOf(pod, "JOB_NAME") == kLlJob);
    CHECK(EnvOf(pod, "TRAIN_DATASET_URL") == "/home/data/data/output/atcii/data/train/1/data.txt");
  }
  CHECK(std::filesystem::exists(cluster.HostFile("/data/output/atcii/data/train/1/data.txt")));
  const std::string train_pod = (*train)["metadata"]["name"];
  cluster.PodPhase(train_pod, "Running");
  REQUIRE(cluster.WaitLatest("Running(Train)"));
  // The train worker writes its knowledge base and reports it.
  const std::string trained = "/data/output/atcii/train/1/index.pkl";
  std::filesystem::create_directories(std::filesystem::path(cluster.HostFile(trained)).parent_path());
  std::ofstream(cluster.HostFile(trained)) << "knowledge base, round 1\n";
  {
    const testing::SdkWorker worker(*train, testing::SdkClass::kLifelongLearning);
    HttpReply r = worker.Post(
        worker.TaskReport("train", "completed", Json::array({{{"format", "pkl"}, {"url", trained}}})));
    INFO(r.body);
    REQUIRE(r.status == 200);
  }
  REQUIRE(testing::WaitFor(
      [&] { return cluster.JobStatus().value("lastTrainedModel", "") == trained; },
      absl::Seconds(20), kPoll));
  cluster.PodPhase(train_pod, "Succeeded");

  // Eval.
  std::optional<Json> eval = cluster.WaitPod("eval");
  REQUIRE(eval.has_value());
  CHECK((*eval)["metadata"]["name"] == std::string(kLlJob) + "-eval-0");
  CHECK(EnvOf(*eval, "MODEL_URLS").find(trained) != std::string::npos);
  const std::string eval_pod = (*eval)["metadata"]["name"];
  cluster.PodPhase(eval_pod, "Running");
  REQUIRE(cluster.WaitLatest("Running(Eval)"));
  {
    const testing::SdkWorker worker(*eval, testing::SdkClass::kLifelongLearning);
    Json evaluated = Json::array(
        {{{"format", "pkl"}, {"url", trained}, {"metrics", {{"precision_score", {0.8}}}}}});
    HttpReply r = worker.Post(worker.TaskReport("eval", "completed", evaluated));
    INFO(r.body);
    REQUIRE(r.status == 200);
  }
  REQUIRE(testing::WaitFor(
      [&] {
        for (const Json& c : cluster.JobStatus().value("conditions", Json::array())) {
          if (c.value("stage", "") == "Eval" &&
              c.value("data", "").find("precision_score") != std::string::npos) {
            return true;
          }
        }
        return false;
      },
      absl::Seconds(20), kPoll));
  cluster.PodPhase(eval_pod, "Succeeded");

  // Deploy (LL always deploys): the LC copies the knowledge base to <outputDir>/deploy/index.pkl
  // under its host root, the GM starts the inference worker on it; once it runs, the deploy is
  // complete and the job waits for round 2.
  const std::string deployed = cluster.HostFile("/data/output/atcii/deploy/index.pkl");
  REQUIRE(testing::WaitFor([&] { return std::filesystem::exists(deployed); }, absl::Seconds(20),
                           kPoll));
  CHECK(ReadFile(deployed) == "knowledge base, round 1\n");
  std::optional<Json> inference = cluster.WaitPod("inference");
  REQUIRE(inference.has_value());
  CHECK(EnvOf(*inference, "MODEL_URLS") == "/home/data/data/output/atcii/deploy/index.pkl");
  REQUIRE(cluster.WaitLatest("Running(Deploy)"));
  cluster.PodPhase((*inference)["metadata"]["name"], "Running");
  REQUIRE(cluster.WaitLatest("Waiting(Train)"));
  {
    Json status = cluster.JobStatus();
    INFO(status.dump());
    CHECK(status["rounds"] == 1);
    std::vector<std::string> seen;
    for (const Json& c : status.value("conditions", Json::array())) {
      seen.push_back(absl::StrCat(c.value("type", ""), "(", c.value("stage", ""), ")"));
    }
    const std::vector<std::string> tail = {"Ready(Deploy)", "Starting(Deploy)", "Running(Deploy)",
                                           "Completed(Deploy)", "Waiting(Train)"};
    REQUIRE(seen.size() >= tail.size());
    CHECK(std::vector<std::string>(seen.end() - tail.size(), seen.end()) == tail);
  }
  CHECK(testing::WaitFor([&] { return cluster.HasEvent("DeployCompleted"); }, absl::Seconds(20),
                         kPoll));

  // The job deleted: its pods are garbage-collected.
  cluster.Kubectl({"delete", "lifelonglearningjob", kLlJob});
  Json left;
  const bool collected = testing::WaitFor(
      [&] {
        left = cluster.GetJson({"pods"});
        return left.is_object() && left["items"].empty();
      },
      absl::Seconds(20), kPoll);
  INFO("pods left: " << left.dump());
  REQUIRE(collected);

  cluster.Stop();
}

}  // namespace
}  // namespace nereid
