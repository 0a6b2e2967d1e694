#include "tests/fakes/fake_kube_client.h"

#include <algorithm>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/kube/errors.h"
#include "common/strings/absl_compat.h"

namespace nereid::fakes {

using kube::Json;
using kube::Resource;
using kube::WatchEvent;

std::string_view VerbName(Verb verb) {
  switch (verb) {
    case Verb::kGet:
      return "get";
    case Verb::kList:
      return "list";
    case Verb::kCreate:
      return "create";
    case Verb::kUpdate:
      return "update";
    case Verb::kUpdateStatus:
      return "update-status";
    case Verb::kPatch:
      return "patch";
    case Verb::kDelete:
      return "delete";
    case Verb::kWatch:
      return "watch";
    case Verb::kIsServed:
      return "is-served";
  }
  return "unknown";
}

// The state one watch shares between the client (producer) and the stream (consumer).
class FakeWatchState {
 public:
  void Push(WatchEvent event) {
    absl::MutexLock lock(&mu_);
    if (ended_ || cancelled_) return;
    events_.push_back(std::move(event));
  }
  void End() {
    absl::MutexLock lock(&mu_);
    ended_ = true;
  }
  void Cancel() {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
  }
  bool Open() const {
    absl::MutexLock lock(&mu_);
    return !ended_ && !cancelled_;
  }

  // Blocks until an event, the end of the stream, cancellation or `deadline` on `clock`.
  bool Next(Clock* clock, absl::Time deadline, WatchEvent* event) {
    absl::MutexLock lock(&mu_);
    auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return cancelled_ || !events_.empty() || ended_;
    };
    clock->AwaitWithDeadline(&mu_, absl::Condition(&ready), deadline);
    if (cancelled_) return false;
    if (!events_.empty()) {
      *event = std::move(events_.front());
      events_.pop_front();
      return true;
    }
    ended_ = true;  // Ended by the server, or timeoutSeconds elapsed.
    return false;
  }

 private:
  mutable absl::Mutex mu_;
  std::deque<WatchEvent> events_ ABSL_GUARDED_BY(mu_);
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

namespace {

class FakeWatchStream final : public kube::WatchStream {
 public:
  FakeWatchStream(std::shared_ptr<FakeWatchState> state, Clock* clock, absl::Time deadline)
      : state_(std::move(state)), clock_(clock), deadline_(deadline) {}
  ~FakeWatchStream() override { state_->Cancel(); }

  bool Next(WatchEvent* event) override { return state_->Next(clock_, deadline_, event); }
  absl::Status Finish() override { return absl::OkStatus(); }
  void Cancel() override { state_->Cancel(); }

