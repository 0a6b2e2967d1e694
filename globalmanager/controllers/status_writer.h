#pragma once

// WriteStatus: read-modify-write of an object's status through the status subresource, retried on
// 409 Conflict (client-go's RetryOnConflict) and skipped when nothing changed (no write per
// resync or per identical report).
//
//   absl::StatusOr<StatusWrite> w = WriteStatus(client, api::resources::Datasets(), ns, name, uid,
//       [&](const kube::Json& object, kube::Json* status) -> absl::Status {
//         (*status)["numberOfSamples"] = 12;
//         return absl::OkStatus();
//       }, clock, cached_object);
//
// The first attempt may start from the informer's copy (`cached`, saves a GET when the cache is
// current); a conflict re-reads from the API at once, and "nothing to change" is only concluded
// from a fresh read (a stale cache might not show our own previous write yet). The mutator runs once per attempt on a fresh copy
// and may fail to abort (its error is returned as is). Errors: NotFound when the object is gone —
// or was re-created, i.e. its uid is not `expected_uid` (when given); Conflict when the retries ran
// out; other API errors as they are.

#include <functional>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/kube/client.h"
#include "common/kube/object.h"
#include "common/kube/resource.h"
#include "common/time/clock.h"

namespace nereid::gm {

struct StatusWrite {
  bool written = false;
  kube::Json before;  // The status as read (an object; {} when the object had none).
  kube::Json after;   // The status as written (== before when not written).
  kube::Json object;  // The object as last read or as the API returned it after the write.
};

using StatusMutator = std::function<absl::Status(const kube::Json& object, kube::Json* status)>;

absl::StatusOr<StatusWrite> WriteStatus(kube::KubeClient& client, const kube::Resource& resource,
                                        std::string_view ns, std::string_view name,
                                        std::string_view expected_uid, const StatusMutator& mutate,
                                        Clock* clock, kube::ObjectPtr cached = nullptr);

}  // namespace nereid::gm
