#include "tools/devapiserver/api_server.h"

#include <algorithm>
#include <regex>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "common/kube/errors.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "httplib.h"
#include "tools/devapiserver/discovery.h"
#include "tools/devapiserver/patch.h"
#include "tools/devapiserver/protobuf.h"
#include "tools/devapiserver/table.h"

namespace nereid::devapi {
namespace {

using kube::Json;

absl::Status BadRequest(std::string_view message) { return kube::MakeError("BadRequest", message); }

absl::Status NotFoundPath() {
  return kube::MakeError("NotFound", "the server could not find the requested resource");
}

// errors.h maps these reasons to 405; the HTTP codes upstream uses are more specific.
int HttpCode(const absl::Status& status) {
  std::string reason = kube::Reason(status);
  if (reason == "UnsupportedMediaType") return 415;
  if (reason == "NotAcceptable") return 406;
  if (reason == "MethodNotAllowed") return 405;
  if (reason == "Timeout") return 504;
  if (reason == "InternalError") return 500;
  return kube::HttpCodeFor(status);
}

Json ErrorJson(const absl::Status& status) {
  Json doc = kube::StatusToJson(status);
  doc["code"] = HttpCode(status);
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

void Reply(httplib::Response& res, int code, const Json& body) {
  res.status = code;
  res.set_content(body.dump(), "application/json");
}

void ReplyError(httplib::Response& res, const absl::Status& status) {
  Reply(res, HttpCode(status), ErrorJson(status));
}

std::string Param(const httplib::Request& req, const char* name) {
  return req.has_param(name) ? req.get_param_value(name) : std::string();
}

bool TrueParam(const httplib::Request& req, const char* name) {
  std::string v = Param(req, name);
  return v == "true" || v == "1";
}

// What a REST path names.
struct Target {
  std::string group;
  std::string version;
  std::string ns;
  std::string resource;
  std::string name;
  std::string subresource;
  bool watch = false;  // legacy /watch/ prefix
};

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
    return BadRequest("the request body is not valid JSON");
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

void AddWarnings(httplib::Response& res, const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings) {
    std::string escaped = w;
    absl::StrReplaceAll({{"\"", "\\\""}}, &escaped);
    res.set_header("Warning", absl::StrCat("299 - \"", escaped, "\""));
  }
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
      text += k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
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

}  // namespace

class ApiServer::Handler {
 public:
  Handler(Store* store, const ApiServerOptions& options, std::function<std::string()> address)
      : store_(store), options_(options), address_(std::move(address)) {}

  void Handle(const httplib::Request& req, httplib::Response& res) {
    absl::Status s = Dispatch(req, res);
    if (!s.ok()) ReplyError(res, s);
    LOG(DEBUG) << "devapiserver: " << req.method << " " << req.target << " -> " << res.status;
  }