 private:
  std::shared_ptr<FakeWatchState> state_;
  Clock* clock_;
  absl::Time deadline_;
};

// metadata.name, metadata.namespace and any dotted path to a string (spec.nodeName, status.phase).
std::optional<std::string> FieldGetter(const Json& object, std::string_view field) {
  if (field == "metadata.name") return kube::Name(object);
  if (field == "metadata.namespace") return kube::Namespace(object);
  const Json* value = kube::FindPath(object, field);
  if (value == nullptr) return std::string();
  if (value->is_string()) return value->get<std::string>();
  return value->dump();
}

// Everything but metadata and status: what bumps metadata.generation when it changes.
Json SpecPart(const Json& object) {
  Json copy = object;
  copy.erase("metadata");
  copy.erase("status");
  return copy;
}

bool HasFinalizers(const Json& object) {
  const Json* finalizers = kube::FindPath(object, "metadata.finalizers");
  return finalizers != nullptr && finalizers->is_array() && !finalizers->empty();
}

// List and watch options as recorded in an Action's body.
Json OptionsToJson(const kube::ListOptions& options) {
  Json json = Json::object();
  if (!options.label_selector.empty()) json["labelSelector"] = options.label_selector;
  if (!options.field_selector.empty()) json["fieldSelector"] = options.field_selector;
  if (options.limit > 0) json["limit"] = options.limit;
  if (!options.continue_token.empty()) json["continue"] = options.continue_token;
  json["resourceVersion"] = options.resource_version;
  if (options.timeout_seconds) json["timeoutSeconds"] = *options.timeout_seconds;
  if (options.allow_watch_bookmarks) json["allowWatchBookmarks"] = true;
  return json;
}

absl::Status BadRequest(std::string_view message) { return kube::MakeError("BadRequest", message); }

std::string Base36(int64_t value, size_t width) {
  static constexpr char kDigits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string out;
  do {
    out.insert(out.begin(), kDigits[value % 36]);
    value /= 36;
  } while (value > 0);
  while (out.size() < width) out.insert(out.begin(), '0');
  return out;
}

}  // namespace

FakeKubeClient::FakeKubeClient(Clock* clock, size_t history_limit)
    : clock_(clock), history_limit_(std::max<size_t>(1, history_limit)) {}

FakeKubeClient::~FakeKubeClient() {
  absl::MutexLock lock(&mu_);
  for (Watcher& watcher : watchers_) watcher.state->End();
}

absl::Status FakeKubeClient::Begin(Verb verb, const Resource& resource, std::string_view ns,
                                   std::string_view name, std::string_view subresource,
                                   const Json& body) {
  const std::string qualified = resource.QualifiedName();
  actions_.push_back(
      Action{verb, qualified, std::string(ns), std::string(name), std::string(subresource), body});
  for (auto it = failures_.begin(); it != failures_.end(); ++it) {
    if (it->verb != verb || (!it->resource.empty() && it->resource != qualified)) continue;
    absl::Status status = it->status;
    if (--it->remaining <= 0) failures_.erase(it);
    return status;
  }
  return absl::OkStatus();
}

std::string FakeKubeClient::NextResourceVersion() { return std::to_string(++resource_version_); }

bool FakeKubeClient::WatcherMatches(const Watcher& watcher, const Json& object) {
  if (!watcher.ns.empty() && kube::Namespace(object) != watcher.ns) return false;
  return watcher.labels.Matches(kube::Labels(object)) &&
         watcher.fields.Matches(object, FieldGetter);
}

void FakeKubeClient::Deliver(const Watcher& watcher, const HistoryEntry& entry) {
  if (entry.resource != watcher.resource) return;
  const bool now_matches = WatcherMatches(watcher, entry.object);
  switch (entry.type) {
    case WatchEvent::Type::kAdded:
    case WatchEvent::Type::kDeleted:
      if (now_matches) watcher.state->Push(WatchEvent{entry.type, entry.object});
      return;
    case WatchEvent::Type::kModified: {
      const bool was_matching = WatcherMatches(watcher, entry.old_object);
      if (was_matching && now_matches) {
        watcher.state->Push(WatchEvent{WatchEvent::Type::kModified, entry.object});
      } else if (was_matching) {
        watcher.state->Push(WatchEvent{WatchEvent::Type::kDeleted, entry.object});
      } else if (now_matches) {
        watcher.state->Push(WatchEvent{WatchEvent::Type::kAdded, entry.object});
      }
      return;
    }
    default:
      return;
  }
}

void FakeKubeClient::Emit(const std::string& resource, WatchEvent::Type type,
                          const Json& old_object, const Json& object) {
  HistoryEntry entry{resource_version_, resource, type, old_object, object};
  std::erase_if(watchers_, [](const Watcher& w) { return !w.state->Open(); });
  for (const Watcher& watcher : watchers_) Deliver(watcher, entry);
  history_.push_back(std::move(entry));
  while (history_.size() > history_limit_) {
    oldest_resumable_rv_ = history_.front().rv;
    history_.pop_front();
  }
}

absl::StatusOr<Json> FakeKubeClient::Get(const Resource& resource, std::string_view ns,
                                         std::string_view name) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Begin(Verb::kGet, resource, ns, name, "", nullptr); !s.ok()) return s;
  const std::string key = kube::MakeKey(resource.namespaced ? ns : "", name);
  auto& objects = objects_[resource.QualifiedName()];
  auto it = objects.find(key);
  if (it == objects.end()) return kube::NotFoundError(resource.QualifiedName(), name);
  return it->second;
}

