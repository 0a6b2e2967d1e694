#include "common/kube/client.h"

namespace nereid::kube {

std::string_view WatchEventTypeName(WatchEvent::Type type) {
  switch (type) {
    case WatchEvent::Type::kAdded: return "ADDED";
    case WatchEvent::Type::kModified: return "MODIFIED";
    case WatchEvent::Type::kDeleted: return "DELETED";
    case WatchEvent::Type::kBookmark: return "BOOKMARK";
    case WatchEvent::Type::kError: return "ERROR";
  }
  return "ERROR";
}

std::optional<WatchEvent::Type> ParseWatchEventType(std::string_view name) {
  if (name == "ADDED") return WatchEvent::Type::kAdded;
  if (name == "MODIFIED") return WatchEvent::Type::kModified;
  if (name == "DELETED") return WatchEvent::Type::kDeleted;
  if (name == "BOOKMARK") return WatchEvent::Type::kBookmark;
  if (name == "ERROR") return WatchEvent::Type::kError;
  return std::nullopt;
}

absl::StatusOr<ObjectList> ListAll(KubeClient& client, const Resource& resource,
                                   std::string_view ns, ListOptions options) {
  ObjectList all;
  // Bounded: a server that keeps returning continue tokens for more than a million pages is broken.
  for (int page = 0; page < 1'000'000; ++page) {
    absl::StatusOr<ObjectList> list = client.List(resource, ns, options);
    if (!list.ok()) return list.status();
    for (Json& item : list->items) all.items.push_back(std::move(item));
    all.resource_version = list->resource_version;
    if (list->continue_token.empty()) return all;
    options.continue_token = list->continue_token;
    // The API server rejects a resourceVersion together with a continue token: the token already
    // pins the snapshot the first page was served from.
    options.resource_version.clear();
  }
  return absl::InternalError("list paging did not terminate");
}

}  // namespace nereid::kube
