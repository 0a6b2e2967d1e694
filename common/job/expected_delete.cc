#include "common/job/expected_delete.h"

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

}  // namespace nereid::job
