#include "common/kube/reflector.h"

#include <cmath>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "common/kube/errors.h"
#include "common/kube/thread_name.h"
#include "common/log/log.h"

namespace nereid::kube {
namespace {

std::function<double()> RealUniform01() {
  return
      [gen = std::make_shared<absl::BitGen>()]() { return absl::Uniform<double>(*gen, 0.0, 1.0); };
}

// The error a watch ERROR event carries (a metav1.Status document).
absl::Status StatusFromErrorEvent(const Json& object) {
  const Json* code = FindPath(object, "code");
  const int http_code = code != nullptr && code->is_number_integer() ? code->get<int>() : 500;
  return StatusFromResponse(http_code, object.dump());
}

}  // namespace

Reflector::Reflector(KubeClient* client, Resource resource, ReflectorStore* store, Clock* clock,
                     ReflectorOptions options)
    : client_(client),
      resource_(std::move(resource)),
      store_(store),
      clock_(clock != nullptr ? clock : Clock::Real()),
      options_(std::move(options)),
      uniform01_(options_.uniform01 ? options_.uniform01 : RealUniform01()),
      backoff_(options_.backoff, uniform01_) {
  if (options_.name.empty()) {
    options_.name = options_.ns.empty() ? resource_.QualifiedName()
                                        : absl::StrCat(resource_.QualifiedName(), "/", options_.ns);
  }
}

Reflector::~Reflector() { Stop(); }

void Reflector::Start() {
  absl::MutexLock lock(&mu_);
  if (thread_.joinable() || stopped_) return;
  thread_ = std::thread([this] { Run(); });
}

void Reflector::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
    if (current_watch_ != nullptr) current_watch_->Cancel();
  }
  if (thread_.joinable()) thread_.join();
}

bool Reflector::Stopped() const {
  absl::MutexLock lock(&mu_);
  return stopped_;
}

bool Reflector::HasSynced() const {
  absl::MutexLock lock(&mu_);
  return synced_;
}

std::string Reflector::LastSyncResourceVersion() const {
  absl::MutexLock lock(&mu_);
  return last_sync_rv_;
}

Reflector::Stats Reflector::GetStats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

bool Reflector::WaitOrStop(absl::Duration delay) {
  absl::MutexLock lock(&mu_);
  clock_->AwaitWithDeadline(&mu_, absl::Condition(&stopped_), clock_->Now() + delay);
  return !stopped_;
}

bool Reflector::Backoff() {
  const absl::Time now = clock_->Now();
  if (last_failure_ && now - *last_failure_ >= options_.backoff_reset_after) backoff_.Reset();
  last_failure_ = now;
  const absl::Duration delay = backoff_.Next();
  {
    absl::MutexLock lock(&mu_);
    ++stats_.backoffs;
  }
  if (options_.on_backoff) options_.on_backoff(delay);
  return WaitOrStop(delay);
}

void Reflector::Run() {
  SetCurrentThreadName(absl::StrCat("refl-", resource_.resource));
  bool need_list = true;
  while (!Stopped()) {
    if (need_list) {
      absl::Status status = ListAndReplace();
      if (Stopped()) break;
      if (!status.ok()) {
        if (IsGone(status)) {
          // The version we listed at is gone: next time ask for the latest (a quorum read).
          last_sync_rv_unavailable_ = true;
          {
            absl::MutexLock lock(&mu_);
            ++stats_.gone;
          }
          LOG(INFO) << "reflector " << options_.name << ": list: " << status << "; relisting";
          if (++consecutive_gone_ >= 2 && !Backoff()) break;
        } else {
          LOG(WARNING) << "reflector " << options_.name << ": list failed: " << status;
          if (!Backoff()) break;
        }
        continue;
      }
      need_list = false;
    }
    switch (WatchOnce()) {
      case WatchOutcome::kClosed:
        break;  // Resume from the last version at once.
      case WatchOutcome::kTooShort:
        if (!Backoff()) return;
        break;
      case WatchOutcome::kGone:
        need_list = true;
        {
          absl::MutexLock lock(&mu_);
          ++stats_.gone;
        }
        if (++consecutive_gone_ >= 2 && !Backoff()) return;
        break;
      case WatchOutcome::kError:
        if (!Backoff()) return;
        break;
      case WatchOutcome::kStopped:
        return;
    }
  }
}

