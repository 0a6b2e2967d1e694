#include "tools/devapiserver/admission.h"

#include <map>
#include <regex>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/kube/errors.h"
#include "common/kube/selector.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "tools/devapiserver/schema.h"

namespace nereid::devapi {

std::string QualifiedKind(const ResourceType& type) {
  return type.resource.group.empty() ? type.resource.kind
                                     : absl::StrCat(type.resource.kind, ".", type.resource.group);
}

absl::Status ValidateName(const ResourceType& type, const std::string& name) {
  static const std::regex kSubdomain("^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$");
  static const std::regex kLabel("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
  bool label_only = type.builtin && (type.resource.resource == "namespaces" ||
                                     type.resource.resource == "services");
  bool ok = name.size() <= (label_only ? 63u : 253u) &&
            std::regex_match(name, label_only ? kLabel : kSubdomain);
  if (ok) return absl::OkStatus();
  return kube::InvalidError(
      QualifiedKind(type), name,
      {{"FieldValueInvalid",
        absl::StrCat("Invalid value: \"", name, "\": a lowercase RFC 1123 ",
                     label_only ? "label" : "subdomain",
                     " must consist of lower case alphanumeric characters, '-'",
                     label_only ? "" : " or '.'",
                     ", and must start and end with an alphanumeric character"),
        "metadata.name"}});
}

namespace {

absl::Status CheckKind(const ResourceType& type, const Json& object) {
  if (!object.is_object()) return kube::BadRequestError("the request body must be a JSON object");
  auto kind = object.find("kind");
  if (kind != object.end() && kind->is_string() && !kind->get<std::string>().empty() &&
      kind->get<std::string>() != type.resource.kind) {
    return kube::BadRequestError(absl::StrCat("the kind of the provided object (", kind->get<std::string>(),
                                   ") does not match the expected kind ", type.resource.kind));
  }
  auto meta = object.find("metadata");
  if (meta != object.end() && !meta->is_object()) return kube::BadRequestError("metadata must be an object");
  return absl::OkStatus();
}

// Field types of ObjectMeta that the rest of the server reads: a mistyped one is refused here
// (400, as upstream's decoder does) instead of surfacing later.
absl::Status CheckMetadataTypes(const Json& object) {
  auto wrong = [](std::string_view field, std::string_view want) {
    return kube::BadRequestError(absl::StrCat("json: cannot unmarshal into Go struct field ObjectMeta.metadata.",
                                   ToAbsl(field), " of type ", ToAbsl(want)));
  };
  if (auto v = object.find("apiVersion"); v != object.end() && !v->is_string()) {
    return kube::BadRequestError("apiVersion must be a string");
  }
  auto meta = object.find("metadata");
  if (meta == object.end()) return absl::OkStatus();
  for (const char* f : {"name", "generateName", "namespace", "uid", "resourceVersion",
                        "creationTimestamp", "deletionTimestamp"}) {
    if (auto v = meta->find(f); v != meta->end() && !v->is_string() && !v->is_null()) {
      return wrong(f, "string");
    }
  }
  for (const char* f : {"labels", "annotations"}) {
    auto v = meta->find(f);
    if (v == meta->end() || v->is_null()) continue;
    if (!v->is_object()) return wrong(f, "map[string]string");
    for (const auto& [k, val] : v->items()) {
      if (!val.is_string()) return wrong(f, "map[string]string");
    }
  }
  if (auto v = meta->find("finalizers"); v != meta->end() && !v->is_null()) {
    if (!v->is_array()) return wrong("finalizers", "[]string");
    for (const Json& x : *v) {
      if (!x.is_string()) return wrong("finalizers", "[]string");
    }
  }
  if (auto v = meta->find("ownerReferences"); v != meta->end() && !v->is_null()) {
    if (!v->is_array()) return wrong("ownerReferences", "[]OwnerReference");
    for (const Json& ref : *v) {
      if (!ref.is_object()) return wrong("ownerReferences", "[]OwnerReference");
      for (const char* f : {"apiVersion", "kind", "name", "uid"}) {
        if (auto x = ref.find(f); x == ref.end() || !x->is_string()) {
          return kube::InvalidError("", "", {{"FieldValueRequired", "Required value",
                                              absl::StrCat("metadata.ownerReferences.", f)}});
        }
      }
      for (const char* f : {"controller", "blockOwnerDeletion"}) {
        if (auto x = ref.find(f); x != ref.end() && !x->is_boolean() && !x->is_null()) {
          return wrong("ownerReferences", "[]OwnerReference");
        }
      }
    }
  }
  if (auto v = meta->find("generation"); v != meta->end() && !v->is_number_integer() && !v->is_null()) {
    return wrong("generation", "int64");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckShape(const ResourceType& type, const Json& object) {
  RETURN_IF_ERROR(CheckKind(type, object));
  RETURN_IF_ERROR(CheckMetadataTypes(object));
  if (type.builtin) {
    for (const char* part : {"spec", "status"}) {
      if (auto v = object.find(part); v != object.end() && !v->is_object() && !v->is_null()) {
        return kube::BadRequestError(absl::StrCat("json: cannot unmarshal ", v->type_name(), " into Go struct field ",
                                       type.resource.kind, ".", part));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Normalize(const ResourceType& type, std::string_view ns, Json& object) {
  RETURN_IF_ERROR(CheckShape(type, object));
  object["kind"] = type.resource.kind;
  if (!object.contains("apiVersion") || !object["apiVersion"].is_string()) {
    object["apiVersion"] = type.resource.ApiVersion();
  }
  Json& meta = object["metadata"];
  if (!meta.is_object()) meta = Json::object();
  // null means absent (as Go's decoder reads it).
  for (auto it = meta.begin(); it != meta.end();) {
    it = it->is_null() ? meta.erase(it) : std::next(it);
  }
  if (type.builtin) {
    for (const char* part : {"spec", "status"}) {
      if (object.contains(part) && object[part].is_null()) object.erase(part);
    }
  }
  if (type.resource.namespaced) {
    std::string body_ns = meta.value("namespace", "");
    if (!body_ns.empty() && body_ns != ns) {
      return kube::BadRequestError("the namespace of the provided object does not match the namespace sent "
                        "on the request");
    }
    meta["namespace"] = std::string(ns);
  } else {
    meta.erase("namespace");
  }
  meta.erase("managedFields");
  return absl::OkStatus();
}

void FoldStringData(const ResourceType& type, Json& object) {
  if (!(type.builtin && type.resource.group.empty() && type.resource.resource == "secrets")) return;
  auto sd = object.find("stringData");
  if (sd == object.end()) return;
  if (sd->is_object()) {
    for (const auto& [k, v] : sd->items()) {
      if (v.is_string()) object["data"][k] = absl::Base64Escape(v.get<std::string>());
    }
  }
  object.erase("stringData");
}

namespace {

void SetDefault(Json& obj, const char* key, Json value) {
  if (!obj.contains(key) || obj[key].is_null()) obj[key] = std::move(value);
}

// The defaults the API server fills into a PodSpec that controllers most often compare against
// (k8s.io/kubernetes/pkg/apis/core/v1/defaults.go), so code that diffs desired and live pods
// meets them here as it would on a cluster.
void DefaultPodSpec(Json& spec) {
  if (!spec.is_object()) return;
  SetDefault(spec, "restartPolicy", "Always");
  SetDefault(spec, "terminationGracePeriodSeconds", 30);
  SetDefault(spec, "dnsPolicy", "ClusterFirst");
  SetDefault(spec, "schedulerName", "default-scheduler");
  SetDefault(spec, "securityContext", Json::object());
  for (const char* list : {"containers", "initContainers"}) {
    auto containers = spec.find(list);
    if (containers == spec.end() || !containers->is_array()) continue;
    for (Json& c : *containers) {
      if (!c.is_object()) continue;
      std::string image = c.value("image", "");
      bool latest = image.find(':') == std::string::npos || image.ends_with(":latest");
      SetDefault(c, "imagePullPolicy", latest ? "Always" : "IfNotPresent");
      SetDefault(c, "terminationMessagePath", "/dev/termination-log");
      SetDefault(c, "terminationMessagePolicy", "File");
      if (auto ports = c.find("ports"); ports != c.end() && ports->is_array()) {
        for (Json& port : *ports) {
          if (port.is_object()) SetDefault(port, "protocol", "TCP");
        }
      }
    }
  }
}

}  // namespace

void ApplyBuiltinDefaults(const ResourceType& type, Json& object) {
  if (!type.builtin) return;
  const std::string& r = type.resource.resource;
  if (r == "pods") {
    DefaultPodSpec(object["spec"]);
  } else if (r == "daemonsets") {
    Json& spec = object["spec"];
    SetDefault(spec, "revisionHistoryLimit", 10);
    if (kube::FindPath(object, "spec.template.spec") != nullptr) DefaultPodSpec(spec["template"]["spec"]);
  } else if (r == "deployments") {
    Json& spec = object["spec"];
    SetDefault(spec, "replicas", 1);
    SetDefault(spec, "revisionHistoryLimit", 10);
    SetDefault(spec, "progressDeadlineSeconds", 600);
    if (const Json* t = kube::FindPath(object, "spec.template.spec"); t != nullptr) {
      DefaultPodSpec(spec["template"]["spec"]);
    }
  } else if (r == "services") {
    Json& spec = object["spec"];
    SetDefault(spec, "type", "ClusterIP");
    SetDefault(spec, "sessionAffinity", "None");
    if (auto ports = spec.find("ports"); ports != spec.end() && ports->is_array()) {
      for (Json& port : *ports) {
        if (!port.is_object()) continue;
        SetDefault(port, "protocol", "TCP");
        if (port.contains("port")) SetDefault(port, "targetPort", port["port"]);
      }
    }
  }
}

void PrepareForCreate(const ResourceType& type, Json& object) {
  const std::string& r = type.resource.resource;
  // Nodes keep the status they are registered with (kubelets create them that way).
  if (type.has_status && !(type.builtin && r == "nodes")) object.erase("status");
  if (type.builtin && r == "pods") {
    object["status"] = {{"phase", "Pending"}, {"qosClass", "BestEffort"}};
  } else if (type.builtin && r == "namespaces") {
    object["status"] = {{"phase", "Active"}};
    object["spec"]["finalizers"] = Json::array({"kubernetes"});
  } else if (type.builtin && (r == "deployments" || r == "daemonsets")) {
    object["status"] = Json::object();
  }
}

Json InitialCrdStatus(const Json& crd, std::string_view now_text) {
  const Json* names = kube::FindPath(crd, "spec.names");
  std::string storage;
  if (const Json* versions = kube::FindPath(crd, "spec.versions"); versions && versions->is_array()) {
    for (const Json& v : *versions) {
      if (v.is_object() && v.value("storage", false)) storage = v.value("name", "");
    }
  }
  const std::string now(now_text);
  return {{"acceptedNames", names != nullptr ? *names : Json()},
          {"storedVersions", Json::array({storage})},
          {"conditions",
           Json::array({{{"type", "NamesAccepted"}, {"status", "True"}, {"reason", "NoConflicts"},
                         {"message", "no conflicts found"}, {"lastTransitionTime", now}},
                        {{"type", "Established"}, {"status", "True"}, {"reason", "InitialNamesAccepted"},
                         {"message", "the initial names have been accepted"},
                         {"lastTransitionTime", now}}})}};
}

absl::Status ValidateObject(const ResourceType& type, Json& object, const WriteOptions& options) {
  if (type.builtin && type.resource.resource == "customresourcedefinitions") {
    return TypeFromCrd(object).status();
  }
  if (type.builtin) return absl::OkStatus();
  std::string api_version = object.value("apiVersion", "");
  std::string version = api_version.substr(api_version.find('/') + 1);
  auto schema = type.schemas.find(version);
  if (schema == type.schemas.end()) return absl::OkStatus();
  SchemaOutcome outcome = ApplySchema(schema->second, &object);
  if (!outcome.unknown_fields.empty()) {
    if (options.field_validation == "Strict") {
      std::vector<std::string> quoted;
      for (const std::string& f : outcome.unknown_fields) quoted.push_back(absl::StrCat("unknown field \"", f, "\""));
      return kube::BadRequestError(absl::StrCat("strict decoding error: ", absl::StrJoin(quoted, ", ")));
    }
    if (options.field_validation == "Warn" && options.warnings != nullptr) {
      for (const std::string& f : outcome.unknown_fields) {
        options.warnings->push_back(absl::StrCat("unknown field \"", f, "\""));
      }
    }
  }
  if (!outcome.causes.empty()) {
    return kube::InvalidError(QualifiedKind(type), kube::Name(object), outcome.causes);
  }
  return absl::OkStatus();
}

absl::Status ValidateWorkloadSelector(const ResourceType& type, const Json& object,
                                      const Json* old) {
  const std::string& r = type.resource.resource;
  if (!type.builtin || type.resource.group != "apps" || (r != "deployments" && r != "daemonsets")) {
    return absl::OkStatus();
  }
  auto invalid = [&](std::string message, std::string field) {
    return kube::InvalidError(QualifiedKind(type), kube::Name(object),
                              {{"FieldValueInvalid", std::move(message), std::move(field)}});
  };
  const Json* selector = kube::FindPath(object, "spec.selector");
  if (selector == nullptr || !selector->is_object() || selector->empty()) {
    return kube::InvalidError(QualifiedKind(type), kube::Name(object),
                              {{"FieldValueRequired", "Required value", "spec.selector"}});
  }
  if (old != nullptr) {
    const Json* before = kube::FindPath(*old, "spec.selector");
    if (before != nullptr && *before != *selector) {
      return invalid(absl::StrCat("Invalid value: ", selector->dump(), ": field is immutable"),
                     "spec.selector");
    }
  }
  auto parsed = kube::LabelSelector::FromJson(*selector);
  if (!parsed.ok()) {
    return invalid(absl::StrCat("Invalid value: ", selector->dump(), ": ", parsed.status().message()),
                   "spec.selector");
  }
  if (parsed->empty()) {
    return invalid("Invalid value: {}: empty selector is invalid for deployment", "spec.selector");
  }
  std::map<std::string, std::string> labels;
  if (const Json* l = kube::FindPath(object, "spec.template.metadata.labels"); l && l->is_object()) {
    for (const auto& [k, v] : l->items()) {
      if (v.is_string()) labels[k] = v.get<std::string>();
    }
  }
  if (!parsed->Matches(labels)) {
    const Json* l = kube::FindPath(object, "spec.template.metadata.labels");
    return invalid(absl::StrCat("Invalid value: ", l != nullptr ? l->dump() : "null",
                                ": `selector` does not match template `labels`"),
                   "spec.template.metadata.labels");
  }
  return absl::OkStatus();
}

}  // namespace nereid::devapi
