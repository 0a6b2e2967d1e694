#pragma once

// The children of a JointInferenceService, built from its spec with the names, labels and env
// Sedna's controllers/jointinference gives them (its worker images and users rely on them):
//
//   cloud worker  Deployment "<name>-deployment-cloud" (replicas from spec.cloudWorker.replicas,
//                 default 1; left to the HPA when one is set) + Service "<name>-cloud", ClusterIP,
//                 port 5000 named "tcp-0" (EdgeMesh) → the cloud pods.
//                 env BIG_MODEL_BIND_PORT=5000, MODEL_URL (cloud model)
//   edge worker   Deployment "<name>-deployment-edge" (replicas from spec.edgeWorker.replicas),
//                 env BIG_MODEL_IP=<name>-cloud.<ns>, BIG_MODEL_PORT=5000, HEM_NAME,
//                 HEM_PARAMETERS (Go's json.Marshal of the parameters: [{"key":..,"value":..}],
//                 "null" when absent, <>& escaped as \u003c \u003e \u0026), MODEL_URL (edge model);
//                 hostNetwork=true and dnsPolicy=ClusterFirstWithHostNet unless the template sets
//                 them (it reports to its node's LC at LC_SERVER, localhost:9100 by default, and
//                 must still resolve the cloud Service)
//   both          NAMESPACE, SERVICE_NAME, JOB_NAME, WORKER_NAME, LC_SERVER; Sedna's labels and
//                 an owner reference (worker_template.h); a host-path model URL is mounted read-write from
//                 its parent directory at /home/data/<dir> (DATA_PATH_PREFIX); http(s)/s3 model
//                 URLs are passed in MODEL_URL as they are.
//   hpa           per worker with spec.<worker>.hpa: autoscaling/v2 HorizontalPodAutoscaler
//                 "hpa-<deployment>" scaling that Deployment (min/max/metrics/behavior as given).
//
// Edge placement (placement.h):
//   nodeName set, or neither nodeName nor a node selection  → the one edge Deployment above, the
//       template as written (an unplaced worker's node is not known in advance, so no LC is told);
//   nodeSelector / required node affinity without nodeName    → one edge Deployment per matching
//       edge node, "<name>-deployment-edge-<node>", pinned there with spec.nodeName and told apart
//       by the selector label nereid.io/node; each with its own HPA when hpa is set.
//
// Deployments and the Service carry kTemplateHashAnnotation (the hash of what the spec asks for),
// so the controller rolls out a spec change by comparing hashes, not API-server-defaulted fields.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/joint_inference_service.h"
#include "common/kube/object.h"
#include "globalmanager/controllers/placement.h"
#include "globalmanager/controllers/worker_template.h"

namespace nereid::gm {

// The selector label that tells per-node edge Deployments apart.
inline constexpr std::string_view kNodeLabel = "nereid.io/node";

// Sedna's HEM_PARAMETERS value for `hem.parameters` (`present` = the manifest has the list).
std::string HemParametersJson(const std::vector<api::ParaSpec>& parameters, bool present);

// The name of the edge Deployment for `node` ("" = the single one).
std::string EdgeDeploymentName(std::string_view service_name, std::string_view node);

struct JiModelUrls {
  std::string edge;   // spec.url of the edge worker's Model
  std::string cloud;  // spec.url of the cloud worker's Model
  // The S3 storage of each worker (its Model's credentialName, the GM's initializer image).
  WorkerS3Options edge_s3;
  WorkerS3Options cloud_s3;
};

struct JiDeployment {
  std::string worker_type;  // "cloud" | "edge"
  std::string node;         // per-node edge Deployment: its node; "" otherwise
  bool has_hpa = false;     // replicas belong to the HPA
  kube::Json object;
};

struct JiChildren {
  std::vector<JiDeployment> deployments;  // cloud first, then the edge one(s) by node
  kube::Json service;                     // the cloud Service
  std::vector<kube::Json> hpas;
  // The nodes whose LocalController gets the service's spec (and the edge model).
  std::vector<std::string> edge_nodes;
};

// Builds every child of `object` (the JointInferenceService as listed; `service` is it parsed)
// for the given model URLs and edge placement. InvalidArgument with kube::StatusCause entries
// (field paths under spec.*) when a template cannot be used (a selector label overridden, a model
// URL that is neither a host path nor http(s)/s3).
absl::StatusOr<JiChildren> BuildJointInferenceChildren(const kube::Json& object,
                                                       const api::JointInferenceService& service,
                                                       const JiModelUrls& models,
                                                       const Placement& edge_placement,
                                                       std::string_view lc_server);

// The HPA "hpa-<deployment>" for `deployment` from Sedna's hpa block.
kube::Json BuildHpa(const WorkerOwner& owner, std::string_view worker_type,
                    std::string_view deployment, const api::Hpa& hpa);

}  // namespace nereid::gm