absl::Status Reflector::ListAndReplace() {
  std::string relist_rv;
  if (!last_sync_rv_unavailable_) {
    absl::MutexLock lock(&mu_);
    relist_rv = last_sync_rv_.empty() ? "0" : last_sync_rv_;
  }
  ListOptions options;
  options.label_selector = options_.label_selector;
  options.field_selector = options_.field_selector;
  options.limit = options_.page_size;
  options.resource_version = relist_rv;

  std::vector<ObjectPtr> objects;
  std::string list_rv;
  // Bounded: a server that hands out continue tokens forever is broken.
  for (int page = 0; page < 1'000'000; ++page) {
    absl::StatusOr<ObjectList> list = client_->List(resource_, options_.ns, options);
    if (!list.ok() && IsGone(list.status()) && !options.continue_token.empty()) {
      // The continue token expired mid-list: fall back to one unpaged list (client-go's pager).
      LOG(INFO) << "reflector " << options_.name << ": continue token expired; listing unpaged";
      objects.clear();
      options.continue_token.clear();
      options.limit = 0;
      options.resource_version = relist_rv;
      list = client_->List(resource_, options_.ns, options);
    }
    if (!list.ok()) return list.status();
    for (Json& item : list->items) {
      if (!item.is_object() || Name(item).empty()) {
        LOG(WARNING) << "reflector " << options_.name << ": skipping a list item without a name";
        continue;
      }
      // List items may omit apiVersion/kind; the cache hands out complete objects.
      if (!item.contains("apiVersion")) item["apiVersion"] = resource_.ApiVersion();
      if (!item.contains("kind")) item["kind"] = resource_.kind;
      if (options_.transform) options_.transform(item);
      objects.push_back(std::make_shared<const Json>(std::move(item)));
    }
    list_rv = list->resource_version;
    if (list->continue_token.empty() || Stopped()) break;
    options.continue_token = list->continue_token;
    options.resource_version.clear();  // The server rejects a version together with a token.
  }
  if (Stopped()) return absl::CancelledError("reflector stopped");
  const size_t count = objects.size();
  store_->Replace(std::move(objects), list_rv);
  last_sync_rv_unavailable_ = false;
  {
    absl::MutexLock lock(&mu_);
    last_sync_rv_ = list_rv;
    synced_ = true;
    ++stats_.lists;
  }
  LOG(DEBUG) << "reflector " << options_.name << ": listed " << count << " objects at " << list_rv;
  return absl::OkStatus();
}

Reflector::WatchOutcome Reflector::WatchOnce() {
  ListOptions options;
  options.label_selector = options_.label_selector;
  options.field_selector = options_.field_selector;
  options.resource_version = LastSyncResourceVersion();
  options.allow_watch_bookmarks = true;
  const double min_seconds = absl::ToDoubleSeconds(options_.min_watch_timeout);
  options.timeout_seconds = static_cast<int64_t>(std::floor(min_seconds * (1.0 + uniform01_())));

  const absl::Time started = clock_->Now();  // Before the call, as client-go measures.
  absl::StatusOr<std::unique_ptr<WatchStream>> opened =
      client_->Watch(resource_, options_.ns, options);
  if (!opened.ok()) {
    if (IsGone(opened.status())) {
      LOG(INFO) << "reflector " << options_.name << ": watch from " << options.resource_version
                << ": " << opened.status() << "; relisting";
      return WatchOutcome::kGone;
    }
    LOG(WARNING) << "reflector " << options_.name << ": watch failed: " << opened.status();
    return WatchOutcome::kError;
  }
  std::unique_ptr<WatchStream> stream = *std::move(opened);
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return WatchOutcome::kStopped;
    current_watch_ = stream.get();
    ++stats_.watches;
  }
  auto outcome = [&](WatchOutcome result) {
    absl::MutexLock lock(&mu_);
    current_watch_ = nullptr;
    return stopped_ ? WatchOutcome::kStopped : result;
  };

  int64_t events = 0;
  WatchEvent event;
  while (stream->Next(&event)) {
    if (event.type == WatchEvent::Type::kError) {
      absl::Status status = StatusFromErrorEvent(event.object);
      stream->Cancel();
      if (IsGone(status)) {
        LOG(INFO) << "reflector " << options_.name << ": watch: " << status << "; relisting";
        return outcome(WatchOutcome::kGone);
      }
      LOG(WARNING) << "reflector " << options_.name << ": watch error event: " << status;
      return outcome(WatchOutcome::kError);
    }
    std::string rv = ResourceVersion(event.object);
    if (event.type == WatchEvent::Type::kBookmark) {
      ++events;
      consecutive_gone_ = 0;
      if (!rv.empty()) {
        absl::MutexLock lock(&mu_);
        last_sync_rv_ = std::move(rv);
      }
      continue;
    }
    if (!event.object.is_object() || Name(event.object).empty()) {
      LOG(WARNING) << "reflector " << options_.name << ": skipping a "
                   << WatchEventTypeName(event.type) << " event without an object name";
      continue;
    }
    ++events;
    consecutive_gone_ = 0;
    if (options_.transform) options_.transform(event.object);
    ObjectPtr object = std::make_shared<const Json>(std::move(event.object));
    switch (event.type) {
      case WatchEvent::Type::kAdded:
        store_->Add(object);
        break;
      case WatchEvent::Type::kModified:
        store_->Update(object);
        break;
      case WatchEvent::Type::kDeleted:
        store_->Delete(object);
        break;
      default:
        break;
    }
    if (!rv.empty()) {
      absl::MutexLock lock(&mu_);
      last_sync_rv_ = std::move(rv);
    }
  }
  absl::Status finished = stream->Finish();
  if (!finished.ok()) {
    if (IsGone(finished)) return outcome(WatchOutcome::kGone);
    LOG(WARNING) << "reflector " << options_.name << ": watch ended: " << finished;
    return outcome(WatchOutcome::kError);
  }
  if (events == 0 && clock_->Now() - started < options_.min_healthy_watch) {
    LOG(DEBUG) << "reflector " << options_.name << ": watch closed at once with no events";
    return outcome(WatchOutcome::kTooShort);
  }
  return outcome(WatchOutcome::kClosed);
}

}  // namespace nereid::kube
