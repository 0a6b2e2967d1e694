#pragma once

// Kubernetes resource quantities ("500m", "2", "1.5Gi", "1e3", "128974848") as exact milli-units,
// enough to add up pod requests for a PodGroup's minResources. Values beyond ±2^62 milli-units
// (about 4.6 EB of memory) are refused rather than rounded.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/kube/object.h"

namespace nereid::job {

// The quantity in thousandths of its unit (cores → millicores, bytes → millibytes). Fractions
// below one milli-unit round up, as Kubernetes does. InvalidArgument on malformed input.
absl::StatusOr<int64_t> ParseQuantityMilli(std::string_view quantity);

// A canonical-enough spelling of `milli` (parses back to the same value): "250m", "3", "2Gi".
std::string FormatQuantityMilli(int64_t milli);

// resource name → milli-units.
using ResourceList = std::map<std::string, int64_t>;

// What the scheduler reserves for one pod of `pod_spec` (a PodSpec): per resource the larger of
// Σ containers and the largest init container (a container's requests, else its limits), plus
// spec.overhead. Malformed quantities → InvalidArgument naming the field.
absl::StatusOr<ResourceList> PodRequests(const kube::Json& pod_spec);

// Adds `b` into `a`; false (a unchanged for that resource) on overflow.
bool AddResources(ResourceList* a, const ResourceList& b);

kube::Json ResourceListToJson(const ResourceList& list);

}  // namespace nereid::job
