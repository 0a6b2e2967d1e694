#pragma once

// Helpers for turning a Kubernetes object into what the edge link carries.
//
// Version: what an edge node compares to decide whether it holds the current spec. It is the
// object's metadata.generation — bumped by the API server on spec changes only — not its
// resourceVersion, which every status write bumps: the GM writes status after each report, and
// re-sending the spec for that would make every report cause a downstream change. Where an API
// server does not maintain generation (0), a hash of .spec stands in ("h" + 16 hex digits). A
// re-created object is told apart by its uid (the hub compares uid and version).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <google/protobuf/message_lite.h>

#include "common/kube/object.h"
#include "nereid/edge/v1/resources.pb.h"

namespace nereid::gm {

std::string EdgeVersion(const kube::Json& object);

// The version of an object whose edge spec differs per node or carries more than the object's
// spec (derived state: stage, nodes, pods): EdgeVersion(object) + "-" + 16 hex digits of the hash
// of `node_spec`'s deterministic encoding, so a node is sent the object again exactly when what it
// would receive changed.
std::string EdgeVersion(const kube::Json& object,
                        const google::protobuf::MessageLite& node_spec);

// The generation a report's observed_version names, when it is one EdgeVersion made from a
// generation (also with a Secret's resourceVersion folded in, VersionWithCredential).
std::optional<int64_t> GenerationOfVersion(std::string_view version);

// {kind, namespace, name, uid} of `object`.
edge::v1::ObjectRef EdgeRef(std::string_view kind, const kube::Json& object);

}  // namespace nereid::gm
