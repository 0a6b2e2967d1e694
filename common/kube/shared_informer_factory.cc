#include "common/kube/shared_informer_factory.h"

#include <utility>

namespace nereid::kube {

SharedInformerFactory::SharedInformerFactory(KubeClient* client, Clock* clock,
                                             absl::Duration default_resync,
                                             CachePolicyFor default_policy)
    : client_(client),
      clock_(clock != nullptr ? clock : Clock::Real()),
      default_resync_(default_resync),
      default_policy_(std::move(default_policy)) {}

SharedInformerFactory::~SharedInformerFactory() { Stop(); }

SharedInformer* SharedInformerFactory::Informer(const Resource& resource, InformerOptions options) {
  Key key{resource.QualifiedName(), options.ns, options.label_selector, options.field_selector};
  absl::MutexLock lock(&mu_);
  auto it = informers_.find(key);
  if (it != informers_.end()) return it->second.get();
  if (options.resync_period == absl::ZeroDuration()) options.resync_period = default_resync_;
  if (default_policy_) {
    CachePolicy policy = default_policy_(resource);
    if (!options.reflector.transform) options.reflector.transform = std::move(policy.transform);
    if (!options.cache_encoding) options.cache_encoding = policy.encoding;
  }
  auto informer = std::make_unique<SharedInformer>(client_, resource, std::move(options), clock_);
  SharedInformer* raw = informer.get();
  informers_.emplace(std::move(key), std::move(informer));
  if (started_) raw->Start();
  return raw;
}

void SharedInformerFactory::Start() {
  absl::MutexLock lock(&mu_);
  started_ = true;
  for (auto& [key, informer] : informers_) informer->Start();  // Idempotent per informer.
}

void SharedInformerFactory::Stop() {
  absl::MutexLock lock(&mu_);
  for (auto& [key, informer] : informers_) informer->Stop();
}

bool SharedInformerFactory::WaitForCacheSync(absl::Time deadline) {
  std::vector<SharedInformer*> all;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [key, informer] : informers_) all.push_back(informer.get());
  }
  return kube::WaitForCacheSync(all, deadline);
}

}  // namespace nereid::kube
