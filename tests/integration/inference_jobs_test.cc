// Integration: Sedna's multi-edge inference jobs with real processes on loopback — devapiserver,
// the `globalmanager` binary and a `localcontroller` binary for the job's node (mTLS), driven by
// kubectl, pod phases written through the pods' status subresource as a kubelet would
// (scripts/demo-kubelet.sh does the same for the quickstart):
//   VideoAnalyticsJob (examples/video-analytics-job.yaml, node adapted): waits for its Model
//   (SpecValid/ModelNotFound), then gets its pod and Service 4000 with Sedna's names, labels and env;
//   `kubectl get va` shows it Pending, Running, Succeeded; a worker's report through the LC's REST
//   lands in status.metrics; deleting the job collects its children.
//   FeatureExtractionService (examples/feature-extraction-service.yaml, node adapted): a worker's
//   report through the LC's REST lands in status.metrics.
//   ObjectSearchService, ObjectTrackingService (their examples, node adapted): the GM binary
//   creates their reid Deployments and tracking pods; `kubectl get objs,objt` shows Pending.
//   ReidJob (examples/reid-job.yaml adapted, backoffLimit 0): pod and the Service 5000 Sedna
//   forgets; a worker's report through the LC is accepted and writes no status; a failed pod fails
//   the job with BackoffLimitExceeded; restartPolicy Always is refused.

#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "tests/integration/edge_cluster.h"
#include "tests/integration/loopback_helpers.h"

namespace nereid {
namespace {

using Json = nlohmann::json;
using testing::EdgeCluster;
using testing::HttpPost;
using testing::HttpReply;
using testing::kEdgePoll;

const std::string kServerBin = NEREID_DEVAPISERVER_BIN;
const std::string kGmBin = NEREID_GM_BIN;
const std::string kLcBin = NEREID_LC_BIN;
const std::string kKubectl = NEREID_KUBECTL;
const std::string kSourceDir = NEREID_SOURCE_DIR;
constexpr char kNode[] = "edge-a";

// An example manifest with this test's node.
std::string Example(const std::string& file) {
  std::ifstream in(kSourceDir + "/examples/" + file);
  std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = yaml.find("nodeName: edge-0");
  REQUIRE(at != std::string::npos);
  yaml.replace(at, std::string("nodeName: edge-0").size(), absl::StrCat("nodeName: ", kNode));
  return yaml;
}

class Jobs {
 public:
  explicit Jobs(EdgeCluster* cluster) : cluster_(cluster) {}

  Json Get(const std::vector<std::string>& what) {
    std::vector<std::string> args = {"get"};
    args.insert(args.end(), what.begin(), what.end());
    args.insert(args.end(), {"-o", "json"});
    return Json::parse(cluster_->Kubectl(args), nullptr, false);
  }
  Json Status(const std::string& kind, const std::string& name) {
    Json job = Get({kind, name});
    return job.is_object() ? job.value("status", Json::object()) : Json::object();
  }
  // The latest condition's "Type/Reason", "" while none.
  std::string Latest(const std::string& kind, const std::string& name) {
    Json conditions = Status(kind, name).value("conditions", Json::array());
    if (conditions.empty()) return "";
    return absl::StrCat(conditions.back().value("type", ""), "/",
                        conditions.back().value("reason", ""));
  }
  bool WaitLatest(const std::string& kind, const std::string& name, const std::string& want) {
    std::string last;
    bool ok = testing::WaitFor([&] { return (last = Latest(kind, name)) == want; },
                               absl::Seconds(30), kEdgePoll);
    if (!ok) UNSCOPED_INFO(kind << " " << name << ": latest " << last << ", want " << want);
    return ok;
  }
  // The cells of `name`'s row in `kubectl get <kind>`.
  std::vector<std::string> Row(const std::string& kind, const std::string& name) {
    for (absl::string_view line : absl::StrSplit(cluster_->Kubectl({"get", kind}), '\n')) {
      std::vector<std::string> cells = absl::StrSplit(line, ' ', absl::SkipEmpty());
      if (!cells.empty() && cells[0] == name) return cells;
    }
    return {};
  }
  bool WaitPhase(const std::string& kind, const std::string& name, const std::string& phase) {
    std::vector<std::string> last;
    bool ok = testing::WaitFor(
        [&] {
          last = Row(kind, name);
          return last.size() >= 2 && last[1] == phase;
        },
        absl::Seconds(30), kEdgePoll);
    if (!ok) UNSCOPED_INFO(kind << " " << name << ": row " << absl::StrJoin(last, " "));
    return ok;
  }
  std::vector<Json> Children(const std::string& resource, const std::string& label) {
    Json list = Get({resource, "-l", label});
    std::vector<Json> out;
    if (!list.is_object()) return out;
    for (Json& item : list["items"]) {
      if (!item["metadata"].contains("deletionTimestamp")) out.push_back(std::move(item));
    }
    return out;
  }
  void PodPhase(const std::string& pod, const std::string& phase) {
    cluster_->Kubectl({"patch", "pod", pod, "--subresource", "status", "--type", "merge", "-p",
                       Json{{"status", {{"phase", phase}}}}.dump()});
  }

