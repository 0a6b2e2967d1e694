#include "bench/bench_setup.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/api/yaml_json.h"
#include "common/kube/resource.h"
#include "common/status/macros.h"
#include "common/version/version.h"
#include "httplib.h"

namespace nereid::bench {

std::optional<int> ReadFlags(config::OptionSet& options, int argc, char** argv,
                             const std::function<absl::Status()>& check) {
  absl::StatusOr<config::OptionSet::Loaded> loaded =
      options.Load(std::vector<std::string>(argv + 1, argv + argc), config::NoEnv());
  if (loaded.ok() && loaded->help) {
    std::cout << options.Help();
    return 0;
  }
  if (loaded.ok() && loaded->version) {
    std::cout << version::VersionLine(options.program()) << "\n";
    return 0;
  }
  const absl::Status status = loaded.ok() ? check() : loaded.status();
  if (!status.ok()) {
    std::cerr << options.program() << ": " << status.message() << "\n\n" << options.Help();
    return 2;
  }
  for (const std::string& warning : loaded->warnings) {
    std::cerr << options.program() << ": warning: " << warning << "\n";
  }
  return std::nullopt;
}

absl::StatusOr<DevApiServer> StartDevApiServer(const std::string& binary,
                                               const std::string& kubeconfig_out,
                                               const std::vector<std::string>& extra_args) {
  testing::Subprocess::Options options;
  options.argv = {binary, "--listen", "127.0.0.1:0", "--kubeconfig-out", kubeconfig_out,
                  "--log-level", "warning"};
  options.argv.insert(options.argv.end(), extra_args.begin(), extra_args.end());
  DevApiServer api;
  ASSIGN_OR_RETURN(api.process, testing::Subprocess::Start(std::move(options)));
  ASSIGN_OR_RETURN(std::string line, api.process->ReadLine(absl::Seconds(30)));
  const std::string url = testing::ListenUrl(line);
  if (url.empty() || std::sscanf(url.c_str(), "http://127.0.0.1:%d", &api.port) != 1) {
    return absl::InternalError(absl::StrCat("devapiserver printed '", line, "'"));
  }
  return api;
}

absl::StatusOr<GlobalManager> StartGlobalManager(testing::Subprocess::Options options,
                                                 GmReadiness wait) {
  GlobalManager gm;
  ASSIGN_OR_RETURN(gm.process, testing::Subprocess::Start(std::move(options)));
  ASSIGN_OR_RETURN(std::string line, gm.process->ReadLine(absl::Seconds(60)));
  if (std::sscanf(line.c_str(), "globalmanager: edge hub on port %d, http on port %d",
                  &gm.edge_port, &gm.http_port) != 2) {
    return absl::InternalError(
        absl::StrCat("globalmanager printed '", line, "'; stderr: ", gm.process->Stderr()));
  }
  httplib::Client http("127.0.0.1", gm.http_port);
  http.set_connection_timeout(2);
  if (!testing::WaitFor(
          [&] {
            httplib::Result ready = http.Get("/readyz");
            if (wait == GmReadiness::kReady) return ready && ready->status == 200;
            return ready && ready->status == 503 &&
                   ready->body.find("not the leader (leader: ") != std::string::npos &&
                   ready->body.find("leader: none") == std::string::npos;
          },
          absl::Seconds(60), absl::Milliseconds(50))) {
    return absl::DeadlineExceededError(
        absl::StrCat(wait == GmReadiness::kReady ? "the GM is not ready"
                                                 : "the standby GM knows no leader",
                     " after 60 s; its log:\n", gm.process->Stderr()));
  }
  return gm;
}

std::vector<std::string> GlobalManagerMtlsArgv(const std::string& binary,
                                               const std::string& kubeconfig,
                                               const std::string& certs_dir) {
  return {binary,        "--kubeconfig", kubeconfig,
          "--listen",    "127.0.0.1:0",  "--http-listen",
          "127.0.0.1:0", "--tls-ca",     certs_dir + "/ca.crt",
          "--tls-cert",  certs_dir + "/globalmanager.crt",
          "--tls-key",   certs_dir + "/globalmanager.key"};
}

kube::Json ModelObject(const std::string& name) {
  return {{"apiVersion", "sedna.io/v1alpha1"},
          {"kind", "Model"},
          {"metadata", {{"name", name}}},
          {"spec", {{"url", "/models/" + name + ".pb"}, {"format", "pb"}}}};
}

kube::Json JointInferenceServiceObject(const std::string& name, const std::string& edge_node,
                                       const std::string& edge_model,
                                       const std::string& cloud_model) {
  auto worker = [](const std::string& model, kube::Json pod_spec) {
    pod_spec["containers"] = kube::Json::array({{{"name", model}, {"image", "example/" + model}}});
    return kube::Json{{"model", {{"name", model}}}, {"template", {{"spec", std::move(pod_spec)}}}};
  };
  kube::Json edge = worker(edge_model, {{"nodeName", edge_node}});
  edge["hardExampleMining"] = {{"name", "IBT"}};
  return {{"apiVersion", "sedna.io/v1alpha1"},
          {"kind", "JointInferenceService"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"edgeWorker", std::move(edge)},
            {"cloudWorker", worker(cloud_model, kube::Json::object())}}}};
}

