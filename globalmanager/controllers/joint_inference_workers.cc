#include "globalmanager/controllers/joint_inference_workers.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/api/sedna_contract.h"
#include "common/api/validation.h"
#include "common/kube/object.h"
#include "common/strings/absl_compat.h"

namespace nereid::gm {
namespace {

using kube::Json;

constexpr std::string_view kCloud = api::worker_types::kCloud;
constexpr std::string_view kEdge = api::worker_types::kEdge;

// Go's encoding/json escapes these for HTML safety; workers may compare the string.
std::string GoJsonEscape(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (c == '\xe2' && i + 2 < json.size() && json[i + 1] == '\x80' &&
               (json[i + 2] == '\xa8' || json[i + 2] == '\xa9')) {
      out += json[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";  // U+2028/U+2029, as Go does
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string ModelWhat(std::string_view worker, std::string_view model) {
  return absl::StrCat("the URL of the ", ToAbsl(worker), " worker's model \"", ToAbsl(model), "\"");
}

// The field of a cause CheckWorkerTemplate reports for a mount: the model reference.
void RenameMountFields(std::vector<kube::StatusCause>* causes, std::string_view env,
                       std::string_view field) {
  for (kube::StatusCause& cause : *causes) {
    if (cause.field == env) cause.field = std::string(field);
  }
}

struct WorkerInput {
  std::string_view type;
  std::string_view spec_path;  // "spec.cloudWorker"
  const api::PodTemplate* pod_template;
  std::string model_name;
  std::string model_url;
  std::vector<EnvVar> env;
  WorkerS3Options s3;
};

absl::StatusOr<Json> BuildTemplate(const WorkerOwner& owner, const WorkerInput& in,
                                   std::string_view lc_server, std::string_view node) {
  WorkerParams params;
  params.worker_type = std::string(in.type);
  params.s3 = in.s3;
  params.env = BaseWorkerEnv(owner, in.type, lc_server);
  params.env.insert(params.env.end(), in.env.begin(), in.env.end());
  params.mounts.push_back({std::string(api::env::kModelUrl), {in.model_url}, /*read_only=*/false,
                           /*is_dir=*/false, ModelWhat(in.type, in.model_name)});
  params.selector_labels[std::string(api::kAppLabelKey)] =
      LabelValue(api::AppLabelValue(owner.name, in.type));
  if (in.type == kEdge) {
    // The edge worker reports to its node's LC at LC_SERVER (localhost by default) and must still
    // resolve the cloud Service: host network with cluster DNS, unless the template says otherwise.
    params.host_network = true;
    params.dns_policy = "ClusterFirstWithHostNet";
  }
  if (!node.empty()) {
    params.selector_labels[std::string(kNodeLabel)] = LabelValue(node);
    params.node_name = std::string(node);
  }
  const std::string field = absl::StrCat(ToAbsl(in.spec_path), ".template");
  std::vector<kube::StatusCause> causes =
      CheckWorkerTemplate(owner, *in.pod_template, params, field);
  if (!causes.empty()) {
    RenameMountFields(&causes, api::env::kModelUrl, absl::StrCat(ToAbsl(in.spec_path), ".model"));
    return api::InvalidObjectError(owner.kind, owner.name, std::move(causes));
  }
  return BuildWorkerTemplate(owner, *in.pod_template, params, field);
}

}  // namespace

std::string HemParametersJson(const std::vector<api::ParaSpec>& parameters, bool present) {
  if (!present) return "null";
  Json list = Json::array();
  for (const api::ParaSpec& p : parameters) list.push_back({{"key", p.key}, {"value", p.value}});
  return GoJsonEscape(kube::DumpCompact(list));
}

std::string EdgeDeploymentName(std::string_view service_name, std::string_view node) {
  std::string name = api::DeploymentName(service_name, kEdge);
  if (node.empty()) return name;
  absl::StrAppend(&name, "-", ToAbsl(node));
  if (name.size() > 253) name = absl::StrCat(name.substr(0, 236), "-", ContentHash(Json(name)));
  return name;
}

Json BuildHpa(const WorkerOwner& owner, std::string_view worker_type, std::string_view deployment,
              const api::Hpa& hpa) {
  Json labels = Json::object();
  for (const auto& [k, v] : owner.WorkerLabels(worker_type)) labels[k] = v;
  Json spec = {{"scaleTargetRef",
                {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", deployment}}},
               {"maxReplicas", hpa.max_replicas}};
  if (hpa.min_replicas.has_value()) spec["minReplicas"] = *hpa.min_replicas;
  if (!hpa.metrics.is_null()) spec["metrics"] = hpa.metrics;
  if (!hpa.behavior.is_null()) spec["behavior"] = hpa.behavior;
  Json metadata = {{"name", api::HpaName(deployment)},
                   {"namespace", owner.ns},
                   {"labels", std::move(labels)},
                   {"annotations", {{std::string(kTemplateHashAnnotation), ContentHash(spec)}}},
                   {"ownerReferences", Json::array({owner.ControllerRef().ToJson()})}};
  return Json{{"apiVersion", "autoscaling/v2"},
              {"kind", "HorizontalPodAutoscaler"},
              {"metadata", std::move(metadata)},
              {"spec", std::move(spec)}};
}

absl::StatusOr<JiChildren> BuildJointInferenceChildren(const Json& object,
                                                       const api::JointInferenceService& service,
                                                       const JiModelUrls& models,
                                                       const Placement& edge_placement,
                                                       std::string_view lc_server) {
  const WorkerOwner owner = WorkerOwner::FromObject(api::kinds::kJointInferenceService, object);
  const auto& cloud = service.spec.cloud_worker;
  const auto& edge = service.spec.edge_worker;
  const std::string port = std::to_string(api::ports::kJointInferenceCloud);
  const std::string cloud_service = api::ServiceName(owner.name, kCloud);
  JiChildren out;

  // Cloud worker.
  WorkerInput cloud_in{kCloud, "spec.cloudWorker", &cloud.pod_template, cloud.model.name,
                       models.cloud, {{std::string(api::env::kBigModelBindPort), port}},
                       models.cloud_s3};
  absl::StatusOr<Json> cloud_template = BuildTemplate(owner, cloud_in, lc_server, "");
  std::vector<kube::StatusCause> causes;
  if (!cloud_template.ok()) {
    std::vector<kube::StatusCause> c = kube::Causes(cloud_template.status());
    if (c.empty()) return cloud_template.status();
    causes.insert(causes.end(), c.begin(), c.end());
  }

  // Edge worker(s).
  WorkerInput edge_in{
      kEdge,
      "spec.edgeWorker",
      &edge.pod_template,
      edge.model.name,
      models.edge,
      {{std::string(api::env::kBigModelIp), ServiceHost(owner, cloud_service)},
       {std::string(api::env::kBigModelPort), port},
       {std::string(api::env::kHemName), edge.hard_example_mining.name},
       {std::string(api::env::kHemParameters),
        HemParametersJson(edge.hard_example_mining.parameters,
                          edge.hard_example_mining.parameters_set)}},
      models.edge_s3};
  std::vector<std::string> edge_nodes;  // "" = the single edge Deployment
  if (edge_placement.mode == Placement::Mode::kSelector) {
    edge_nodes = edge_placement.nodes;
  } else {
    edge_nodes.push_back("");
  }
  std::vector<std::pair<std::string, Json>> edge_templates;
  for (const std::string& node : edge_nodes) {
    absl::StatusOr<Json> t = BuildTemplate(owner, edge_in, lc_server, node);
    if (!t.ok()) {
      std::vector<kube::StatusCause> c = kube::Causes(t.status());
      if (c.empty()) return t.status();
      causes.insert(causes.end(), c.begin(), c.end());
      break;  // The same problem for every node.
    }
    edge_templates.emplace_back(node, *std::move(t));
  }
  if (edge_nodes.empty()) {
    // No node selected yet: still check the template so a bad one is reported now.
    absl::StatusOr<Json> t = BuildTemplate(owner, edge_in, lc_server, "");
    if (!t.ok()) {
      std::vector<kube::StatusCause> c = kube::Causes(t.status());
      if (c.empty()) return t.status();
      causes.insert(causes.end(), c.begin(), c.end());
    }
  }
  if (!causes.empty()) return api::InvalidObjectError(owner.kind, owner.name, std::move(causes));

  // Deployments (+ HPAs).
  auto replicas = [](const std::optional<api::Hpa>& hpa, const std::optional<int32_t>& r)
      -> std::optional<int32_t> {
    if (hpa.has_value()) return std::nullopt;  // The HPA owns spec.replicas.
    return r.value_or(1);
  };
  {
    DeploymentOptions options;
    options.replicas = replicas(cloud.hpa, cloud.replicas);
    Json d = BuildWorkerDeployment(owner, *cloud_template, kCloud, options);
    const std::string name = kube::Name(d);
    out.deployments.push_back({std::string(kCloud), "", cloud.hpa.has_value(), std::move(d)});
    if (cloud.hpa.has_value()) out.hpas.push_back(BuildHpa(owner, kCloud, name, *cloud.hpa));
  }
  for (auto& [node, tmpl] : edge_templates) {
    DeploymentOptions options;
    options.name = EdgeDeploymentName(owner.name, node);
    options.replicas = replicas(edge.hpa, edge.replicas);
    if (!node.empty()) options.selector_labels[std::string(kNodeLabel)] = LabelValue(node);
    Json d = BuildWorkerDeployment(owner, tmpl, kEdge, options);
    out.deployments.push_back({std::string(kEdge), node, edge.hpa.has_value(), std::move(d)});
    if (edge.hpa.has_value()) out.hpas.push_back(BuildHpa(owner, kEdge, options.name, *edge.hpa));
  }

  // The cloud Service.
  ServicePort service_port;
  service_port.port = api::ports::kJointInferenceCloud;
  out.service = BuildWorkerService(owner, kCloud, {service_port}, cloud_service);
  out.service["metadata"]["annotations"] = {
      {std::string(kTemplateHashAnnotation), ContentHash(out.service["spec"])}};

  if (edge_placement.mode == Placement::Mode::kNodeName ||
      edge_placement.mode == Placement::Mode::kSelector) {
    out.edge_nodes = edge_placement.nodes;
  }
  return out;
}

}  // namespace nereid::gm
