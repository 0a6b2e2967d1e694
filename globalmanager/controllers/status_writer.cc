#include "globalmanager/controllers/status_writer.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "common/kube/errors.h"
#include "common/strings/absl_compat.h"
#include "globalmanager/controllers/status_fence.h"

namespace nereid::gm {

namespace {

// The object in StatusFence: per client (tests run many), resource, object and incarnation.
std::string FenceKey(const kube::KubeClient& client, const kube::Resource& resource,
                     const kube::Json& object) {
  return absl::StrCat(absl::Hex(reinterpret_cast<uintptr_t>(&client)), "/",
                      resource.QualifiedName(), "/", kube::Key(object), "/", kube::Uid(object));
}

// One read-modify-write from `object`. `fresh`: the copy was just read from the API. "Nothing to
// change" is concluded from a cached copy only when it has seen our last write of the object
// (StatusFence): a stale cache could hide that write, which would then never be corrected.
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
  const std::string fence_key = FenceKey(client, resource, object);
  if (write.after == write.before) {
    if (!fresh && !StatusFence::Global().Covers(fence_key, kube::ResourceVersion(object))) {
      return std::optional<StatusWrite>();  // Confirm on a fresh read.
    }
    write.object = std::move(object);
    return std::optional<StatusWrite>(std::move(write));
  }
  object["status"] = write.after;
  absl::StatusOr<kube::Json> updated = client.UpdateStatus(resource, object);
  if (!updated.ok()) return updated.status();
  write.written = true;
  write.object = *std::move(updated);
  StatusFence::Global().Written(fence_key, kube::ResourceVersion(write.object));
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

absl::StatusOr<std::optional<StatusWrite>> WriteLibraryJobStatus(
    kube::KubeClient& client, const kube::Resource& resource, const job::JobIdentity& id,
    const kube::ObjectPtr& object, const std::function<void(kube::Json*)>& apply,
    job::Expectations& expectations, const std::string& key) {
  absl::StatusOr<StatusWrite> write = WriteStatus(
      client, resource, id.ns, id.name, id.uid,
      [&](const kube::Json&, kube::Json* status) -> absl::Status {
        apply(status);
        return absl::OkStatus();
      },
      object);
  if (!write.ok()) {
    if (absl::IsNotFound(write.status())) return std::nullopt;  // Gone meanwhile.
    return write.status();
  }
  if (write->written) expectations.ExpectStatus(key, kube::ResourceVersion(write->object));
  return *std::move(write);
}

void PutStatusFields(const kube::Json& typed, std::initializer_list<std::string_view> keys,
                     kube::Json* status) {
  for (std::string_view key : keys) {
    const std::string name(key);
    if (auto it = typed.find(name); it != typed.end()) {
      (*status)[name] = *it;
    } else {
      status->erase(name);
    }
  }
}

}  // namespace nereid::gm