 private:
  EdgeCluster* const cluster_;
};

std::string EnvOf(const Json& pod, const std::string& name) {
  for (const Json& e : pod["spec"]["containers"][0].value("env", Json::array())) {
    if (e.value("name", "") == name) return e.value("value", "");
  }
  return "<unset>";
}

// The body a Sedna worker POSTs to its LC's /sedna/workers/<name>/info.
std::string WorkerReportBody(const std::string& worker, const std::string& owner,
                             const std::string& owner_kind, const Json& owner_info) {
  return Json{{"name", worker},
              {"namespace", "default"},
              {"ownerName", owner},
              {"ownerKind", owner_kind},
              {"kind", "inference"},
              {"status", "running"},
              {"ownerInfo", owner_info},
              {"results", Json::array()}}
      .dump();
}

TEST_CASE("VideoAnalyticsJob and ReidJob lifecycles with devapiserver + GM + LC over mTLS",
          "[integration][inference-jobs]") {
  EdgeCluster cluster({kServerBin, kGmBin, kLcBin, kKubectl, kSourceDir}, "inference-jobs-");
  cluster.StartGm();
  testing::Lc lc = cluster.StartNodeLc(kNode);
  REQUIRE(testing::WaitFor([&] { return lc.Synced(); }, absl::Seconds(20), kEdgePoll));
  Jobs jobs(&cluster);

  SECTION("VideoAnalyticsJob") {
    // The Model is not there yet: the job waits with a reason, and nothing is created.
    cluster.Kubectl({"apply", "-f", "-"}, Example("video-analytics-job.yaml"));
    REQUIRE(jobs.WaitLatest("va", "video-analytics", "SpecValid/ModelNotFound"));
    CHECK(jobs.Row("va", "video-analytics").at(1) == "Pending");
    const std::string selector = "videoanalyticsjob.sedna.io/name=video-analytics";
    CHECK(jobs.Children("pods", selector).empty());

    cluster.Kubectl({"apply", "-f", kSourceDir + "/examples/model.yaml"});
    std::vector<Json> pods;
    REQUIRE(testing::WaitFor([&] { return (pods = jobs.Children("pods", selector)).size() == 1; },
                             absl::Seconds(30), kEdgePoll));
    const Json& pod = pods[0];
    CHECK(pod["metadata"]["name"] == "video-analytics-videoanalytics-0");
    CHECK(pod["metadata"]["labels"]["videoanalyticsjob.sedna.io/worker-type"] == "videoanalytics");
    CHECK(pod["spec"]["nodeName"] == kNode);
    CHECK(pod["spec"]["restartPolicy"] == "Never");
    CHECK(EnvOf(pod, "JOB_NAME") == "video-analytics");
    CHECK(EnvOf(pod, "MODEL_NAME") == "pedestrian-detection-model");
    CHECK(EnvOf(pod, "MODEL_URL") == "/home/data/data/ai_models/object_detection/pedestrians/yolox.pth");
    CHECK(EnvOf(pod, "LC_SERVER") != "<unset>");
    std::vector<Json> services;
    REQUIRE(testing::WaitFor(
        [&] {
          services = jobs.Children("services", selector);
          for (const Json& s : services) {
            if (s["metadata"]["name"] == "video-analytics-videoanalytics") return true;
          }
          return false;
        },
        absl::Seconds(30), kEdgePoll));
    for (const Json& s : services) {
      if (s["metadata"]["name"] != "video-analytics-videoanalytics") continue;
      CHECK(s["spec"]["ports"][0]["port"] == 4000);
      CHECK(s["spec"]["ports"][0]["name"] == "tcp-0");
    }
    REQUIRE(jobs.WaitLatest("va", "video-analytics", "Starting/JobCreated"));

    const std::string pod_name = pod["metadata"]["name"];
    jobs.PodPhase(pod_name, "Running");
    REQUIRE(jobs.WaitPhase("va", "video-analytics", "Running"));
    std::vector<std::string> row = jobs.Row("va", "video-analytics");
    REQUIRE(row.size() == 6);  // NAME PHASE ACTIVE SUCCEEDED FAILED AGE
    CHECK(row[2] == "1");

    // The worker reports through its node's LC; the GM writes status.metrics.
    const std::string report = WorkerReportBody(EnvOf(pod, "WORKER_NAME"), "video-analytics",
                                                "videoanalyticsjob",
                                                {{"fps", 5}, {"pedestrians", 12}});
    HttpReply posted = HttpPost(lc.port, absl::StrCat("/sedna/workers/", EnvOf(pod, "WORKER_NAME"),
                                                      "/info"),
                                report);
    REQUIRE(posted.status == 200);
    REQUIRE(testing::WaitFor(
        [&] {
          return jobs.Status("va", "video-analytics").value("metrics", Json::array()) ==
                 Json::parse(R"([{"key":"fps","value":"5"},{"key":"pedestrians","value":"12"}])");
        },
        absl::Seconds(30), kEdgePoll));

    jobs.PodPhase(pod_name, "Succeeded");
    REQUIRE(jobs.WaitPhase("va", "video-analytics", "Succeeded"));
    CHECK(jobs.Latest("va", "video-analytics") == "Completed/JobSucceeded");
    CHECK(jobs.Status("va", "video-analytics").contains("completionTime"));

    cluster.Kubectl({"delete", "va", "video-analytics"});
    REQUIRE(testing::WaitFor([&] { return jobs.Children("pods", selector).empty(); },
                             absl::Seconds(30), kEdgePoll));
  }

  SECTION("FeatureExtractionService worker report through the LC") {
    cluster.Kubectl({"apply", "-f", kSourceDir + "/examples/model.yaml"});
    cluster.Kubectl({"apply", "-f", "-"}, Example("feature-extraction-service.yaml"));
    const std::string selector = "featureextractionservice.sedna.io/name=feature-extraction";
    REQUIRE(testing::WaitFor([&] { return jobs.Children("deployments", selector).size() == 1; },
                             absl::Seconds(30), kEdgePoll));
    // The GM accepts the report once it has announced the worker to this node; until then it
    // rejects it, so the worker's latest report is posted again on every poll (as a worker
    // reports periodically).
    const std::string worker = "fe-worker-test";
    const std::string report = WorkerReportBody(worker, "feature-extraction",
                                                "featureextractionservice", {{"features", 7}});
    const std::string path = absl::StrCat("/sedna/workers/", worker, "/info");
    REQUIRE(testing::WaitFor(
        [&] {
          if (HttpPost(lc.port, path, report).status != 200) return false;
          return jobs.Status("fe", "feature-extraction").value("metrics", Json::array()) ==
                 Json::parse(R"([{"key":"features","value":"7"}])");
        },
        absl::Seconds(30), kEdgePoll));
  }

  SECTION("ObjectSearchService and ObjectTrackingService with the GM binary") {
    // Their lifecycles are covered in depth by multi_edge_integration_test (controllers
    // in-process); here the daemon's registry runs them: children with Sedna's names, Pending
    // until the Deployments are available.
    cluster.Kubectl({"apply", "-f", "-"}, Example("object-search-service.yaml"));
    cluster.Kubectl({"apply", "-f", "-"}, Example("object-tracking-service.yaml"));
    for (const auto& service : std::vector<std::pair<std::string, std::string>>{
             {"objectsearchservice", "pedestrian-search"},
             {"objecttrackingservice", "pedestrian-tracking"}}) {
      const std::string& kind = service.first;  // not a structured binding: the lambda captures it
      const std::string& name = service.second;
      const std::string selector = absl::StrCat(kind, ".sedna.io/name=", name);
      REQUIRE(testing::WaitFor(
          [&] {
            for (const Json& d : jobs.Children("deployments", selector)) {
              if (d["metadata"]["name"] == name + "-deployment-reidworker") {
                return !jobs.Children("pods", selector).empty();
              }
            }
            return false;
          },
          absl::Seconds(30), kEdgePoll));
    }
    REQUIRE(jobs.WaitPhase("objs", "pedestrian-search", "Pending"));
    REQUIRE(jobs.WaitPhase("objt", "pedestrian-tracking", "Pending"));
  }

  SECTION("ReidJob") {
    std::string yaml = Example("reid-job.yaml");
    const size_t at = yaml.find("backoffLimit: 5");
    REQUIRE(at != std::string::npos);
    yaml.replace(at, std::string("backoffLimit: 5").size(), "backoffLimit: 0");
    cluster.Kubectl({"apply", "-f", "-"}, yaml);
    const std::string selector = "reidjob.sedna.io/name=reid";
    std::vector<Json> pods;
    REQUIRE(testing::WaitFor([&] { return (pods = jobs.Children("pods", selector)).size() == 1; },
                             absl::Seconds(30), kEdgePoll));
    CHECK(pods[0]["metadata"]["name"] == "reid-reid-0");
    REQUIRE(testing::WaitFor(
        [&] {
          for (const Json& s : jobs.Children("services", selector)) {
            if (s["metadata"]["name"] == "reid-reid") return s["spec"]["ports"][0]["port"] == 5000;
          }
          return false;
        },
        absl::Seconds(30), kEdgePoll));

    // The worker's report through the LC is accepted (reposted until the GM has announced the
    // job to this node) and writes nothing: ReidJob's status has no metrics.
    const std::string worker = EnvOf(pods[0], "WORKER_NAME");
    const std::string report = WorkerReportBody(worker, "reid", "reidjob", {{"persons", 3}});
    const std::string accepted = R"(nereid_gm_reports_total{kind="ReidJob",outcome="accepted"})";
    REQUIRE(testing::WaitFor(
        [&] {
          if (HttpPost(lc.port, absl::StrCat("/sedna/workers/", worker, "/info"), report).status !=
              200) {
            return false;
          }
          return testing::MetricValue(cluster.GmMetrics(), accepted) >= 1;
        },
        absl::Seconds(30), kEdgePoll));
    CHECK(testing::MetricValue(cluster.GmMetrics(),
                               R"(nereid_gm_reports_total{kind="ReidJob",outcome="rejected"})") <=
          0);
    CHECK_FALSE(jobs.Status("reid", "reid").contains("metrics"));

    jobs.PodPhase("reid-reid-0", "Failed");
    REQUIRE(jobs.WaitPhase("reid", "reid", "Failed"));
    CHECK(jobs.Latest("reid", "reid") == "Failed/BackoffLimitExceeded");
    CHECK(jobs.Row("reid", "reid").at(4) == "1");  // FAILED

    // restartPolicy Always can never finish: refused with the field named.
    std::string always = Example("reid-job.yaml");
    const size_t name_at = always.find("name: reid\n");
    REQUIRE(name_at != std::string::npos);
    always.replace(name_at, std::string("name: reid\n").size(), "name: reid-always\n");
    const size_t policy_at = always.find("restartPolicy: Never");
    REQUIRE(policy_at != std::string::npos);
    always.replace(policy_at, std::string("restartPolicy: Never").size(), "restartPolicy: Always");
    cluster.Kubectl({"apply", "-f", "-"}, always);
    REQUIRE(jobs.WaitLatest("reid", "reid-always", "SpecValid/InvalidSpec"));
    CHECK(jobs.Children("pods", "reidjob.sedna.io/name=reid-always").empty());
  }
}

}  // namespace
}  // namespace nereid
