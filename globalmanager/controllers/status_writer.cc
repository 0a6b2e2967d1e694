#include "globalmanager/controllers/status_writer.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "common/kube/errors.h"
#include "common/strings/absl_compat.h"

namespace nereid::gm {

namespace {

// One read-modify-write from `object`. `write_unchanged_ok`: whether "nothing to change" may be
// concluded from this copy (only from a fresh read: a stale cache could hide our own last write).
absl::StatusOr<std::optional<StatusWrite>> Attempt(kube::KubeClient& client,
                                                   const kube::Resource& resource,
                                                   kube::Json object, std::string_view expected_uid,
                                                   const StatusMutator& mutate, bool fresh) {
  if (!expected_uid.empty() && kube::Uid(object) != expected_uid) {
    return absl::NotFoundError(absl::StrCat(resource.kind, " ", kube::Key(object),
                                            " was re-created (uid ", kube::Uid(object),
                                            ", expected ", ToAbsl(expected_uid), ")"));
  }
  StatusWrite write;
  if (const kube::Json* current = kube::FindPath(object, "status");
      current != nullptr && current->is_object()) {
    write.before = *current;
  } else {
    write.before = kube::Json::object();
  }
  write.after = write.before;
  if (absl::Status s = mutate(object, &write.after); !s.ok()) return s;
  if (write.after == write.before) {
    if (!fresh) return std::optional<StatusWrite>();  // Confirm on a fresh read.
    write.object = std::move(object);
    return std::optional<StatusWrite>(std::move(write));
  }
  object["status"] = write.after;
  absl::StatusOr<kube::Json> updated = client.UpdateStatus(resource, object);
  if (!updated.ok()) return updated.status();
  write.written = true;
  write.object = *std::move(updated);
  return std::optional<StatusWrite>(std::move(write));
}

}  // namespace

absl::StatusOr<StatusWrite> WriteStatus(kube::KubeClient& client, const kube::Resource& resource,
                                        std::string_view ns, std::string_view name,
                                        std::string_view expected_uid, const StatusMutator& mutate,
                                        kube::ObjectPtr cached, int max_fresh_attempts) {
  // The informer's copy saves a GET when it is current; a write from a stale copy fails with a
  // conflict (resourceVersion), and then we read fresh at once — staleness is not contention.
  absl::Status last = absl::AbortedError("no status write attempt was made");
  if (cached != nullptr && (expected_uid.empty() || kube::Uid(*cached) == expected_uid)) {
    absl::StatusOr<std::optional<StatusWrite>> first =
        Attempt(client, resource, *cached, expected_uid, mutate, /*fresh=*/false);
    if (first.ok() && first->has_value()) return **std::move(first);
    if (!first.ok()) {
      if (!kube::IsConflict(first.status())) return first.status();
      last = first.status();
    }
  }
  // A conflict on a fresh copy means another writer got in between our GET and our write: read
  // again at once (the GET is the spacing). No sleep: see the header.
  for (int attempt = 0; attempt < max_fresh_attempts; ++attempt) {
    absl::StatusOr<kube::Json> fresh = client.Get(resource, ns, name);
    if (!fresh.ok()) return fresh.status();
    absl::StatusOr<std::optional<StatusWrite>> written =
        Attempt(client, resource, *std::move(fresh), expected_uid, mutate, /*fresh=*/true);
    if (written.ok()) return **std::move(written);
    last = written.status();
    if (!kube::IsConflict(last)) return last;
  }
  return last;
}

}  // namespace nereid::gm
