#pragma once

// Where the job reconcile reads a job's pods and Services from: the informer caches, by the
// controller-owner uid index (only children whose controller ownerReference is the job; pods that
// merely carry matching labels are never adopted).

#include <vector>

#include "common/job/pod_builder.h"
#include "common/kube/lister.h"
#include "common/kube/object.h"

namespace nereid::job {

class ChildLister {
 public:
  virtual ~ChildLister() = default;
  virtual std::vector<kube::ObjectPtr> Pods(const JobIdentity& job) const = 0;
  virtual std::vector<kube::ObjectPtr> Services(const JobIdentity& job) const = 0;
};

// Over SharedInformer listers (their indexers have kControllerUidIndex by default).
class CacheChildLister final : public ChildLister {
 public:
  CacheChildLister(kube::Lister pods, kube::Lister services)
      : pods_(std::move(pods)), services_(std::move(services)) {}

  std::vector<kube::ObjectPtr> Pods(const JobIdentity& job) const override;
  std::vector<kube::ObjectPtr> Services(const JobIdentity& job) const override;

 private:
  kube::Lister pods_;
  kube::Lister services_;
};

}  // namespace nereid::job