absl::StatusOr<kube::ObjectList> FakeKubeClient::List(const Resource& resource, std::string_view ns,
                                                      const kube::ListOptions& options) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Begin(Verb::kList, resource, ns, "", "", OptionsToJson(options)); !s.ok()) {
    return s;
  }
  absl::StatusOr<kube::LabelSelector> labels = kube::LabelSelector::Parse(options.label_selector);
  if (!labels.ok()) return BadRequest(ToStd(labels.status().message()));
  absl::StatusOr<kube::FieldSelector> fields = kube::FieldSelector::Parse(options.field_selector);
  if (!fields.ok()) return BadRequest(ToStd(fields.status().message()));

  // Continue tokens are "<resourceVersion>:<last key>"; they expire with the watch history, as
  // etcd compaction expires real ones.
  std::string after;
  if (!options.continue_token.empty()) {
    const size_t colon = options.continue_token.find(':');
    int64_t token_rv = 0;
    if (colon == std::string::npos ||
        !absl::SimpleAtoi(ToAbsl(std::string_view(options.continue_token).substr(0, colon)),
                          &token_rv)) {
      return BadRequest("invalid continue token");
    }
    if (token_rv < oldest_resumable_rv_) {
      return kube::GoneError("The provided continue parameter is too old");
    }
    after = options.continue_token.substr(colon + 1);
  }

  kube::ObjectList list;
  list.resource_version = std::to_string(resource_version_);
  const ObjectMap& objects = objects_[resource.QualifiedName()];
  auto it = after.empty() ? objects.begin() : objects.upper_bound(after);
  for (; it != objects.end(); ++it) {
    const Json& object = it->second;
    if (resource.namespaced && !ns.empty() && kube::Namespace(object) != ns) continue;
    if (!labels->Matches(kube::Labels(object)) || !fields->Matches(object, FieldGetter)) continue;
    if (options.limit > 0 && static_cast<int64_t>(list.items.size()) >= options.limit) {
      list.continue_token = absl::StrCat(resource_version_, ":",
                                         list.items.empty() ? after : kube::Key(list.items.back()));
      break;
    }
    list.items.push_back(object);
  }
  return list;
}

absl::StatusOr<Json> FakeKubeClient::Create(const Resource& resource, std::string_view ns,
                                            const Json& object) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Begin(Verb::kCreate, resource, ns, kube::Name(object), "", object);
      !s.ok()) {
    return s;
  }
  if (!object.is_object()) return BadRequest("object is not a JSON object");
  Json created = object;
  Json& meta = created["metadata"];
  if (!meta.is_object()) meta = Json::object();
  std::string name = kube::Name(object);
  if (name.empty()) {
    const std::string generate = kube::StringAt(object, "metadata.generateName");
    if (generate.empty()) {
      return kube::InvalidError(
          resource.kind, "",
          {{"FieldValueRequired", "name or generateName is required", "metadata.name"}});
    }
    name = absl::StrCat(generate, Base36(uid_counter_ + 1, 5));
    meta["name"] = name;
  }
  std::string object_ns = kube::Namespace(object);
  if (resource.namespaced) {
    if (ns.empty()) ns = object_ns;
    if (ns.empty()) return BadRequest("namespace is required");
    if (!object_ns.empty() && object_ns != ns) {
      return BadRequest("the namespace of the object does not match the namespace on the request");
    }
    meta["namespace"] = std::string(ns);
  } else {
    meta.erase("namespace");
  }
  const std::string key = kube::Key(created);
  ObjectMap& objects = objects_[resource.QualifiedName()];
  if (objects.contains(key)) return kube::AlreadyExistsError(resource.QualifiedName(), name);

  if (!created.contains("apiVersion")) created["apiVersion"] = resource.ApiVersion();
  if (!created.contains("kind")) created["kind"] = resource.kind;
  meta["uid"] = absl::StrCat("00000000-0000-4000-8000-", Base36(++uid_counter_, 12));
  meta["resourceVersion"] = NextResourceVersion();
  meta["generation"] = 1;
  meta["creationTimestamp"] = kube::FormatTimestamp(clock_->Now());
  meta.erase("deletionTimestamp");
  objects[key] = created;
  Emit(resource.QualifiedName(), WatchEvent::Type::kAdded, nullptr, created);
  return created;
}

