#pragma once

// Discovery documents (legacy, unaggregated: kubectl falls back to them when the server answers
// the aggregated-discovery Accept header with plain application/json), /version, and the
// OpenAPI v3 index kubectl reads to learn that the server honours fieldValidation.

#include <string>

#include "common/kube/object.h"
#include "tools/devapiserver/registry.h"

namespace nereid::devapi {

kube::Json VersionDocument();
kube::Json ApiVersions(const std::string& server_address);                    // GET /api
kube::Json ApiGroupList(const Registry& registry);                           // GET /apis
// GET /apis/<group>; null when the group is not served.
kube::Json ApiGroup(const Registry& registry, const std::string& group);
// GET /api/v1 or /apis/<group>/<version>; null when not served.
kube::Json ApiResourceList(const Registry& registry, const std::string& group,
                           const std::string& version);
// GET /openapi/v3: one entry per served group/version.
kube::Json OpenApiV3Index(const Registry& registry);
// GET /openapi/v3/api/v1 or /openapi/v3/apis/<g>/<v>: paths whose writes accept fieldValidation,
// and for CRDs their schemas. null when not served.
kube::Json OpenApiV3Document(const Registry& registry, const std::string& group,
                             const std::string& version);

}  // namespace nereid::devapi