 private:
  absl::Status Dispatch(const httplib::Request& req, httplib::Response& res) {
    std::vector<std::string> parts;
    for (absl::string_view p : absl::StrSplit(req.path, '/', absl::SkipEmpty())) {
      parts.emplace_back(p);
    }
    const std::string& path = req.path;
    bool get = req.method == "GET" || req.method == "HEAD";
    if (path == "/healthz" || path == "/readyz" || path == "/livez" ||
        absl::StartsWith(path, "/healthz/") || absl::StartsWith(path, "/readyz/") ||
        absl::StartsWith(path, "/livez/")) {
      if (!get) return MethodNotAllowed(req);
      res.status = 200;
      res.set_content("ok", "text/plain");
      return absl::OkStatus();
    }
    if (path == "/version") {
      if (!get) return MethodNotAllowed(req);
      Reply(res, 200, VersionDocument());
      return absl::OkStatus();
    }
    if (!parts.empty() && parts[0] == "openapi") {
      if (!get) return MethodNotAllowed(req);
      if (parts.size() == 2 && parts[1] == "v3") {
        Reply(res, 200, OpenApiV3Index(store_->registry()));
        return absl::OkStatus();
      }
      if (parts.size() >= 4 && parts[1] == "v3") {
        Json doc = parts[2] == "api" && parts.size() == 4
                       ? OpenApiV3Document(store_->registry(), "", parts[3])
                   : parts[2] == "apis" && parts.size() == 5
                       ? OpenApiV3Document(store_->registry(), parts[3], parts[4])
                       : Json();
        if (doc.is_null()) return NotFoundPath();
        Reply(res, 200, doc);
        return absl::OkStatus();
      }
      return NotFoundPath();
    }
    if (parts.size() == 1 && parts[0] == "api") {
      if (!get) return MethodNotAllowed(req);
      Reply(res, 200, ApiVersions(address_()));
      return absl::OkStatus();
    }
    if (parts.size() == 1 && parts[0] == "apis") {
      if (!get) return MethodNotAllowed(req);
      Reply(res, 200, ApiGroupList(store_->registry()));
      return absl::OkStatus();
    }
    if (parts.size() == 2 && parts[0] == "apis") {
      if (!get) return MethodNotAllowed(req);
      Json doc = ApiGroup(store_->registry(), parts[1]);
      if (doc.is_null()) return NotFoundPath();
      Reply(res, 200, doc);
      return absl::OkStatus();
    }
    if ((parts.size() == 2 && parts[0] == "api") || (parts.size() == 3 && parts[0] == "apis")) {
      if (!get) return MethodNotAllowed(req);
      Json doc = parts[0] == "api" ? ApiResourceList(store_->registry(), "", parts[1])
                                   : ApiResourceList(store_->registry(), parts[1], parts[2]);
      if (doc.is_null()) return NotFoundPath();
      Reply(res, 200, doc);
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Target target, ParseTarget(parts));
    ResourceTypePtr type = store_->registry().Find(target.group, target.version, target.resource);
    if (type == nullptr) return NotFoundPath();
    if (!type->resource.namespaced && !target.ns.empty()) return NotFoundPath();
    if (!target.subresource.empty()) {
      bool ok = (target.subresource == "status" && type->has_status) ||
                (target.subresource == "scale" && type->scale.has_value());
      if (!ok) return NotFoundPath();
    }
    return Resource(req, res, *type, target);
  }

  absl::Status MethodNotAllowed(const httplib::Request& req) {
    return kube::MakeError("MethodNotAllowed",
                           absl::StrCat("the server does not allow this method on the requested "
                                        "resource (", req.method, " ", req.path, ")"));
  }

  std::string ApiVersionOf(const ResourceType& type, const Target& t) {
    return type.AtVersion(t.version).ApiVersion();
  }

