#include "tools/devapiserver/request.h"

#include <algorithm>
#include <regex>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/kube/errors.h"
#include "common/kube/object.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "tools/devapiserver/patch.h"
#include "tools/devapiserver/protobuf.h"

namespace nereid::devapi {

absl::Status NotFoundPath() {
  return kube::MakeError("NotFound", "the server could not find the requested resource");
}

Json ErrorJson(const absl::Status& status) {
  Json doc = kube::StatusToJson(status);
    // kubectl prints `The Widget "x" is invalid: ...` from details.kind/name (InvalidError
  // messages start with `<Kind>[.<group>] "<name>" is invalid`).
  if (kube::Reason(status) == "Invalid") {
    static const std::regex kHead("^([^ \"]+) \"([^\"]*)\" is invalid");
    std::string message(status.message());
    std::smatch m;
    if (std::regex_search(message, m, kHead)) {
      std::string qualified = m[1];
      size_t dot = qualified.find('.');
      Json& details = doc["details"];
      details["name"] = m[2];
      details["kind"] = qualified.substr(0, dot);
      if (dot != std::string::npos) details["group"] = qualified.substr(dot + 1);
    }
  }
  return doc;
}

std::string Param(const httplib::Request& req, const char* name) {
  return req.has_param(name) ? req.get_param_value(name) : std::string();
}

bool TrueParam(const httplib::Request& req, const char* name) {
  std::string v = Param(req, name);
  return v == "true" || v == "1";
}

absl::StatusOr<Target> ParseTarget(const std::vector<std::string>& parts) {
  Target t;
  size_t i = 0;
  if (parts.size() >= 2 && parts[0] == "api") {
    t.version = parts[1];
    i = 2;
  } else if (parts.size() >= 3 && parts[0] == "apis") {
    t.group = parts[1];
    t.version = parts[2];
    i = 3;
  } else {
    return NotFoundPath();
  }
  std::vector<std::string> rest(parts.begin() + i, parts.end());
  if (!rest.empty() && rest[0] == "watch") {
    t.watch = true;
    rest.erase(rest.begin());
  }
  if (rest.empty()) return NotFoundPath();
  if (rest[0] == "namespaces" && rest.size() > 1) {
    if (rest.size() > 2 && rest[2] != "status" && rest[2] != "finalize") {
      t.ns = rest[1];
      rest.erase(rest.begin(), rest.begin() + 2);
    }
  }
  t.resource = rest[0];
  if (rest.size() > 1) t.name = rest[1];
  if (rest.size() > 2) t.subresource = rest[2];
  if (rest.size() > 3) return NotFoundPath();
  return t;
}

std::string MediaType(const httplib::Request& req) {
  std::string ct = req.get_header_value("Content-Type");
  size_t semi = ct.find(';');
  if (semi != std::string::npos) ct = ct.substr(0, semi);
  while (!ct.empty() && ct.back() == ' ') ct.pop_back();
  return ct;
}

bool WantsTable(const httplib::Request& req) {
  return absl::StrContains(req.get_header_value("Accept"), "as=Table");
}

absl::StatusOr<Json> ParseBody(const httplib::Request& req) {
  std::string media = MediaType(req);
  if (media == "application/vnd.kubernetes.protobuf") return DecodeKubeProtobuf(req.body);
  if (!media.empty() && media != "application/json" && !absl::EndsWith(media, "+json") &&
      media != "*/*") {
    return kube::MakeError("UnsupportedMediaType",
                           absl::StrCat("the body of the request was in an unknown format - accepted "
                                        "media types include: application/json (got ", media, ")"));
  }
  Json body = Json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) {
    return kube::BadRequestError("the request body is not valid JSON");
  }
  return body;
}

WriteOptions WriteOptionsFrom(const httplib::Request& req, std::vector<std::string>* warnings) {
  WriteOptions o;
  o.dry_run = Param(req, "dryRun") == "All";
  std::string fv = Param(req, "fieldValidation");
  if (fv == "Strict" || fv == "Warn" || fv == "Ignore") o.field_validation = fv;
  o.warnings = warnings;
  return o;
}

// The autoscaling/v1 Scale view of an object with a scale subresource.
Json ScaleOf(const ResourceType& type, const Json& obj) {
  const ScaleSpec& spec = *type.scale;
  const Json* want = kube::FindPath(obj, spec.spec_replicas_path);
  const Json* have = kube::FindPath(obj, spec.status_replicas_path);
  Json meta = {{"name", kube::Name(obj)},
               {"uid", kube::Uid(obj)},
               {"resourceVersion", kube::ResourceVersion(obj)},
               {"creationTimestamp", kube::StringAt(obj, "metadata.creationTimestamp")}};
  if (type.resource.namespaced) meta["namespace"] = kube::Namespace(obj);
  Json status = {{"replicas", have && have->is_number_integer() ? have->get<int64_t>() : 0}};
  if (!spec.label_selector_path.empty()) {
    status["selector"] = kube::StringAt(obj, spec.label_selector_path);
  } else if (const Json* sel = kube::FindPath(obj, "spec.selector.matchLabels"); sel && sel->is_object()) {
    std::string text;
    for (const auto& [k, v] : sel->items()) {
      if (!text.empty()) text += ",";
      text += k + "=" + (v.is_string() ? v.get<std::string>() : kube::DumpCompact(v));
    }
    status["selector"] = text;
  }
  return {{"kind", "Scale"},
          {"apiVersion", "autoscaling/v1"},
          {"metadata", meta},
          {"spec", {{"replicas", want && want->is_number_integer() ? want->get<int64_t>() : 0}}},
          {"status", status}};
}

