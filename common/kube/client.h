#pragma once

// KubeClient: the seam between Nereid and the Kubernetes API (client-go's dynamic client).
// RestClient implements it over HTTP(S); tests use an in-memory fake. Every method is
// thread-safe. Errors follow common/kube/errors.h (IsNotFound, IsConflict, IsGone, ...).

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/kube/object.h"
#include "common/kube/resource.h"

namespace nereid::kube {

struct ListOptions {
  std::string label_selector;   // "app=x,tier!=db,env in (a,b),!legacy"
  std::string field_selector;   // "metadata.name=x,spec.nodeName=n1"
  int64_t limit = 0;            // 0: no paging.
  std::string continue_token;
  // List: "" = most recent (quorum read), "0" = any. Watch: start after this version.
  std::string resource_version;
  // Watch only.
  std::optional<int64_t> timeout_seconds;
  bool allow_watch_bookmarks = false;
};

struct ObjectList {
  std::vector<Json> items;
  std::string resource_version;  // The list's metadata.resourceVersion: where a watch resumes.
  std::string continue_token;    // Non-empty when more pages remain.
};

enum class PatchType {
  kMerge,           // application/merge-patch+json (RFC 7386)
  kJson,            // application/json-patch+json (RFC 6902)
  kStrategicMerge,  // application/strategic-merge-patch+json (built-in kinds only)
};

struct DeleteOptions {
  std::optional<std::string> propagation_policy;  // "Orphan" | "Background" | "Foreground"
  std::optional<std::string> precondition_uid;
  std::optional<std::string> precondition_resource_version;
  std::optional<int64_t> grace_period_seconds;
};

struct WatchEvent {
  enum class Type { kAdded, kModified, kDeleted, kBookmark, kError };
  Type type = Type::kAdded;
  Json object;  // For kError: the metav1.Status the server sent.
};

std::string_view WatchEventTypeName(WatchEvent::Type type);
std::optional<WatchEvent::Type> ParseWatchEventType(std::string_view name);

// One open watch. Next() blocks until an event arrives or the stream ends; Cancel() may be called
// from any thread and makes a blocked Next() return false promptly.
class WatchStream {
 public:
  virtual ~WatchStream() = default;
  // Returns false when the stream has ended; then Finish() says why (OK for a normal close by the
  // server, e.g. timeoutSeconds elapsed, or after Cancel()).
  virtual bool Next(WatchEvent* event) = 0;
  virtual absl::Status Finish() = 0;
  virtual void Cancel() = 0;
};

class KubeClient {
 public:
  virtual ~KubeClient() = default;

  virtual absl::StatusOr<Json> Get(const Resource& resource, std::string_view ns,
                                   std::string_view name) = 0;
  // `ns` empty lists across all namespaces.
  virtual absl::StatusOr<ObjectList> List(const Resource& resource, std::string_view ns,
                                          const ListOptions& options) = 0;
  virtual absl::StatusOr<Json> Create(const Resource& resource, std::string_view ns,
                                      const Json& object) = 0;
  // Replaces the object named by object.metadata; a stale metadata.resourceVersion → IsConflict.
  virtual absl::StatusOr<Json> Update(const Resource& resource, const Json& object) = 0;
  // PUT to the status subresource: only .status changes.
  virtual absl::StatusOr<Json> UpdateStatus(const Resource& resource, const Json& object) = 0;
  virtual absl::StatusOr<Json> Patch(const Resource& resource, std::string_view ns,
                                     std::string_view name, PatchType type, const Json& patch,
                                     std::string_view subresource = "") = 0;
  virtual absl::Status Delete(const Resource& resource, std::string_view ns, std::string_view name,
                              const DeleteOptions& options = {}) = 0;
  virtual absl::StatusOr<std::unique_ptr<WatchStream>> Watch(const Resource& resource,
                                                             std::string_view ns,
                                                             const ListOptions& options) = 0;
  // Whether the server serves this group/version/resource (API discovery), e.g. Volcano PodGroups.
  virtual absl::StatusOr<bool> IsServed(const Resource& resource) = 0;
};

// Lists every page (following continue tokens) into one list.
absl::StatusOr<ObjectList> ListAll(KubeClient& client, const Resource& resource,
                                   std::string_view ns, ListOptions options);

}  // namespace nereid::kube
