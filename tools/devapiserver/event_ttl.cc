#include "tools/devapiserver/event_ttl.h"

#include <algorithm>
#include <optional>
#include <string>

#include "common/kube/object.h"
#include "common/log/log.h"

namespace nereid::devapi {
namespace {

// When the Event last occurred, by the newest of the times it carries.
std::optional<absl::Time> LastSeen(const Json& event) {
  std::optional<absl::Time> newest;
  for (const char* path : {"lastTimestamp", "series.lastObservedTime", "eventTime",
                           "metadata.creationTimestamp"}) {
    std::optional<absl::Time> t = kube::ParseTimestamp(kube::StringAt(event, path));
    if (t.has_value() && (!newest.has_value() || *t > *newest)) newest = t;
  }
  return newest;
}

}  // namespace

EventExpirer::EventExpirer(Store* store, const Registry* registry, absl::Duration ttl)
    : store_(store), registry_(registry), ttl_(ttl) {}

EventExpirer::~EventExpirer() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void EventExpirer::Start() { thread_ = std::thread([this] { Run(); }); }

int EventExpirer::SweepOnce() {
  ResourceTypePtr type = registry_->FindByStorageKey("/events");
  if (type == nullptr) return 0;
  absl::StatusOr<ListResult> events = store_->List(*type, ListRequest{});
  if (!events.ok()) return 0;
  const absl::Time cutoff = store_->clock()->Now() - ttl_;
  int deleted = 0;
  for (const Json& event : events->items) {
    std::optional<absl::Time> seen = LastSeen(event);
    if (!seen.has_value() || *seen >= cutoff) continue;
    DeleteRequest request;
    request.precondition_uid = kube::Uid(event);
    // Gone already, or re-created since the list: either way not this sweep's to delete.
    if (store_->Delete(*type, kube::Namespace(event), kube::Name(event), request).ok()) ++deleted;
  }
  return deleted;
}

void EventExpirer::Run() {
  const absl::Duration period =
      std::clamp(ttl_ / 10, absl::Duration(absl::Seconds(1)), absl::Duration(absl::Minutes(1)));
  absl::MutexLock lock(&mu_);
  while (!store_->clock()->AwaitFor(&mu_, absl::Condition(&stopping_), period)) {
    mu_.Unlock();
    const int deleted = SweepOnce();
    if (deleted > 0) LOG(DEBUG) << "devapiserver: " << deleted << " Events expired";
    mu_.Lock();
  }
}

}  // namespace nereid::devapi
