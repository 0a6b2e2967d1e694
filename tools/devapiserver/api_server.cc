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
#include "common/http/httplib_backlog.h"
#include "common/kube/errors.h"
#include "common/kube/object.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "httplib.h"
#include "tools/devapiserver/discovery.h"
#include "tools/devapiserver/fault_injector.h"
#include "tools/devapiserver/flags.h"
#include "tools/devapiserver/patch.h"
#include "tools/devapiserver/request.h"
#include "tools/devapiserver/request_counter.h"
#include "tools/devapiserver/table.h"

namespace nereid::devapi {
namespace {

using kube::Json;

void Reply(httplib::Response& res, int code, const Json& body) {
  res.status = code;
  res.set_content(kube::DumpCompact(body), "application/json");
}

void ReplyError(httplib::Response& res, const absl::Status& status) {
  Reply(res, kube::HttpCodeFor(status), ErrorJson(status));
}

void AddWarnings(httplib::Response& res, const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings) {
    std::string escaped = w;
    absl::StrReplaceAll({{"\"", "\\\""}}, &escaped);
    res.set_header("Warning", absl::StrCat("299 - \"", escaped, "\""));
  }
}

std::vector<std::string> PathParts(const std::string& path) {
  std::vector<std::string> parts;
  for (absl::string_view p : absl::StrSplit(path, '/', absl::SkipEmpty())) parts.emplace_back(p);
  return parts;
}

constexpr char kDebugRequestsPath[] = "/debug/requests";
constexpr char kDebugFaultsPath[] = "/debug/faults";

// The debug endpoints answer loopback clients only (tests and benchmarks on this machine).
absl::Status RequireLoopback(const httplib::Request& req) {
  std::string peer = req.remote_addr;
  if (absl::StartsWith(peer, "::ffff:")) peer = peer.substr(7);  // v4-mapped
  if (IsLoopback(peer)) return absl::OkStatus();
  return kube::MakeError("Forbidden", absl::StrCat(req.path, " is served to loopback clients only"));
}

absl::Status OnlyMethods(const httplib::Request& req, const char* allowed) {
  return kube::MakeError("MethodNotAllowed",
                         absl::StrCat(req.method, " ", req.path, ": only ", allowed));
}

// The request counts: GET reads them, DELETE resets them. Not counted themselves.
absl::Status DebugRequests(const httplib::Request& req, httplib::Response& res,
                           RequestCounter& counter) {
  RETURN_IF_ERROR(RequireLoopback(req));
  if (req.method == "GET") {
    Reply(res, 200, counter.Snapshot());
  } else if (req.method == "DELETE") {
    counter.Reset();
    Reply(res, 200, counter.Snapshot());
  } else {
    return OnlyMethods(req, "GET and DELETE");
  }
  return absl::OkStatus();
}

// Injected faults (--enable-debug-faults): GET shows the rule, DELETE clears it, POST sets one
// (fault_injector.h) and, with {"expireWatches": true}, ends every open watch with 410 Expired.
absl::Status DebugFaults(const httplib::Request& req, httplib::Response& res,
                         FaultInjector& faults, Store& store, Clock* clock) {
  RETURN_IF_ERROR(RequireLoopback(req));
  if (req.method == "DELETE") {
    faults.Clear();
  } else if (req.method == "POST") {
    Json body = Json::parse(req.body, nullptr, false);
    if (!body.is_object()) return kube::BadRequestError("the body must be a JSON object");
    const bool expire = body.value("expireWatches", false);
    body.erase("expireWatches");
    if (!body.empty()) {
      absl::StatusOr<FaultRule> rule = FaultInjector::RuleFromJson(body, clock->Now());
      if (!rule.ok()) return kube::BadRequestError(std::string(rule.status().message()));
      faults.Set(*std::move(rule));
    }
    if (expire) store.ExpireWatches();
  } else if (req.method != "GET") {
    return OnlyMethods(req, "GET, POST and DELETE");
  }
  Reply(res, 200, faults.Snapshot());
  return absl::OkStatus();
}

}  // namespace

class ApiServer::Handler {
 public:
  Handler(Store* store, const ApiServerOptions& options, std::function<std::string()> address,
          RequestCounter* requests)
      : store_(store),
        options_(options),
        address_(std::move(address)),
        requests_(requests),
        faults_(options.clock) {}

  void Handle(const httplib::Request& req, httplib::Response& res) {
    absl::Status s;
    if (req.path == kDebugRequestsPath) {
      s = DebugRequests(req, res, *requests_);
    } else if (req.path == kDebugFaultsPath && options_.debug_faults) {
      s = DebugFaults(req, res, faults_, *store_, options_.clock);
    } else {
      const RequestKind kind = Classify(req);
      requests_->Record(kind, req.get_header_value("User-Agent"));
      s = AnswerInjectedFault(req, kind, res) ? absl::OkStatus() : Dispatch(req, res);
    }
    if (!s.ok()) ReplyError(res, s);
    LOG(DEBUG) << "devapiserver: " << req.method << " " << req.target << " -> " << res.status;
  }

 private:
  static RequestKind Classify(const httplib::Request& req) {
    return ClassifyRequest(req.method, PathParts(req.path), TrueParam(req, "watch"));
  }

  // Answers `req` (of `kind`) with the injected fault, if one applies.
  bool AnswerInjectedFault(const httplib::Request& req, const RequestKind& kind,
                           httplib::Response& res) {
    if (!options_.debug_faults) return false;
    std::optional<InjectedFault> fault =
        faults_.Intercept(req.get_header_value("User-Agent"), kind);
    if (!fault.has_value()) return false;
    const std::string retry_after =
        fault->retry_after_seconds >= 0 ? std::to_string(fault->retry_after_seconds) : "";
    absl::Status status = kube::StatusFromResponse(fault->code, "", retry_after);
    Reply(res, fault->code, ErrorJson(status));
    if (!retry_after.empty()) res.set_header("Retry-After", retry_after);
    return true;
  }

  absl::Status Dispatch(const httplib::Request& req, httplib::Response& res) {
    const std::vector<std::string> parts = PathParts(req.path);
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
    if (obj.is_object()) obj["apiVersion"] = api_version;  // non-objects are refused later
    return obj;
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
    if (body.is_discarded()) return kube::BadRequestError("the request body is not valid JSON");
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
          std::string text = kube::DumpCompact(line) + "\n";
          return sink.write(text.data(), text.size());
        });
    return absl::OkStatus();
  }

  Store* store_;
  const ApiServerOptions& options_;
  std::function<std::string()> address_;
  RequestCounter* requests_;
  FaultInjector faults_;
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
  }, &requests_);
  size_t threads = std::max<size_t>(options_.threads, 8);
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // Headers and body go out in separate writes; without NODELAY, Nagle plus the client's delayed
  // ACK stall every small response by ~40 ms.
  server_->set_tcp_nodelay(true);
  backlog_ = std::make_unique<http::HttplibBacklog>(*server_);
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
  RETURN_IF_ERROR(backlog_->Widen());
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
