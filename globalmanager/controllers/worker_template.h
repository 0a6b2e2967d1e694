#pragma once

// Worker templates: how every Sedna workload controller (JointInferenceService,
// FederatedLearningJob, Incremental/LifelongLearningJob) turns the user's PodTemplateSpec into the
// children it creates — Pods, Deployments, Services — so Sedna worker images run unchanged
// (same env names, labels and mount paths as Sedna's controllers) and nothing the user wrote is
// lost.
//
// BuildWorkerTemplate(owner, user_template, params) returns a PodTemplateSpec:
//   metadata  the template's labels and annotations (metadata.name is ignored, as in Sedna), plus
//             the worker labels "<lower kind>.sedna.io/name|uid|worker-type" and
//             params.selector_labels — these select the children, so a user label with the same
//             key and another value is refused (InvalidArgument with a kube::StatusCause naming
//             the field; controllers hand kube::Causes(status) to RecordSpecInvalid) — plus
//             params.labels, where a label the user set wins.
//   spec      the user's spec unchanged, then:
//             env      params.env appended to every container (not init containers, as Sedna);
//                      a name the container already sets (value or valueFrom) keeps the user's
//                      entry;
//             storage  for each params.mounts URL: an absolute host path gets a hostPath volume
//                      of its parent directory (the directory itself when is_dir), mounted in
//                      every container at /home/data<dir>, the env var set to /home/data<url>
//                      and DATA_PATH_PREFIX=/home/data (Sedna's storage-initializer layout);
//                      an s3:// URL the worker reads (download) is fetched by Sedna's
//                      storage-initializer init container into /downloads/<bucket>/<key>, which
//                      the env var names (worker_s3.h, with params.s3's Secret as secretKeyRef
//                      env); other s3:// URLs (outputs) and http(s):// URLs are passed in the env
//                      var as they are, an s3 output with the credential env in every
//                      container; an indirect index (StorageMount::indirect) is fetched by the
//                      storage-initializer with its destination marked '@'. Several URLs
//                      for one env var are joined by ';' (MODEL_URLS). Other URLs are refused.
//                      A container that already mounts something at the path keeps its mount.
//             defaults hostNetwork, restartPolicy, dnsPolicy only when the template leaves them
//                      unset; nodeName = params.node_name when given (placement decided it).
//
// Children built from such a template (names are Sedna's, api/sedna_contract.h):
//   BuildWorkerPod         generateName "<name>-<type>-"
//   BuildWorkerDeployment  "<name>-deployment-<type>", selector = worker labels + app.sedna.io
//                          (+ options.selector_labels, e.g. one Deployment per node), replicas
//   BuildWorkerService     "<name>-<type>", selector = worker labels, one port named "tcp-0"
//                          (EdgeMesh needs named ports)
// all with the owner's controller ownerReference (so the API server's GC removes them) and the
// worker labels. ContentHash/kTemplateHashAnnotation let a controller tell whether a child it
// created is still what the spec asks for without comparing against API-server defaulted fields.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/common_types.h"
#include "common/kube/errors.h"
#include "common/kube/object.h"
#include "globalmanager/controllers/content_hash.h"
#include "globalmanager/controllers/worker_s3.h"

namespace nereid::gm {

// The custom resource that owns the workers.
struct WorkerOwner {
  std::string kind;  // "JointInferenceService", "FederatedLearningJob", ...
  std::string name;
  std::string ns;
  std::string uid;