absl::StatusOr<Json> FakeKubeClient::Commit(const Resource& resource, const std::string& key,
                                            const Json& current, Json next) {
  // Fields the client cannot change.
  Json& meta = next["metadata"];
  if (!meta.is_object()) meta = Json::object();
  static const Json kEmpty = Json::object();
  const auto current_meta_it = current.find("metadata");
  const Json& current_meta =
      current_meta_it != current.end() && current_meta_it->is_object() ? *current_meta_it : kEmpty;
  for (const char* field : {"name", "namespace", "uid", "creationTimestamp", "deletionTimestamp"}) {
    if (const auto it = current_meta.find(field); it != current_meta.end()) {
      meta[field] = *it;
    } else {
      meta.erase(field);
    }
  }
  meta["resourceVersion"] = kube::ResourceVersion(current);
  meta["generation"] = kube::Generation(current);
  if (SpecPart(next) != SpecPart(current)) meta["generation"] = kube::Generation(current) + 1;
  if (next == current) return current;  // A no-op write does not bump the resourceVersion.

  meta["resourceVersion"] = NextResourceVersion();
  ObjectMap& objects = objects_[resource.QualifiedName()];
  if (kube::IsBeingDeleted(next) && !HasFinalizers(next)) {
    objects.erase(key);
    Emit(resource.QualifiedName(), WatchEvent::Type::kDeleted, current, next);
    return next;
  }
  objects[key] = next;
  Emit(resource.QualifiedName(), WatchEvent::Type::kModified, current, next);
  return next;
}

absl::StatusOr<Json> FakeKubeClient::UpdateLocked(const Resource& resource, const Json& object,
                                                  bool status_only) {
  if (!object.is_object()) return BadRequest("object is not a JSON object");
  const std::string name = kube::Name(object);
  const std::string key = kube::MakeKey(resource.namespaced ? kube::Namespace(object) : "", name);
  ObjectMap& objects = objects_[resource.QualifiedName()];
  auto it = objects.find(key);
  if (it == objects.end()) return kube::NotFoundError(resource.QualifiedName(), name);
  const Json current = it->second;
  const std::string rv = kube::ResourceVersion(object);
  if (!rv.empty() && rv != kube::ResourceVersion(current)) {
    return kube::ConflictError(resource.QualifiedName(), name,
                               "the object has been modified; please apply your changes to the "
                               "latest version and try again");
  }
  Json next;
  if (status_only) {
    next = current;
    if (object.contains("status")) {
      next["status"] = object["status"];
    } else {
      next.erase("status");
    }
  } else {
    next = object;
    if (current.contains("status")) {
      next["status"] = current["status"];
    } else {
      next.erase("status");
    }
  }
  return Commit(resource, key, current, std::move(next));
}

absl::StatusOr<Json> FakeKubeClient::Update(const Resource& resource, const Json& object) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s =
          Begin(Verb::kUpdate, resource, kube::Namespace(object), kube::Name(object), "", object);
      !s.ok()) {
    return s;
  }
  return UpdateLocked(resource, object, /*status_only=*/false);
}

absl::StatusOr<Json> FakeKubeClient::UpdateStatus(const Resource& resource, const Json& object) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Begin(Verb::kUpdateStatus, resource, kube::Namespace(object),
                             kube::Name(object), "status", object);
      !s.ok()) {
    return s;
  }
  return UpdateLocked(resource, object, /*status_only=*/true);
}

absl::StatusOr<Json> FakeKubeClient::Patch(const Resource& resource, std::string_view ns,
                                           std::string_view name, kube::PatchType type,
                                           const Json& patch, std::string_view subresource) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Begin(Verb::kPatch, resource, ns, name, subresource, patch); !s.ok()) {
    return s;
  }
  if (!subresource.empty() && subresource != "status") {
    return kube::NotFoundError(resource.QualifiedName(), name);
  }
  const std::string key = kube::MakeKey(resource.namespaced ? ns : "", name);
  ObjectMap& objects = objects_[resource.QualifiedName()];
  auto it = objects.find(key);
  if (it == objects.end()) return kube::NotFoundError(resource.QualifiedName(), name);
  const Json current = it->second;

  Json patched = current;
  if (type == kube::PatchType::kJson) {
    if (!patch.is_array()) return BadRequest("a JSON patch must be an array of operations");
    try {
      patched = current.patch(patch);
    } catch (const std::exception& e) {
      return kube::InvalidError(resource.kind, name, {{"FieldValueInvalid", e.what(), ""}});
    }
  } else {
    if (!patch.is_object()) return BadRequest("a merge patch must be a JSON object");
    // A resourceVersion in a merge patch is a precondition, as on the real server.
    const std::string rv = kube::ResourceVersion(patch);
    if (!rv.empty() && rv != kube::ResourceVersion(current)) {
      return kube::ConflictError(resource.QualifiedName(), name, "the object has been modified");
    }
    patched.merge_patch(patch);
  }
  Json next;
  if (subresource == "status") {
    next = current;
    if (patched.contains("status")) {
      next["status"] = patched["status"];
    } else {
      next.erase("status");
    }
  } else {
    next = std::move(patched);
    if (current.contains("status")) {
      next["status"] = current["status"];
    } else {
      next.erase("status");
    }
  }
  return Commit(resource, key, current, std::move(next));
}

