#include "common/kube/rest_client.h"

#include <csignal>
#include <chrono>
#include <mutex>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/kube/errors.h"
#include "common/kube/http_transport.h"
#include "common/kube/http_watch_stream.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"

#ifndef NEREID_VERSION
#define NEREID_VERSION "dev"
#endif

namespace nereid::kube {
namespace {

void AppendQuery(std::string* path, std::string_view key, std::string_view value) {
  path->push_back(path->find('?') == std::string::npos ? '?' : '&');
  path->append(EncodeQueryComponent(key));
  path->push_back('=');
  path->append(EncodeQueryComponent(value));
}

std::string ContentTypeFor(PatchType type) {
  switch (type) {
    case PatchType::kMerge: return "application/merge-patch+json";
    case PatchType::kJson: return "application/json-patch+json";
    case PatchType::kStrategicMerge: return "application/strategic-merge-patch+json";
  }
  return "application/merge-patch+json";
}

bool IsIdempotent(std::string_view method) { return method == "GET" || method == "HEAD"; }

// Lists of built-in kinds come without apiVersion/kind on their items; fill them in so every
// object a caller sees is self-describing, as client-go's unstructured lists are.
void FillTypeMeta(const Resource& resource, Json* object) {
  if (!object->is_object()) return;
  if (!object->contains("apiVersion")) (*object)["apiVersion"] = resource.ApiVersion();
  if (!object->contains("kind") && !resource.kind.empty()) (*object)["kind"] = resource.kind;
}

absl::Status RequireName(std::string_view name, std::string_view what) {
  if (name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(ToAbsl(what), ": resource name may not be empty"));
  }
  return absl::OkStatus();
}

void IgnoreSigpipeOnce() {
  // A write on a connection the server already closed must fail with EPIPE, not kill the process
  // (OpenSSL writes with write(2), which raises SIGPIPE). Every long-running client does this.
  static std::once_flag once;
  std::call_once(once, [] { std::signal(SIGPIPE, SIG_IGN); });
}

}  // namespace