absl::StatusOr<std::vector<std::string>> CrdFiles(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code error;
    if (!std::filesystem::is_directory(path, error)) {
      files.push_back(path);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& entry : std::filesystem::directory_iterator(path, error)) {
      if (entry.path().extension() == ".yaml") found.push_back(entry.path().string());
    }
    if (error)
      return absl::InvalidArgumentError(absl::StrCat("--crd ", path, ": ", error.message()));
    if (found.empty())
      return absl::InvalidArgumentError(absl::StrCat("--crd ", path, ": no *.yaml"));
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

absl::Status CreateCrds(kube::KubeClient& client, const std::vector<std::string>& paths,
                        const kube::Resource& served) {
  ASSIGN_OR_RETURN(std::vector<std::string> files, CrdFiles(paths));
  for (const std::string& file : files) {
    ASSIGN_OR_RETURN(std::vector<kube::Json> crds, api::YamlFileToJson(file));
    for (const kube::Json& crd : crds) {
      RETURN_IF_ERROR(
          client.Create(kube::resources::CustomResourceDefinitions(), "", crd).status());
    }
  }
  if (!testing::WaitFor(
          [&] {
            absl::StatusOr<bool> is_served = client.IsServed(served);
            return is_served.ok() && *is_served;
          },
          absl::Seconds(30))) {
    return absl::DeadlineExceededError(
        absl::StrCat(served.QualifiedName(), " is not served 30 s after its CRD was created"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> FetchMetrics(int http_port) {
  httplib::Client http("127.0.0.1", http_port);
  http.set_connection_timeout(5);
  http.set_read_timeout(10);
  httplib::Result result = http.Get("/metrics");
  if (!result || result->status != 200) {
    return absl::UnavailableError(absl::StrCat("GET /metrics on port ", http_port, " failed"));
  }
  return result->body;
}

namespace {

// Calls `sample` with the value of every sample of `metric` whose labels contain all `labels`.
template <typename Sample>
void ForEachSample(const std::string& text, const std::string& metric,
                   const std::vector<std::string>& labels, Sample sample) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(metric, 0) != 0) continue;
    const char next = line.size() > metric.size() ? line[metric.size()] : '\0';
    if (next != ' ' && next != '{') continue;
    bool match = true;
    for (const std::string& label : labels) match = match && line.find(label) != std::string::npos;
    if (!match) continue;
    const std::size_t space = line.rfind(' ');
    double value = 0;
    if (space != std::string::npos && absl::SimpleAtod(line.substr(space + 1), &value))
      sample(value);
  }
}

}  // namespace

double MetricValue(const std::string& text, const std::string& metric,
                   const std::vector<std::string>& labels) {
  double sum = 0;
  ForEachSample(text, metric, labels, [&](double value) { sum += value; });
  return sum;
}

double HistogramQuantile(const std::string& text, const std::string& metric, double q,
                         const std::vector<std::string>& labels) {
  std::vector<std::pair<double, double>> buckets;  // (upper bound, cumulative count)
  std::istringstream lines(text);
  std::string line;
  const std::string bucket_metric = metric + "_bucket{";
  while (std::getline(lines, line)) {
    if (line.rfind(bucket_metric, 0) != 0) continue;
    bool match = true;
    for (const std::string& label : labels) match = match && line.find(label) != std::string::npos;
    const std::size_t le = line.find("le=\"");
    const std::size_t space = line.rfind(' ');
    if (!match || le == std::string::npos || space == std::string::npos) continue;
    const std::size_t le_end = line.find('"', le + 4);
    double bound = 0, count = 0;
    const std::string bound_text = line.substr(le + 4, le_end - le - 4);
    if (bound_text == "+Inf") {
      bound = std::numeric_limits<double>::infinity();
    } else if (!absl::SimpleAtod(bound_text, &bound)) {
      continue;
    }
    if (!absl::SimpleAtod(line.substr(space + 1), &count)) continue;
    buckets.emplace_back(bound, count);
  }
  std::sort(buckets.begin(), buckets.end());
  if (buckets.empty() || buckets.back().second <= 0) return 0;
  const double rank = q * buckets.back().second;
  double lower = 0, below = 0;
  for (const auto& [bound, count] : buckets) {
    if (count >= rank) {
      if (std::isinf(bound)) return lower;  // beyond the last finite bound: its value
      return lower + (bound - lower) * (rank - below) / std::max(count - below, 1e-9);
    }
    lower = bound;
    below = count;
  }
  return lower;
}

double MetricMax(const std::string& text, const std::string& metric) {
  double max = 0;
  ForEachSample(text, metric, {}, [&](double value) { max = std::max(max, value); });
  return max;
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one;
  return (in >> one) ? one : std::string("?");
}

absl::StatusOr<ApiRequestCounts> FetchApiRequestCounts(int api_port,
                                                       const std::string& user_agent) {
  httplib::Client http("127.0.0.1", api_port);
  http.set_read_timeout(10);
  httplib::Result result = http.Get("/debug/requests");
  if (!result || result->status != 200) {
    return absl::UnavailableError("GET /debug/requests of devapiserver failed");
  }
  kube::Json body = kube::Json::parse(result->body, nullptr, false);
  if (body.is_discarded()) return absl::InternalError("/debug/requests: not JSON");
  ApiRequestCounts counts;
  for (const kube::Json& row : body.value("requests", kube::Json::array())) {
    if (row.value("userAgent", "") != user_agent) continue;
    counts[absl::StrCat(row.value("verb", ""), " ", row.value("resource", ""))] +=
        row.value("count", int64_t{0});
  }
  return counts;
}

ApiRequestCounts Minus(const ApiRequestCounts& after, const ApiRequestCounts& before) {
  ApiRequestCounts diff;
  for (const auto& [key, count] : after) {
    auto it = before.find(key);
    const int64_t d = count - (it == before.end() ? 0 : it->second);
    if (d != 0) diff[key] = d;
  }
  return diff;
}

}  // namespace nereid::bench