absl::Status FakeKubeClient::Delete(const Resource& resource, std::string_view ns,
                                    std::string_view name, const kube::DeleteOptions& options) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Begin(Verb::kDelete, resource, ns, name, "", nullptr); !s.ok()) return s;
  const std::string key = kube::MakeKey(resource.namespaced ? ns : "", name);
  ObjectMap& objects = objects_[resource.QualifiedName()];
  auto it = objects.find(key);
  if (it == objects.end()) return kube::NotFoundError(resource.QualifiedName(), name);
  const Json current = it->second;
  if (options.precondition_uid && *options.precondition_uid != kube::Uid(current)) {
    return kube::ConflictError(resource.QualifiedName(), name, "Precondition failed: UID");
  }
  if (options.precondition_resource_version &&
      *options.precondition_resource_version != kube::ResourceVersion(current)) {
    return kube::ConflictError(resource.QualifiedName(), name,
                               "Precondition failed: ResourceVersion");
  }
  Json next = current;
  if (HasFinalizers(current)) {
    if (kube::IsBeingDeleted(current)) return absl::OkStatus();
    next["metadata"]["deletionTimestamp"] = kube::FormatTimestamp(clock_->Now());
    next["metadata"]["resourceVersion"] = NextResourceVersion();
    objects[key] = next;
    Emit(resource.QualifiedName(), WatchEvent::Type::kModified, current, next);
    return absl::OkStatus();
  }
  next["metadata"]["resourceVersion"] = NextResourceVersion();
  objects.erase(it);
  Emit(resource.QualifiedName(), WatchEvent::Type::kDeleted, current, next);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<kube::WatchStream>> FakeKubeClient::Watch(
    const Resource& resource, std::string_view ns, const kube::ListOptions& options) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Begin(Verb::kWatch, resource, ns, "", "", OptionsToJson(options)); !s.ok()) {
    return s;
  }
  Watcher watcher;
  watcher.state = std::make_shared<FakeWatchState>();
  watcher.resource = resource.QualifiedName();
  watcher.ns = resource.namespaced ? std::string(ns) : std::string();
  watcher.bookmarks = options.allow_watch_bookmarks;
  absl::StatusOr<kube::LabelSelector> labels = kube::LabelSelector::Parse(options.label_selector);
  if (!labels.ok()) return BadRequest(ToStd(labels.status().message()));
  absl::StatusOr<kube::FieldSelector> fields = kube::FieldSelector::Parse(options.field_selector);
  if (!fields.ok()) return BadRequest(ToStd(fields.status().message()));
  watcher.labels = *std::move(labels);
  watcher.fields = *std::move(fields);

  const std::string& rv_text = options.resource_version;
  if (rv_text.empty() || rv_text == "0") {
    // "Any version": the current state as synthetic ADDED events, then changes.
    for (const auto& [key, object] : objects_[watcher.resource]) {
      if (WatcherMatches(watcher, object)) {
        watcher.state->Push(WatchEvent{WatchEvent::Type::kAdded, object});
      }
    }
  } else {
    int64_t rv = 0;
    if (!absl::SimpleAtoi(ToAbsl(rv_text), &rv) || rv < 0) {
      return BadRequest(absl::StrCat("invalid resourceVersion \"", rv_text, "\""));
    }
    if (rv < oldest_resumable_rv_) {
      return kube::GoneError(
          absl::StrCat("too old resource version: ", rv, " (", oldest_resumable_rv_, ")"));
    }
    for (const HistoryEntry& entry : history_) {
      if (entry.rv > rv) Deliver(watcher, entry);
    }
  }
  const absl::Time deadline = options.timeout_seconds
                                  ? clock_->Now() + absl::Seconds(*options.timeout_seconds)
                                  : absl::InfiniteFuture();
  auto stream = std::make_unique<FakeWatchStream>(watcher.state, clock_, deadline);
  watchers_.push_back(std::move(watcher));
  return std::unique_ptr<kube::WatchStream>(std::move(stream));
}

