#pragma once

// WriteStatus: read-modify-write of an object's status through the status subresource, retried on
// 409 Conflict and skipped when nothing changed (no write per resync or per identical report).
//
//   absl::StatusOr<StatusWrite> w = WriteStatus(client, api::resources::Datasets(), ns, name, uid,
//       [&](const kube::Json& object, kube::Json* status) -> absl::Status {
//         (*status)["numberOfSamples"] = 12;
//         return absl::OkStatus();
//       }, cached_object);
//
// The first attempt may start from the informer's copy (`cached`, saves a GET when the cache is
// current); a conflict re-reads from the API at once, and "nothing to change" is concluded from
// the cached copy only when it has seen this process's last status write of the object
// (StatusFence, status_fence.h), otherwise from a fresh read (a stale cache might not show our own
// previous write yet). So a resync or an identical report costs no request. Conflicts are
// retried at once with a fresh read, kMaxFreshStatusAttempts times at most, never after a sleep
// (as kube-controller-manager's ReplicaSet and Job status updaters): the callers are reconcile
// workers, which hold their key while they wait — a sleep would queue every event of the object
// (a spec change too) behind it — and report handlers; a conflict that outlasts the attempts goes
// back to the workqueue's rate limiter or the LC's resend. The mutator runs once per attempt on a
// fresh copy and may fail to abort (its error is returned as is). Errors: NotFound when the object
// is gone — or was re-created, i.e. its uid is not `expected_uid` (when given); Conflict when the
// attempts ran out; other API errors as they are.

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/job/expectations.h"
#include "common/job/pod_builder.h"
#include "common/kube/client.h"
#include "common/kube/object.h"
#include "common/kube/resource.h"

namespace nereid::gm {

struct StatusWrite {
  bool written = false;
  kube::Json before;  // The status as read (an object; {} when the object had none).
  kube::Json after;   // The status as written (== before when not written).
  kube::Json object;  // The object as last read or as the API returned it after the write.
};

using StatusMutator = std::function<absl::Status(const kube::Json& object, kube::Json* status)>;

// Fresh read-modify-write attempts after the cached one (client-go's DefaultRetry has 5 steps).
inline constexpr int kMaxFreshStatusAttempts = 5;

// `max_fresh_attempts` lowers the number of fresh attempts for a caller that has a better way to
// deal with a conflict than reading again (e.g. a reconcile pass whose decisions a newer object
// may invalidate: it gives up and is run again from the new state).
absl::StatusOr<StatusWrite> WriteStatus(kube::KubeClient& client, const kube::Resource& resource,
                                        std::string_view ns, std::string_view name,
                                        std::string_view expected_uid, const StatusMutator& mutate,
                                        kube::ObjectPtr cached = nullptr,
                                        int max_fresh_attempts = kMaxFreshStatusAttempts);

// Sets `keys` of `status` from `typed` (a typed status struct's ToJson), erasing those `typed`
// lacks; every other key is left alone (another writer's, e.g. a Model's metrics from FL reports).
void PutStatusFields(const kube::Json& typed, std::initializer_list<std::string_view> keys,
                     kube::Json* status);

// The status write of a reconcile on the common job library (common/job) for the job `key`
// (identity `id`, `object` as cached): WriteStatus with `apply`; after a write, the library's
// status fence moves past it (Expectations::ExpectStatus) so the next pass does not act on the
// stale cache. nullopt when the job is gone meanwhile. `apply` runs again on a fresh read after a
// conflict, so what the pass counted (a restart) is not lost to a concurrent spec edit.
absl::StatusOr<std::optional<StatusWrite>> WriteLibraryJobStatus(
    kube::KubeClient& client, const kube::Resource& resource, const job::JobIdentity& id,
    const kube::ObjectPtr& object, const std::function<void(kube::Json*)>& apply,
    job::Expectations& expectations, const std::string& key);

}  // namespace nereid::gm
