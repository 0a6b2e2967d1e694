#include "common/job/expected_delete.h"

#include <optional>

#include "common/kube/errors.h"

namespace nereid::job {

absl::Status DeleteExpected(kube::KubeClient& client, Expectations& expectations,
                            const std::string& key, const kube::Resource& resource,
                            const kube::Json& child) {
  const std::string uid = kube::Uid(child);
  expectations.ExpectDeletion(key, uid);
  kube::DeleteOptions options;
  options.precondition_uid = uid;
  absl::Status s = client.Delete(resource, kube::Namespace(child), kube::Name(child), options);
  if (!s.ok()) expectations.DeletionObserved(key, uid);
  return s;
}

std::vector<kube::ObjectPtr> StalePods(const std::vector<kube::ObjectPtr>& pods,
                                       std::string_view annotation, std::string_view hash) {
  std::vector<kube::ObjectPtr> stale;
  for (const kube::ObjectPtr& pod : pods) {
    if (kube::IsBeingDeleted(*pod)) continue;
    std::optional<std::string> built_from = kube::Annotation(*pod, annotation);
    if (built_from.has_value() && *built_from != hash) stale.push_back(pod);
  }
  return stale;
}

int DeletePodsExpected(kube::KubeClient& client, Expectations& expectations,
                       const std::string& key, const std::vector<kube::ObjectPtr>& pods,
                       absl::Status* first_error) {
  int deleted = 0;
  for (const kube::ObjectPtr& pod : pods) {
    if (kube::IsBeingDeleted(*pod)) continue;
    absl::Status s = DeleteExpected(client, expectations, key, kube::resources::Pods(), *pod);
    if (!s.ok()) {
      if (!absl::IsNotFound(s) && first_error->ok()) *first_error = s;
      continue;
    }
    ++deleted;
  }
  return deleted;
}

}  // namespace nereid::job