std::string EncodeQueryComponent(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

RestClient::RestClient(KubeConfig config, Options options, std::unique_ptr<HttpTransport> transport)
    : config_(std::move(config)),
      options_(std::move(options)),
      transport_(std::move(transport)),
      token_(config_.token_file, options_.token_recheck_interval, options_.clock,
             config_.bearer_token),
      limiter_(options_.qps > 0 ? options_.qps : 1e9, options_.qps > 0 ? options_.burst : 1 << 30,
               options_.clock) {}

absl::StatusOr<std::unique_ptr<RestClient>> RestClient::Create(const KubeConfig& config,
                                                               Options options) {
  if (options.clock == nullptr) options.clock = Clock::Real();
  if (options.user_agent.empty()) options.user_agent = "nereid/" NEREID_VERSION;
  if (options.timeout <= absl::ZeroDuration() || options.connect_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("RestClient: timeouts must be positive");
  }
  HttpTransport::Options transport_options;
  transport_options.connect_timeout = options.connect_timeout;
  transport_options.io_timeout = options.timeout;
  transport_options.max_idle_clients = options.max_idle_connections;
  ASSIGN_OR_RETURN(std::unique_ptr<HttpTransport> transport,
                   HttpTransport::Create(config, transport_options));
  IgnoreSigpipeOnce();
  LOG(INFO) << "kube client: " << config.DebugString();
  return std::unique_ptr<RestClient>(
      new RestClient(config, std::move(options), std::move(transport)));
}

RestClient::~RestClient() = default;

std::string RestClient::Authorization() {
  if (std::string token = token_.Token(); !token.empty()) return absl::StrCat("Bearer ", token);
  if (!config_.username.empty()) {
    return absl::StrCat("Basic ",
                        absl::Base64Escape(absl::StrCat(config_.username, ":", config_.password)));
  }
  return "";
}

void RestClient::Throttle(std::string_view what) {
  const absl::Duration wait = limiter_.Reserve();
  if (wait <= absl::ZeroDuration()) return;
  if (options_.observer != nullptr) options_.observer->OnThrottled(wait);
  // As client-go: a long client-side wait is worth a line, it explains slow reconciles.
  if (wait >= absl::Seconds(1)) {
    LOG(INFO) << "waiting " << wait << " for client-side throttling (qps " << options_.qps
              << ", burst " << options_.burst << ") before " << what;
  }
  options_.clock->SleepFor(wait);
}

absl::StatusOr<RestClient::Response> RestClient::SendOnce(const Request& request,
                                                         bool fresh_connection,
                                                         bool* reused_connection_broke) {
  *reused_connection_broke = false;
  bool reused = false;
  ASSIGN_OR_RETURN(std::unique_ptr<httplib::ClientImpl> client,
                   transport_->Borrow(fresh_connection, &reused));
  httplib::Request req;
  req.method = request.method;
  req.path = transport_->address().base_path + request.path;
  req.headers = {{"Accept", "application/json"}, {"User-Agent", options_.user_agent}};
  if (std::string auth = Authorization(); !auth.empty()) req.headers.emplace("Authorization", auth);
  if (!request.content_type.empty()) {
    req.headers.emplace("Content-Type", request.content_type);
    req.body = request.body;
  }
  // Socket waits are bounded by the io timeout; the whole transfer by this deadline, checked as
  // the body arrives (a server trickling bytes cannot hold a caller forever).
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::microseconds(absl::ToInt64Microseconds(options_.timeout));
  req.progress = [deadline](uint64_t, uint64_t) {
    return std::chrono::steady_clock::now() < deadline;
  };
  HttpTransport::ResetLastVerifyError();
  httplib::Result result = client->send(req);
  if (!result) {
    // httplib reports a timed-out read like any other read error; the clock tells them apart.
    const bool timed_out =
        std::chrono::steady_clock::now() >= deadline - std::chrono::milliseconds(50);
    *reused_connection_broke = reused && !timed_out &&
                               (result.error() == httplib::Error::Read ||
                                result.error() == httplib::Error::Write);
    // The connection is in an unknown state; it is not returned to the pool.
    return transport_->TransportError(result.error(), timed_out);
  }
  Response response;
  response.status = result->status;
  response.body = std::move(result->body);
  response.retry_after = result->get_header_value("Retry-After");
  transport_->Release(std::move(client));
  return response;
}

absl::StatusOr<RestClient::Response> RestClient::Send(const Request& request) {
  bool fresh_connection = false;
  for (int attempt = 0;; ++attempt) {
    Throttle(absl::StrCat(request.method, " ", request.path));
    bool reused_connection_broke = false;
    const absl::Time start = absl::Now();  // Network latency is real time, not the Clock's.
    absl::StatusOr<Response> response = SendOnce(request, fresh_connection,
                                                 &reused_connection_broke);
    fresh_connection = false;
    if (options_.observer != nullptr) {
      options_.observer->OnResponse(request.method, response.ok() ? response->status : 0);
    }
    const bool retries_left = attempt < options_.max_retries;
    if (!response.ok()) {
      // A pooled keep-alive connection the server closed just as we used it: a GET is safe to
      // send again at once on a new connection. Other transport errors (refused, reset on a new
      // connection, timeout, TLS) go back to the caller, whose own backoff applies.
      if (retries_left && reused_connection_broke && IsIdempotent(request.method)) {
        LOG(DEBUG) << request.method << " " << request.path << ": " << response.status().message()
                   << " on a reused connection; retrying on a new one";
        fresh_connection = true;
        continue;
      }
      LOG(DEBUG) << request.method << " " << request.path << ": " << response.status().message();
      return response.status();
    }
    LOG(DEBUG) << request.method << " " << request.path << " -> " << response->status << " ("
               << absl::Now() - start << ")";
    const bool retryable_code = response->status == 429 || response->status >= 500;
    int64_t retry_seconds = 0;
    if (retries_left && retryable_code && !response->retry_after.empty() &&
        absl::SimpleAtoi(response->retry_after, &retry_seconds) && retry_seconds >= 0) {
      const absl::Duration wait = std::min(absl::Seconds(retry_seconds), options_.max_retry_after);
      LOG(INFO) << request.method << " " << request.path << ": HTTP " << response->status
                << ", server asked to retry after " << retry_seconds << "s (attempt "
                << attempt + 1 << " of " << options_.max_retries << ")";
      options_.clock->SleepFor(wait);
      continue;
    }
    return response;
  }
}

absl::StatusOr<Json> RestClient::Call(const Request& request) {
  ASSIGN_OR_RETURN(Response response, Send(request));
  if (response.status < 200 || response.status > 299) {
    return StatusFromResponse(response.status, response.body, response.retry_after);
  }
  Json doc = Json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return absl::InternalError(absl::StrCat(request.method, " ", request.path, ": HTTP ",
                                            response.status, " with a body that is not JSON"));
  }
  return doc;
}

absl::StatusOr<Json> RestClient::GetPath(std::string_view path) {
  return Call({"GET", std::string(path), "", ""});
}

