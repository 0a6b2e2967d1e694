#pragma once

// Helpers both ends of the GM <-> LC Sync stream share (proto/nereid/edge/v1/sync.proto): object
// keys, the kind each typed spec belongs to, and structural validation of messages, so the GM and
// the LC agree on what a well-formed change or report is.

#include <string>
#include <string_view>

#include <optional>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "nereid/edge/v1/resources.pb.h"
#include "nereid/edge/v1/status.pb.h"
#include "nereid/edge/v1/sync.pb.h"

namespace nereid::net {

// The protocol version this build speaks (ProtocolVersion enum).
inline constexpr uint32_t kEdgeProtocolVersion = edge::v1::PROTOCOL_VERSION_V1;

// HelloReply.capabilities: the GM reads NodeSummary messages (sync.proto).
inline constexpr std::string_view kEdgeCapabilityNodeSummary = "node-summary";

// Trailing metadata of a stream a GM replica refuses because another replica serves the node
// (the leader, or with edge shards the node's owner), or ends to move the node there: HOST:PORT
// to dial instead. The LC follows one such hint per attempt and verifies the replica it reaches
// under the name it verifies its configured address with.
inline constexpr char kEdgeOwnerTrailer[] = "nereid-edge-owner";

// Request metadata of a node's Sync stream: the owner address (from kEdgeOwnerTrailer) the LC
// dialled last that did not serve it (unreachable from the node, or refusing it too). A replica
// that would send the node to that same address serves it instead, so an owner the nodes cannot
// reach (a pod address behind a load balancer, a replica that just died) costs a node one dial.
inline constexpr char kUnservedOwnerMetadata[] = "nereid-edge-unserved-owner";

// Request metadata of a Sync stream a GM replica relays to the leader for a node that reached it:
// the node's name, as that replica verified it from the node's certificate. The leader believes
// it only from a peer presenting the GM's own certificate.
inline constexpr char kRelayedNodeMetadata[] = "nereid-relayed-node";

// Kind spellings used in ObjectRef.kind.
inline constexpr std::string_view kKindDataset = "Dataset";
inline constexpr std::string_view kKindModel = "Model";
inline constexpr std::string_view kKindJointInferenceService = "JointInferenceService";
inline constexpr std::string_view kKindFederatedLearningJob = "FederatedLearningJob";
inline constexpr std::string_view kKindIncrementalLearningJob = "IncrementalLearningJob";
inline constexpr std::string_view kKindLifelongLearningJob = "LifelongLearningJob";
inline constexpr std::string_view kKindDistributedJob = "DistributedJob";
inline constexpr std::string_view kKindVideoAnalyticsJob = "VideoAnalyticsJob";
inline constexpr std::string_view kKindReidJob = "ReidJob";
inline constexpr std::string_view kKindFeatureExtractionService = "FeatureExtractionService";
inline constexpr std::string_view kKindWorker = "Worker";

// "Kind/namespace/name": identity of an object on the link (the uid is compared separately, so a
// re-created object replaces the old one under the same key).
std::string ObjectKey(const edge::v1::ObjectRef& ref);
// "Kind namespace/name" for log lines.
std::string RefString(const edge::v1::ObjectRef& ref);

// The ObjectRef.kind a Resource with this spec must carry ("" when no spec is set).
std::string_view KindForSpec(edge::v1::Resource::SpecCase spec_case);

// kind and name present (namespace may be empty only for cluster-scoped kinds, which we have none
// of, so it is required too).
absl::Status ValidateRef(const edge::v1::ObjectRef& ref);
// ValidateRef + a version + exactly the spec that ref.kind calls for.
absl::Status ValidateResource(const edge::v1::Resource& resource);
// seq > 0, a valid ref, a payload.
absl::Status ValidateReport(const edge::v1::StatusReport& report);

// absl::Time <-> the wire Timestamp; an unset Timestamp (both fields zero) is nullopt.
edge::v1::Timestamp ToProtoTime(absl::Time time);
std::optional<absl::Time> FromProtoTime(const edge::v1::Timestamp& time);

// absl::Status <-> ErrorDetail (NACK payload).
edge::v1::ErrorDetail ToErrorDetail(const absl::Status& status);
absl::Status FromErrorDetail(const edge::v1::ErrorDetail& detail);

}  // namespace nereid::net