void SetPath(Json& obj, std::string_view dotted, Json value) {
  Json* cur = &obj;
  for (absl::string_view part : absl::StrSplit(ToAbsl(dotted), '.')) {
    if (!cur->is_object()) *cur = Json::object();
    cur = &(*cur)[std::string(part)];
  }
  *cur = std::move(value);
}

ListRequest ListRequestFrom(const httplib::Request& req, const Target& t) {
  ListRequest l;
  l.ns = t.ns;
  l.label_selector = Param(req, "labelSelector");
  l.field_selector = Param(req, "fieldSelector");
  l.continue_token = Param(req, "continue");
  l.resource_version = Param(req, "resourceVersion");
  l.resource_version_match = Param(req, "resourceVersionMatch");
  int64_t limit = 0;
  if (absl::SimpleAtoi(Param(req, "limit"), &limit)) l.limit = limit;
  return l;
}

absl::StatusOr<DeleteRequest> DeleteRequestFrom(const httplib::Request& req) {
  DeleteRequest d;
  if (!req.body.empty()) {
    ASSIGN_OR_RETURN(Json body, ParseBody(req));
    if (!body.is_object()) return kube::BadRequestError("DeleteOptions must be a JSON object");
    if (auto p = body.find("propagationPolicy"); p != body.end() && p->is_string()) {
      d.propagation_policy = p->get<std::string>();
    }
    if (auto o = body.find("orphanDependents"); o != body.end() && o->is_boolean()) {
      d.propagation_policy = o->get<bool>() ? "Orphan" : "Background";
    }
    if (const Json* uid = kube::FindPath(body, "preconditions.uid"); uid && uid->is_string()) {
      d.precondition_uid = uid->get<std::string>();
    }
    if (const Json* rv = kube::FindPath(body, "preconditions.resourceVersion"); rv && rv->is_string()) {
      d.precondition_resource_version = rv->get<std::string>();
    }
    if (auto dry = body.find("dryRun"); dry != body.end() && dry->is_array()) {
      d.dry_run = std::find(dry->begin(), dry->end(), Json("All")) != dry->end();
    }
  }
  if (std::string p = Param(req, "propagationPolicy"); !p.empty()) d.propagation_policy = p;
  if (std::string o = Param(req, "orphanDependents"); !o.empty()) {
    d.propagation_policy = o == "true" ? "Orphan" : "Background";
  }
  if (Param(req, "dryRun") == "All") d.dry_run = true;
  return d;
}

absl::StatusOr<MutateFn> PatchFunction(const httplib::Request& req, const ResourceType& type,
                                       const std::string& api_version) {
  std::string media = MediaType(req);
  Json patch = Json::parse(req.body, nullptr, false);
  if (media == "application/apply-patch+yaml" || media == "application/apply-patch+cbor") {
    return kube::MakeError(
        "UnsupportedMediaType",
        "server-side apply is not supported by devapiserver (a development server); use "
        "client-side `kubectl apply` (without --server-side), merge patch or update");
  }
  if (patch.is_discarded()) return kube::BadRequestError("the patch is not valid JSON");
  if (media == "application/merge-patch+json") {
    return MutateFn([patch, api_version](const Json& current) -> absl::StatusOr<Json> {
      Json base = current;
      base["apiVersion"] = api_version;
      return ApplyMergePatch(base, patch);
    });
  }
  if (media == "application/json-patch+json") {
    return MutateFn([patch, api_version](const Json& current) -> absl::StatusOr<Json> {
      Json base = current;
      base["apiVersion"] = api_version;
      return ApplyJsonPatch(base, patch);
    });
  }
  if (media == "application/strategic-merge-patch+json") {
    if (!type.builtin) {
      return kube::MakeError(
          "UnsupportedMediaType",
          absl::StrCat("the body of the request was in an unknown format - accepted media types "
                       "include: application/json-patch+json, application/merge-patch+json, "
                       "application/apply-patch+yaml (strategic merge patch is not supported for "
                       "custom resources such as ", type.resource.QualifiedName(), ")"));
    }
    return MutateFn([patch, api_version](const Json& current) -> absl::StatusOr<Json> {
      Json base = current;
      base["apiVersion"] = api_version;
      return ApplyStrategicMergePatch(base, patch);
    });
  }
  return kube::MakeError("UnsupportedMediaType",
                         absl::StrCat("the body of the request was in an unknown format - accepted "
                                      "media types include: application/json-patch+json, "
                                      "application/merge-patch+json",
                                      type.builtin ? ", application/strategic-merge-patch+json" : "",
                                      " (got \"", media, "\")"));
}

}  // namespace nereid::devapi