absl::StatusOr<Json> RestClient::Get(const Resource& resource, std::string_view ns,
                                     std::string_view name) {
  RETURN_IF_ERROR(RequireName(name, "get"));
  ASSIGN_OR_RETURN(Json object, Call({"GET", resource.ObjectPath(ns, name), "", ""}));
  FillTypeMeta(resource, &object);
  return object;
}

absl::StatusOr<ObjectList> RestClient::List(const Resource& resource, std::string_view ns,
                                            const ListOptions& options) {
  std::string path = resource.CollectionPath(ns);
  if (!options.label_selector.empty()) AppendQuery(&path, "labelSelector", options.label_selector);
  if (!options.field_selector.empty()) AppendQuery(&path, "fieldSelector", options.field_selector);
  if (options.limit > 0) AppendQuery(&path, "limit", std::to_string(options.limit));
  if (!options.continue_token.empty()) AppendQuery(&path, "continue", options.continue_token);
  if (!options.resource_version.empty()) {
    AppendQuery(&path, "resourceVersion", options.resource_version);
  }
  ASSIGN_OR_RETURN(Json doc, Call({"GET", path, "", ""}));
  ObjectList list;
  if (const Json* rv = FindPath(doc, "metadata.resourceVersion"); rv && rv->is_string()) {
    list.resource_version = rv->get<std::string>();
  }
  if (const Json* token = FindPath(doc, "metadata.continue"); token && token->is_string()) {
    list.continue_token = token->get<std::string>();
  }
  auto items = doc.find("items");
  if (items != doc.end() && items->is_array()) {
    list.items.reserve(items->size());
    for (Json& item : *items) {
      FillTypeMeta(resource, &item);
      list.items.push_back(std::move(item));
    }
  } else if (items != doc.end() && !items->is_null()) {
    return absl::InternalError(
        absl::StrCat("list ", resource.QualifiedName(), ": items is not an array"));
  }
  return list;
}

absl::StatusOr<Json> RestClient::Create(const Resource& resource, std::string_view ns,
                                        const Json& object) {
  if (!object.is_object()) return absl::InvalidArgumentError("create: object is not a JSON object");
  std::string target_ns(ns);
  if (resource.namespaced) {
    const std::string object_ns = Namespace(object);
    if (target_ns.empty()) target_ns = object_ns;
    if (target_ns.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("create ", resource.QualifiedName(), ": no namespace given"));
    }
    if (!object_ns.empty() && object_ns != target_ns) {
      return absl::InvalidArgumentError(absl::StrCat(
          "create ", resource.QualifiedName(), ": object namespace ", object_ns,
          " does not match ", target_ns));
    }
  }
  Json body = object;
  FillTypeMeta(resource, &body);
  ASSIGN_OR_RETURN(Json created, Call({"POST", resource.CollectionPath(target_ns), body.dump(),
                                       "application/json"}));
  FillTypeMeta(resource, &created);
  return created;
}

absl::StatusOr<Json> RestClient::Put(const Resource& resource, const Json& object,
                                     std::string_view subresource) {
  if (!object.is_object()) return absl::InvalidArgumentError("update: object is not a JSON object");
  const std::string name = Name(object);
  RETURN_IF_ERROR(RequireName(name, "update"));
  const std::string ns = resource.namespaced ? Namespace(object) : "";
  if (resource.namespaced && ns.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "update ", resource.QualifiedName(), " ", name, ": object has no metadata.namespace"));
  }
  Json body = object;
  FillTypeMeta(resource, &body);
  ASSIGN_OR_RETURN(Json updated, Call({"PUT", resource.ObjectPath(ns, name, subresource),
                                       body.dump(), "application/json"}));
  FillTypeMeta(resource, &updated);
  return updated;
}

absl::StatusOr<Json> RestClient::Update(const Resource& resource, const Json& object) {
  return Put(resource, object, "");
}

absl::StatusOr<Json> RestClient::UpdateStatus(const Resource& resource, const Json& object) {
  return Put(resource, object, "status");
}

absl::StatusOr<Json> RestClient::Patch(const Resource& resource, std::string_view ns,
                                       std::string_view name, PatchType type, const Json& patch,
                                       std::string_view subresource) {
  RETURN_IF_ERROR(RequireName(name, "patch"));
  if (type == PatchType::kJson ? !patch.is_array() : !patch.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "patch ", resource.QualifiedName(), " ", ToAbsl(name),
        type == PatchType::kJson ? ": a JSON patch must be an array of operations"
                                 : ": a merge patch must be a JSON object"));
  }
  ASSIGN_OR_RETURN(Json patched, Call({"PATCH", resource.ObjectPath(ns, name, subresource),
                                       patch.dump(), ContentTypeFor(type)}));
  FillTypeMeta(resource, &patched);
  return patched;
}