absl::StatusOr<bool> FakeKubeClient::IsServed(const Resource& resource) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Begin(Verb::kIsServed, resource, "", "", "", nullptr); !s.ok()) return s;
  auto it = served_.find(resource.QualifiedName());
  return it == served_.end() ? true : it->second;
}

void FakeKubeClient::FailNext(Verb verb, int count, absl::Status status, std::string resource) {
  if (count <= 0) return;
  absl::MutexLock lock(&mu_);
  failures_.push_back(FailureRule{verb, std::move(resource), count, std::move(status)});
}

void FakeKubeClient::ClearFailures() {
  absl::MutexLock lock(&mu_);
  failures_.clear();
}

void FakeKubeClient::SetServed(const Resource& resource, bool served) {
  absl::MutexLock lock(&mu_);
  served_[resource.QualifiedName()] = served;
}

void FakeKubeClient::CompactHistory() {
  absl::MutexLock lock(&mu_);
  history_.clear();
  oldest_resumable_rv_ = resource_version_;
}

void FakeKubeClient::ExpireWatches() {
  absl::MutexLock lock(&mu_);
  const Json status = kube::StatusToJson(kube::GoneError("too old resource version"));
  for (Watcher& watcher : watchers_) {
    watcher.state->Push(WatchEvent{WatchEvent::Type::kError, status});
    watcher.state->End();
  }
  watchers_.clear();
}

void FakeKubeClient::CloseWatches() {
  absl::MutexLock lock(&mu_);
  for (Watcher& watcher : watchers_) watcher.state->End();
  watchers_.clear();
}

void FakeKubeClient::SendBookmark() {
  absl::MutexLock lock(&mu_);
  for (const Watcher& watcher : watchers_) {
    if (!watcher.bookmarks) continue;
    watcher.state->Push(
        WatchEvent{WatchEvent::Type::kBookmark,
                   Json{{"metadata", {{"resourceVersion", std::to_string(resource_version_)}}}}});
  }
}

void FakeKubeClient::SendRawEvent(const Resource& resource, const WatchEvent& event) {
  absl::MutexLock lock(&mu_);
  for (const Watcher& watcher : watchers_) {
    if (watcher.resource == resource.QualifiedName()) watcher.state->Push(event);
  }
}

int FakeKubeClient::OpenWatches() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(std::count_if(watchers_.begin(), watchers_.end(),
                                        [](const Watcher& w) { return w.state->Open(); }));
}

std::vector<Action> FakeKubeClient::Actions() const {
  absl::MutexLock lock(&mu_);
  return actions_;
}

std::vector<Action> FakeKubeClient::ActionsOf(Verb verb, std::string_view resource) const {
  absl::MutexLock lock(&mu_);
  std::vector<Action> out;
  for (const Action& action : actions_) {
    if (action.verb == verb && (resource.empty() || action.resource == resource)) {
      out.push_back(action);
    }
  }
  return out;
}

int FakeKubeClient::CountActions(Verb verb, std::string_view resource) const {
  return static_cast<int>(ActionsOf(verb, resource).size());
}

void FakeKubeClient::ClearActions() {
  absl::MutexLock lock(&mu_);
  actions_.clear();
}

int64_t FakeKubeClient::CurrentResourceVersion() const {
  absl::MutexLock lock(&mu_);
  return resource_version_;
}

std::vector<Json> FakeKubeClient::Objects(const Resource& resource) const {
  absl::MutexLock lock(&mu_);
  std::vector<Json> out;
  auto it = objects_.find(resource.QualifiedName());
  if (it == objects_.end()) return out;
  for (const auto& [key, object] : it->second) out.push_back(object);
  return out;
}

}  // namespace nereid::fakes
