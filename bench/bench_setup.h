#pragma once

// What the benchmarks that run a real devapiserver and GM share: their command-line reading, the
// two processes started and waited on, the CRD files to create, and the machine's load average to
// print beside the figures (the machine is shared).

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/config/option_set.h"
#include "common/kube/client.h"
#include "common/kube/resource.h"
#include "tests/support/subprocess.h"

namespace nereid::bench {

// Reads the command line (argv[1..]) into the targets of `options` (common/config/option_set.h),
// then runs `check` (required flags and the like). nullopt: go on. Else the exit status: 0 after
// --help or --version (printed to stdout), 2 after an error (printed with the help to stderr).
std::optional<int> ReadFlags(config::OptionSet& options, int argc, char** argv,
                             const std::function<absl::Status()>& check);

// devapiserver, in memory on 127.0.0.1:0, writing a kubeconfig for itself to `kubeconfig_out`,
// with `extra_args` after its own.
struct DevApiServer {
  std::unique_ptr<testing::Subprocess> process;
  int port = 0;
};
absl::StatusOr<DevApiServer> StartDevApiServer(const std::string& binary,
                                               const std::string& kubeconfig_out,
                                               const std::vector<std::string>& extra_args = {});

// A globalmanager run as `options` says (argv[0] the binary; it must listen on 127.0.0.1), once
// its /readyz answers 200.
struct GlobalManager {
  std::unique_ptr<testing::Subprocess> process;
  int edge_port = 0;
  int http_port = 0;
};
// What StartGlobalManager waits for: /readyz 200 (the leader, or a GM without leader election), or
// a standby that knows the leader (/readyz 503 naming it).
enum class GmReadiness { kReady, kStandby };
absl::StatusOr<GlobalManager> StartGlobalManager(testing::Subprocess::Options options,
                                                 GmReadiness wait = GmReadiness::kReady);

// globalmanager's argv with its edge hub (mTLS, certificates as scripts/gen-certs.sh writes them to
// `certs_dir`) and its HTTP port on 127.0.0.1:0; callers add --leader-elect, --log-level, ...
std::vector<std::string> GlobalManagerMtlsArgv(const std::string& binary,
                                               const std::string& kubeconfig,
                                               const std::string& certs_dir);

// A Model at /models/<name>.pb.
kube::Json ModelObject(const std::string& name);
// A JointInferenceService: an edge worker (hard example mining IBT) on `edge_node` with
// `edge_model`, an unplaced cloud worker with `cloud_model`; each container named after its model.
kube::Json JointInferenceServiceObject(const std::string& name, const std::string& edge_node,
                                       const std::string& edge_model,
                                       const std::string& cloud_model);

// The CRD files named by --crd: a file as is, a directory's *.yaml files in name order.
absl::StatusOr<std::vector<std::string>> CrdFiles(const std::vector<std::string>& paths);
// Creates every CustomResourceDefinition in those files, then waits (30 s at most) until `served`
// is served.
absl::Status CreateCrds(kube::KubeClient& client, const std::vector<std::string>& paths,
                        const kube::Resource& served);
// GET /metrics on 127.0.0.1:http_port (the GM's or an LC's; Prometheus text).
absl::StatusOr<std::string> FetchMetrics(int http_port);
// Sum of the samples of `metric` whose labels contain every one of `labels` (Prometheus text).
double MetricValue(const std::string& text, const std::string& metric,
                   const std::vector<std::string>& labels = {});
// The q-quantile (0..1) of histogram `metric` from its cumulative `_bucket` samples whose labels
// contain every one of `labels`, interpolated linearly inside the bucket as Prometheus'
// histogram_quantile does; 0 without samples.
double HistogramQuantile(const std::string& text, const std::string& metric, double q,
                         const std::vector<std::string>& labels = {});
// The largest sample of `metric` (0 when there is none).
double MetricMax(const std::string& text, const std::string& metric);

// Requests devapiserver on 127.0.0.1:api_port counted from `user_agent` (GET /debug/requests):
// "verb resource" -> count.
using ApiRequestCounts = std::map<std::string, int64_t>;
absl::StatusOr<ApiRequestCounts> FetchApiRequestCounts(int api_port,
                                                       const std::string& user_agent);
// Every count - its count in `before` (keys that did not change are left out).
ApiRequestCounts Minus(const ApiRequestCounts& after, const ApiRequestCounts& before);
// The GM's user agent on its API requests.
inline constexpr char kGmUserAgent[] = "nereid-globalmanager";

// The 1-minute load average ("?" when unreadable).
std::string LoadAverage();

}  // namespace nereid::bench