absl::Status RestClient::Delete(const Resource& resource, std::string_view ns,
                                std::string_view name, const DeleteOptions& options) {
  RETURN_IF_ERROR(RequireName(name, "delete"));
  Json body = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}};
  if (options.propagation_policy) body["propagationPolicy"] = *options.propagation_policy;
  if (options.grace_period_seconds) body["gracePeriodSeconds"] = *options.grace_period_seconds;
  if (options.precondition_uid || options.precondition_resource_version) {
    Json preconditions = Json::object();
    if (options.precondition_uid) preconditions["uid"] = *options.precondition_uid;
    if (options.precondition_resource_version) {
      preconditions["resourceVersion"] = *options.precondition_resource_version;
    }
    body["preconditions"] = std::move(preconditions);
  }
  // The answer is the deleted object or a Status; only the code matters (some servers send none).
  ASSIGN_OR_RETURN(Response response, Send({"DELETE", resource.ObjectPath(ns, name), body.dump(),
                                            "application/json"}));
  if (response.status >= 200 && response.status <= 299) return absl::OkStatus();
  return StatusFromResponse(response.status, response.body, response.retry_after);
}

absl::StatusOr<std::unique_ptr<WatchStream>> RestClient::Watch(const Resource& resource,
                                                               std::string_view ns,
                                                               const ListOptions& options) {
  std::string path = transport_->address().base_path + resource.CollectionPath(ns);
  AppendQuery(&path, "watch", "true");
  if (!options.resource_version.empty()) {
    AppendQuery(&path, "resourceVersion", options.resource_version);
  }
  if (options.allow_watch_bookmarks) AppendQuery(&path, "allowWatchBookmarks", "true");
  if (options.timeout_seconds) {
    AppendQuery(&path, "timeoutSeconds", std::to_string(*options.timeout_seconds));
  }
  if (!options.label_selector.empty()) AppendQuery(&path, "labelSelector", options.label_selector);
  if (!options.field_selector.empty()) AppendQuery(&path, "fieldSelector", options.field_selector);

  ASSIGN_OR_RETURN(std::unique_ptr<httplib::ClientImpl> client, transport_->NewClient());
  // The server may legitimately stay silent for the whole watch; only a read that outlasts the
  // watch itself (or the idle limit) means the peer is gone.
  const absl::Duration read_timeout =
      options.timeout_seconds ? absl::Seconds(*options.timeout_seconds) + absl::Seconds(30)
                              : options_.watch_idle_timeout;
  client->set_read_timeout(std::chrono::microseconds(absl::ToInt64Microseconds(read_timeout)));

  Throttle(absl::StrCat("watch ", path));
  httplib::Headers headers = {{"Accept", "application/json"}, {"User-Agent", options_.user_agent}};
  if (std::string auth = Authorization(); !auth.empty()) headers.emplace("Authorization", auth);
  HttpWatchStream::Options watch_options;
  watch_options.max_event_bytes = options_.max_watch_event_bytes;
  watch_options.resource = resource;
  watch_options.header_timeout = options_.timeout;
  watch_options.describe_error = [transport = transport_.get()](httplib::Error error) {
    return transport->TransportError(error, /*timed_out=*/false);
  };
  absl::StatusOr<std::unique_ptr<HttpWatchStream>> stream =
      HttpWatchStream::Start(std::move(client), path, std::move(headers), std::move(watch_options));
  if (!stream.ok()) {
    LOG(DEBUG) << "watch " << resource.QualifiedName() << " " << path << ": "
               << stream.status().message();
    return stream.status();
  }
  return std::unique_ptr<WatchStream>(*std::move(stream));
}

absl::StatusOr<bool> RestClient::IsServed(const Resource& resource) {
  absl::StatusOr<Json> discovery = Call({"GET", resource.GroupVersionPath(), "", ""});
  if (absl::IsNotFound(discovery.status())) return false;
  if (!discovery.ok()) return discovery.status();
  auto resources = discovery->find("resources");
  if (resources == discovery->end() || !resources->is_array()) return false;
  for (const Json& entry : *resources) {
    if (entry.is_object() && StringAt(entry, "name") == resource.resource) return true;
  }
  return false;
}

}  // namespace nereid::kube
