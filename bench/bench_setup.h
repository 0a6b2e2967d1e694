#pragma once

// What the benchmarks that run a real devapiserver and GM share: the CRD files to create, and the
// machine's load average to print beside the figures (the machine is shared).

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/kube/client.h"

namespace nereid::bench {

// The CRD files named by --crd: a file as is, a directory's *.yaml files in name order.
absl::StatusOr<std::vector<std::string>> CrdFiles(const std::vector<std::string>& paths);
// Creates every CustomResourceDefinition in those files.
absl::Status CreateCrds(kube::KubeClient& client, const std::vector<std::string>& paths);
// The 1-minute load average ("?" when unreadable).
std::string LoadAverage();

}  // namespace nereid::bench
