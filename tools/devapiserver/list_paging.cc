#include "tools/devapiserver/list_paging.h"

#include <set>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/kube/errors.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"

namespace nereid::devapi {

namespace {

// Where the next page starts: the snapshot's version and the last key returned. Opaque to
// clients (web-safe base64 of a small JSON document).
struct ContinueToken {
  int64_t version = 0;
  std::string start;  // last key returned
};

std::string EncodeContinue(const ContinueToken& token) {
  Json doc = {{"v", "nereid.devapi/1"}, {"rv", token.version}, {"start", token.start}};
  return absl::WebSafeBase64Escape(doc.dump());
}

absl::StatusOr<ContinueToken> DecodeContinue(std::string_view text) {
  std::string raw;
  if (!absl::WebSafeBase64Unescape(ToAbsl(text), &raw)) return kube::BadRequestError("invalid continue token");
  Json doc = Json::parse(raw, nullptr, false);
  if (!doc.is_object() || !doc.contains("rv") || !doc["rv"].is_number_integer() ||
      !doc.contains("start") || !doc["start"].is_string()) {
    return kube::BadRequestError("invalid continue token");
  }
  return ContinueToken{doc["rv"].get<int64_t>(), doc["start"].get<std::string>()};
}

}  // namespace

absl::StatusOr<Selection> MakeSelection(const ResourceType& type, const ListRequest& request) {
  Selection sel;
  sel.storage_key = type.StorageKey();
  sel.ns = type.resource.namespaced ? request.ns : "";
  auto labels = kube::LabelSelector::Parse(request.label_selector);
  if (!labels.ok()) {
    return kube::BadRequestError(absl::StrCat("unable to parse requirement: ", labels.status().message()));
  }
  sel.labels = *labels;
  auto fields = kube::FieldSelector::Parse(request.field_selector);
  if (!fields.ok()) return kube::BadRequestError(absl::StrCat("invalid field selector: ", fields.status().message()));
  ResourceType copy = type;
  sel.getter = [copy](const Json& obj, std::string_view field) { return FieldValue(copy, obj, field); };
  for (const auto& req : fields->requirements()) {
    if (!FieldValue(type, Json::object(), req.field)) {
      return kube::BadRequestError(absl::StrCat("field label not supported: ", req.field));
    }
  }
  sel.fields = *fields;
  return sel;
}

std::optional<std::string> FieldValue(const ResourceType& type, const Json& object,
                                      std::string_view field) {
  if (field == "metadata.name") return kube::Name(object);
  if (field == "metadata.namespace") return kube::Namespace(object);
  const std::string& g = type.resource.group;
  const std::string& r = type.resource.resource;
  static const std::set<std::string_view> kPod = {
      "spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
      "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"};
  static const std::set<std::string_view> kEvent = {
      "involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
      "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
      "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"};
  bool supported = (g.empty() && r == "pods" && kPod.count(field)) ||
                   (g.empty() && r == "events" && kEvent.count(field)) ||
                   (g.empty() && r == "namespaces" && field == "status.phase") ||
                   (g.empty() && r == "nodes" && field == "spec.unschedulable") ||
                   (g.empty() && r == "secrets" && field == "type");
  if (!supported) return std::nullopt;
  if (field == "source") return kube::StringAt(object, "source.component");
  const Json* v = kube::FindPath(object, field);
  if (v == nullptr) {
    if (field == "spec.hostNetwork" || field == "spec.unschedulable") return "false";
    return "";
  }
  if (v->is_string()) return v->get<std::string>();
  return v->dump();
}

absl::StatusOr<ListResult> Store::List(const ResourceType& type, const ListRequest& request) {
  ASSIGN_OR_RETURN(Selection sel, MakeSelection(type, request));
  if (request.limit < 0) return kube::BadRequestError("limit must be non-negative");
  absl::MutexLock lock(&mu_);
  ContinueToken token{version_, ""};
  if (!request.continue_token.empty()) {
    ASSIGN_OR_RETURN(token, DecodeContinue(request.continue_token));
  } else if (request.resource_version_match == "Exact") {
    if (!absl::SimpleAtoi(ToAbsl(request.resource_version), &token.version)) {
      return kube::BadRequestError(absl::StrCat("invalid resource version: ", request.resource_version));
    }
  }
  if (token.version > version_) {
    return kube::MakeError("Timeout", absl::StrCat("Too large resource version: ", token.version,
                                                   ", current: ", version_));
  }
  if (token.version < version_ && token.version < hub_.floor()) {
    return kube::GoneError(
        "The provided continue parameter is too old to display a consistent list result. You can "
        "start a new list without the continue parameter, or use the continue token in this "
        "response to retrieve the remainder of the results. Continuing with the provided token "
        "results in an inconsistent list - objects that were created, modified, or deleted between "
        "the time the first chunk was returned and now may show up in the list.");
  }
  // The collection as of token.version: today's state with later events undone.
  Collection view;
  if (auto c = collections_.find(sel.storage_key); c != collections_.end()) view = c->second;
  if (token.version < version_) {
    std::vector<const Event*> later = hub_.EventsAfter(token.version, sel.storage_key);
    for (auto it = later.rbegin(); it != later.rend(); ++it) {
      const Event& e = **it;
      std::string key = ObjectKey(type, kube::Namespace(*e.object), kube::Name(*e.object));
      if (e.previous == nullptr) {
        view.erase(key);
      } else {
        view[key] = e.previous;
      }
    }
  }
  ListResult result;
  result.resource_version = token.version;
  auto it = token.start.empty() ? view.begin() : view.upper_bound(token.start);
  if (!sel.ns.empty()) {
    std::string prefix = sel.ns + "/";
    if (token.start.empty()) it = view.lower_bound(prefix);
  }
  int64_t remaining = 0;
  std::string last_key;
  for (; it != view.end(); ++it) {
    const Json& obj = *it->second;
    if (!sel.Matches(obj)) continue;
    if (request.limit > 0 && static_cast<int64_t>(result.items.size()) >= request.limit) {
      ++remaining;
      continue;
    }
    result.items.push_back(obj);
    last_key = it->first;
  }
  if (remaining > 0) {
    result.continue_token = EncodeContinue({token.version, last_key});
    if (sel.labels.empty() && sel.fields.empty()) result.remaining_item_count = remaining;
  }
  return result;
}

}  // namespace nereid::devapi
