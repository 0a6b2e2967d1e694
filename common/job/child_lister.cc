#include "common/job/child_lister.h"

#include "common/kube/indexer.h"

namespace nereid::job {

namespace {

std::vector<kube::ObjectPtr> Owned(const kube::Lister& lister, const JobIdentity& job) {
  std::vector<kube::ObjectPtr> out;
  if (job.uid.empty()) return out;
  auto items = lister.ByIndex(kube::kControllerUidIndex, job.uid);
  if (!items.ok()) return out;
  for (kube::ObjectPtr& item : *items) {
    if (kube::Namespace(*item) == job.ns) out.push_back(std::move(item));
  }
  return out;
}

}  // namespace

std::vector<kube::ObjectPtr> CacheChildLister::Pods(const JobIdentity& job) const {
  return Owned(pods_, job);
}

std::vector<kube::ObjectPtr> CacheChildLister::Services(const JobIdentity& job) const {
  return Owned(services_, job);
}

}  // namespace nereid::job