  Json Out(Json obj, const std::string& api_version) {
    obj["apiVersion"] = api_version;
    return obj;
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

  TableOptions TableOptionsFrom(const httplib::Request& req) {
    TableOptions o;
    o.now = options_.clock->Now();
    std::string include = Param(req, "includeObject");
    if (!include.empty()) o.include_object = include;
    return o;
  }

  absl::Status Resource(const httplib::Request& req, httplib::Response& res, const ResourceType& type,
                        const Target& t) {
    const std::string api_version = ApiVersionOf(type, t);
    const std::string& m = req.method;
    bool collection = t.name.empty();
    if (t.watch || TrueParam(req, "watch")) {
      if (m != "GET") return MethodNotAllowed(req);
      Target watch_target = t;
      ListRequest l = ListRequestFrom(req, t);
      if (!collection) {
        // /watch/.../<name>: a watch of one object.
        l.field_selector = l.field_selector.empty()
                               ? absl::StrCat("metadata.name=", t.name)
                               : absl::StrCat(l.field_selector, ",metadata.name=", t.name);
      }
      return Watch(req, res, type, l, api_version);
    }
    if (collection) {
      if (!t.subresource.empty()) return NotFoundPath();
      if (m == "GET" || m == "HEAD") return List(req, res, type, t, api_version);
      if (m == "POST") {
        if (type.resource.namespaced && t.ns.empty()) return NotFoundPath();
        ASSIGN_OR_RETURN(Json body, ParseBody(req));
        std::vector<std::string> warnings;
        ASSIGN_OR_RETURN(Json created,
                         store_->Create(type, t.ns, Out(std::move(body), api_version),
                                        WriteOptionsFrom(req, &warnings)));
        AddWarnings(res, warnings);
        Reply(res, 201, Out(std::move(created), api_version));
        return absl::OkStatus();
      }
      return MethodNotAllowed(req);
    }
    if (type.resource.namespaced && t.ns.empty()) return NotFoundPath();
    if (t.subresource == "scale") return Scale(req, res, type, t);
    if (m == "GET" || m == "HEAD") {
      ASSIGN_OR_RETURN(Json obj, store_->Get(type, t.ns, t.name));
      if (WantsTable(req)) {
        Reply(res, 200, BuildTable(type, {Out(std::move(obj), api_version)}, TableOptionsFrom(req)));
      } else {
        Reply(res, 200, Out(std::move(obj), api_version));
      }
      return absl::OkStatus();
    }
    std::vector<std::string> warnings;
    if (m == "PUT") {
      ASSIGN_OR_RETURN(Json body, ParseBody(req));
      ASSIGN_OR_RETURN(Json updated,
                       store_->Update(type, t.ns, t.name, Out(std::move(body), api_version),
                                      t.subresource, WriteOptionsFrom(req, &warnings)));
      AddWarnings(res, warnings);
      Reply(res, 200, Out(std::move(updated), api_version));
      return absl::OkStatus();
    }
    if (m == "PATCH") {
      ASSIGN_OR_RETURN(MutateFn mutate, PatchFunction(req, type, api_version));
      ASSIGN_OR_RETURN(Json patched, store_->Patch(type, t.ns, t.name, mutate, t.subresource,
                                                   WriteOptionsFrom(req, &warnings)));
      AddWarnings(res, warnings);
      Reply(res, 200, Out(std::move(patched), api_version));
      return absl::OkStatus();
    }
    if (m == "DELETE") {
      if (!t.subresource.empty()) return MethodNotAllowed(req);
      ASSIGN_OR_RETURN(DeleteRequest d, DeleteRequestFrom(req));
      ASSIGN_OR_RETURN(DeleteResult result, store_->Delete(type, t.ns, t.name, d));
      // Upstream answers 200 with the object both when it is gone and when finalizers keep it.
      Reply(res, 200, Out(std::move(result.object), api_version));
      return absl::OkStatus();
    }
    return MethodNotAllowed(req);
  }

  absl::StatusOr<DeleteRequest> DeleteRequestFrom(const httplib::Request& req) {
    DeleteRequest d;
    if (!req.body.empty()) {
      ASSIGN_OR_RETURN(Json body, ParseBody(req));
      if (!body.is_object()) return BadRequest("DeleteOptions must be a JSON object");
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
    if (patch.is_discarded()) return BadRequest("the patch is not valid JSON");
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

  absl::Status Scale(const httplib::Request& req, httplib::Response& res, const ResourceType& type,
                     const Target& t) {
    const std::string& m = req.method;
    if (m == "GET") {
      ASSIGN_OR_RETURN(Json obj, store_->Get(type, t.ns, t.name));
      Reply(res, 200, ScaleOf(type, obj));
      return absl::OkStatus();
    }
    if (m != "PUT" && m != "PATCH") return MethodNotAllowed(req);
    Json body = Json::parse(req.body, nullptr, false);
    if (body.is_discarded()) return BadRequest("the request body is not valid JSON");
    std::string media = MediaType(req);
    ResourceType copy = type;
    MutateFn mutate = [&, copy](const Json& current) -> absl::StatusOr<Json> {
      Json scale = ScaleOf(copy, current);
      if (m == "PUT") {
        scale = body;
      } else if (media == "application/json-patch+json") {
        ASSIGN_OR_RETURN(scale, ApplyJsonPatch(scale, body));
      } else {
        ASSIGN_OR_RETURN(scale, ApplyMergePatch(scale, body));
      }
      const Json* replicas = kube::FindPath(scale, "spec.replicas");
      if (replicas == nullptr || !replicas->is_number_integer() || replicas->get<int64_t>() < 0) {
        return kube::InvalidError("Scale", t.name,
                                  {{"FieldValueInvalid", "must be greater than or equal to 0",
                                    "spec.replicas"}});
      }
      Json next = current;
      SetPath(next, copy.scale->spec_replicas_path, *replicas);
      std::string rv = kube::StringAt(scale, "metadata.resourceVersion");
      next["metadata"]["resourceVersion"] = rv.empty() ? kube::ResourceVersion(current) : rv;
      return next;
    };
    std::vector<std::string> warnings;
    ASSIGN_OR_RETURN(Json updated, store_->Patch(type, t.ns, t.name, mutate, "",
                                                 WriteOptionsFrom(req, &warnings)));
    Reply(res, 200, ScaleOf(type, updated));
    return absl::OkStatus();
  }

  absl::Status List(const httplib::Request& req, httplib::Response& res, const ResourceType& type,
                    const Target& t, const std::string& api_version) {
    ASSIGN_OR_RETURN(ListResult result, store_->List(type, ListRequestFrom(req, t)));
    Json meta = {{"resourceVersion", std::to_string(result.resource_version)}};
    if (!result.continue_token.empty()) meta["continue"] = result.continue_token;
    if (result.remaining_item_count) meta["remainingItemCount"] = *result.remaining_item_count;
    for (Json& item : result.items) item["apiVersion"] = api_version;
    if (WantsTable(req)) {
      Json table = BuildTable(type, result.items, TableOptionsFrom(req));
      table["metadata"] = meta;
      Reply(res, 200, table);
      return absl::OkStatus();
    }
    Json list = {{"kind", type.resource.kind + "List"},
                 {"apiVersion", api_version},
                 {"metadata", meta},
                 {"items", std::move(result.items)}};
    Reply(res, 200, list);
    return absl::OkStatus();
  }

  absl::Status Watch(const httplib::Request& req, httplib::Response& res, const ResourceType& type,
                     const ListRequest& l, const std::string& api_version) {
    ASSIGN_OR_RETURN(std::shared_ptr<Watcher> watcher, store_->Watch(type, l, api_version));
    WatchSessionOptions o;
    o.allow_bookmarks = TrueParam(req, "allowWatchBookmarks");
    o.bookmark_interval = options_.bookmark_interval;
    o.heartbeat_interval = options_.heartbeat_interval;
    int64_t timeout_seconds = 0;
    absl::Duration timeout = options_.max_watch_timeout;
    if (absl::SimpleAtoi(Param(req, "timeoutSeconds"), &timeout_seconds) && timeout_seconds > 0) {
      timeout = std::min(timeout, absl::Seconds(timeout_seconds));
    }
    o.deadline = options_.clock->Now() + timeout;
    auto session = std::make_shared<WatchSession>(std::move(watcher), options_.clock, o,
                                                  type.resource.kind, api_version);
    bool table = WantsTable(req);
    auto table_options = std::make_shared<TableOptions>(TableOptionsFrom(req));
    ResourceType type_copy = type;
    res.status = 200;
    // The ";stream=watch" parameter (clients ignore it) keeps httplib from gzipping the stream,
    // which would hold events in the compressor instead of flushing each one.
    res.set_chunked_content_provider(
        "application/json;stream=watch",
        [session, table, table_options, type_copy, this](size_t, httplib::DataSink& sink) {
          kube::WatchEvent event;
          WatchSession::Step step = session->Next(&event);
          if (step == WatchSession::Step::kEnd) {
            sink.done();
            return true;
          }
          if (step == WatchSession::Step::kHeartbeat) return sink.write("\n", 1);
          Json object = std::move(event.object);
          if (table && step == WatchSession::Step::kEvent) {
            table_options->now = options_.clock->Now();
            Json t = BuildTable(type_copy, {object}, *table_options);
            table_options->include_column_definitions = false;  // headers with the first only
            t["metadata"] = {{"resourceVersion", kube::ResourceVersion(object)}};
            object = std::move(t);
          }
          Json line = {{"type", std::string(kube::WatchEventTypeName(event.type))},
                       {"object", std::move(object)}};
          std::string text = line.dump() + "\n";
          return sink.write(text.data(), text.size());
        });
    return absl::OkStatus();
  }

  Store* store_;
  const ApiServerOptions& options_;
  std::function<std::string()> address_;
};

ApiServer::ApiServer(Store* store, ApiServerOptions options)
    : store_(store), options_(std::move(options)) {
  if (!options_.tls_cert_file.empty() && !options_.tls_key_file.empty()) {
    server_ = std::make_unique<httplib::SSLServer>(options_.tls_cert_file.c_str(),
                                                   options_.tls_key_file.c_str());
  } else {
    server_ = std::make_unique<httplib::Server>();
  }
  handler_ = std::make_unique<Handler>(store_, options_, [this] {
    return absl::StrCat(options_.host, ":", port_);
  });
  size_t threads = std::max<size_t>(options_.threads, 8);
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server_->set_keep_alive_timeout(5);
  server_->set_read_timeout(30);
  server_->set_write_timeout(30);
  server_->set_payload_max_length(16u << 20);
  auto handle = [this](const httplib::Request& req, httplib::Response& res) {
    handler_->Handle(req, res);
  };
  const char* all = "/.*";
  server_->Get(all, handle);
  server_->Post(all, handle);
  server_->Put(all, handle);
  server_->Patch(all, handle);
  server_->Delete(all, handle);
  server_->Options(all, handle);
  server_->set_exception_handler([](const httplib::Request& req, httplib::Response& res,
                                    std::exception_ptr ep) {
    std::string what = "unknown error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    LOG(ERROR) << "devapiserver: " << req.method << " " << req.path << ": " << what;
    ReplyError(res, kube::MakeError("InternalError", absl::StrCat("internal error: ", what)));
  });
}

ApiServer::~ApiServer() { Stop(); }

absl::StatusOr<int> ApiServer::Bind() {
  if (!server_->is_valid()) {
    return absl::InvalidArgumentError("could not set up the server (TLS certificate or key unreadable?)");
  }
  if (options_.port == 0) {
    port_ = server_->bind_to_any_port(options_.host.c_str());
  } else {
    port_ = server_->bind_to_port(options_.host.c_str(), options_.port) ? options_.port : -1;
  }
  if (port_ <= 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options_.host, ":", options_.port));
  }
  return port_;
}

absl::Status ApiServer::Run() {
  if (!server_->listen_after_bind()) return absl::InternalError("the HTTP listener failed");
  return absl::OkStatus();
}

void ApiServer::Stop() {
  store_->Shutdown();
  if (server_ != nullptr) server_->stop();
}

bool ApiServer::running() const { return server_->is_running(); }

std::string ApiServer::url() const {
  bool tls = !options_.tls_cert_file.empty() && !options_.tls_key_file.empty();
  std::string host = options_.host.find(':') != std::string::npos ? absl::StrCat("[", options_.host, "]")
                                                                   : options_.host;
  return absl::StrCat(tls ? "https://" : "http://", host, ":", port_);
}

}  // namespace nereid::devapi