  static WorkerOwner FromObject(std::string_view kind, const kube::Json& object);
  // apiVersion sedna.io/v1alpha1, controller=true, blockOwnerDeletion=true.
  kube::OwnerReference ControllerRef() const;
  // "<lower kind>.sedna.io/name" + ".../uid" (values through LabelValue).
  std::map<std::string, std::string> SelectorLabels() const;
  // SelectorLabels + ".../worker-type" (lower-cased).
  std::map<std::string, std::string> WorkerLabels(std::string_view worker_type) const;
};

struct EnvVar {
  std::string name;
  std::string value;
  friend bool operator==(const EnvVar&, const EnvVar&) = default;
};

// A model/dataset/output location the worker uses.
struct StorageMount {
  std::string env_name;           // e.g. "MODEL_URL", "TRAIN_DATASET_URL", "MODEL_URLS"
  std::vector<std::string> urls;  // one, or several (joined by ';' in the env var)
  bool read_only = false;
  bool is_dir = false;  // the URL names a directory: mount it, not its parent
  // For error messages: what the URL is, e.g. "model \"big\" (spec.url)".
  std::string what = "storage URL";
  // Whether an s3:// URL is fetched by the storage-initializer (models, datasets) or used by the
  // worker itself (outputs, FL aggDataPath: passed as is, with the credential env).
  bool download = true;
  // Sedna's indirect URL: an index file (a host path or s3://) whose first line is a base URI and
  // each later line a file under it; the storage-initializer fetches the files (its destination
  // marked with '@') and the env var names the index under /downloads. A host-path index is
  // mounted into the init container only.
  bool indirect = false;
};

struct WorkerParams {
  std::string worker_type;  // "edge", "cloud", "aggregation", "train", ... (lower-cased)
  std::vector<EnvVar> env;  // appended in order; the user's value wins
  std::vector<StorageMount> mounts;
  // Labels that must hold because a selector uses them (beyond the worker labels).
  std::map<std::string, std::string> selector_labels;
  // Labels added when the user did not set the key.
  std::map<std::string, std::string> labels;
  std::optional<bool> host_network;  // only when the template leaves it unset
  std::string restart_policy;        // only when unset ("" = leave alone)
  std::string dns_policy;            // only when unset
  std::string node_name;             // when non-empty: spec.nodeName
  WorkerS3Options s3;                // the Secret and initializer image for s3:// mounts
};

// Whether any of `params.mounts` is an s3:// URL or an indirect index (whose files are in S3):
// then params.s3 matters.
bool UsesS3(const WorkerParams& params);

// Sedna's WORKER_NAME "<type>worker-<5 chars>", but stable (derived from the owner's uid) so a
// Deployment template does not change — and roll out — on every reconcile.
std::string WorkerName(const WorkerOwner& owner, std::string_view worker_type);

// Whether Sedna's GM names `kind`'s workers' owner by SERVICE_NAME (JointInferenceService,
// FeatureExtractionService, ObjectSearchService, ObjectTrackingService) rather than JOB_NAME.
bool IsSednaService(std::string_view kind);

// What the Sedna SDK reads to address its worker report (sedna/common/config.py BaseConfig,
// sedna/core/base.py JobBase): NAMESPACE, SERVICE_NAME (services only, as Sedna's GM), JOB_NAME
// (every kind: the SDK's ownerName is JOB_NAME, "sedna" when unset), WORKER_NAME (left out when
// `worker_name` is empty: the caller sets it per pod), LC_SERVER.
std::vector<EnvVar> ReportEnv(const WorkerOwner& owner, std::string_view worker_name,
                              std::string_view lc_server);

// ReportEnv with WORKER_NAME = WorkerName(owner, worker_type).
std::vector<EnvVar> BaseWorkerEnv(const WorkerOwner& owner, std::string_view worker_type,
                                  std::string_view lc_server);

// The problems building would report for `user_template` (field = where the template is in the
// spec, e.g. "spec.edgeWorker.template"): a selector label set to another value, a mount URL that
// is neither an absolute host path nor http(s)/s3. Structural checks (containers, images) are
// api::ValidatePodTemplate's.
std::vector<kube::StatusCause> CheckWorkerTemplate(const WorkerOwner& owner,
                                                   const api::PodTemplate& user_template,
                                                   const WorkerParams& params,
                                                   std::string_view field);

// The PodTemplateSpec described at the top; InvalidArgument (with causes) on CheckWorkerTemplate's
// problems or a template that is not an object.
absl::StatusOr<kube::Json> BuildWorkerTemplate(const WorkerOwner& owner,
                                               const api::PodTemplate& user_template,
                                               const WorkerParams& params,
                                               std::string_view field = "template");

// A Pod from a built template: generateName "<name>-<type>-", the owner's namespace and
// ownerReference.
kube::Json BuildWorkerPod(const WorkerOwner& owner, const kube::Json& pod_template,
                          std::string_view worker_type);

struct DeploymentOptions {
  std::string name;  // "" = "<name>-deployment-<type>"
  // nullopt: leave spec.replicas out (the API server defaults 1; an HPA owns it).
  std::optional<int32_t> replicas;
  // Added to the selector (and the pod labels), e.g. to tell per-node Deployments apart.
  std::map<std::string, std::string> selector_labels;
};

// apps/v1 Deployment: selector = worker labels + app.sedna.io=<name>-<type>-svc +
// options.selector_labels (all also written into the pod template's labels); the Deployment's own
// labels = the worker labels; annotation kTemplateHashAnnotation = ContentHash(pod template).
kube::Json BuildWorkerDeployment(const WorkerOwner& owner, const kube::Json& pod_template,
                                 std::string_view worker_type, const DeploymentOptions& options);

struct ServicePort {
  int32_t port = 0;
  int32_t target_port = 0;  // 0 = port
  std::string name;         // "" = "tcp-<index>" (EdgeMesh wants named ports)
  std::string protocol = "TCP";
};

// v1 Service "<name>-<type>" (or `name`), ClusterIP, selector = worker labels.
kube::Json BuildWorkerService(const WorkerOwner& owner, std::string_view worker_type,
                              const std::vector<ServicePort>& ports, std::string_view name = "");

// "<service>.<namespace>": how workers address a Service (BIG_MODEL_IP, AGG_IP), as Sedna.
std::string ServiceHost(const WorkerOwner& owner, std::string_view service_name);

// ContentHash (content_hash.h) of what a child was built from.
inline constexpr std::string_view kTemplateHashAnnotation = "nereid.io/template-hash";
// The kTemplateHashAnnotation a child carries ("" when none).
std::string TemplateHashOf(const kube::Json& child);

// A label value Kubernetes accepts (at most 63 characters): `value` itself when it fits, else its
// first 54 characters, '-' and 8 hex digits of its hash (Sedna would fail to create the child).
// The worker labels and the Deployment's app.sedna.io value go through it.
std::string LabelValue(std::string_view value);

// Whether `child` (as listed) is controlled by `owner` (controller ownerReference with its uid).
bool IsControlledBy(const kube::Json& child, const WorkerOwner& owner);

}  // namespace nereid::gm
