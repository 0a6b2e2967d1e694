#pragma once

// SharedInformerFactory: hands out one SharedInformer per (resource, namespace, selectors), so
// every controller watching pods shares one watch and one cache (client-go's
// SharedInformerFactory). Informers asked for before Start() start with it; Start() may be called
// again after asking for more. Thread-safe.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/kube/client.h"
#include "common/kube/shared_informer.h"
#include "common/time/clock.h"

namespace nereid::kube {

class SharedInformerFactory {
 public:
  // How informers cache a resource's objects where their options say nothing: what they drop
  // first (cache_transform.h; null: nothing) and the form they hold them in.
  struct CachePolicy {
    ObjectTransform transform;
    CacheEncoding encoding = CacheEncoding::kDecoded;
  };
  using CachePolicyFor = std::function<CachePolicy(const Resource&)>;

  // `default_resync` applies to informers whose options leave resync_period at zero.
  SharedInformerFactory(KubeClient* client, Clock* clock = nullptr,
                        absl::Duration default_resync = absl::ZeroDuration(),
                        CachePolicyFor default_policy = nullptr);
  ~SharedInformerFactory();

  // The informer for this resource and options' ns/selectors; the first caller's other options
  // (indexers, reflector tuning, resync) create it. Later callers add indexers with AddIndexers.
  SharedInformer* Informer(const Resource& resource, InformerOptions options = {});
  void Start();
  void Stop();
  bool WaitForCacheSync(absl::Time deadline);

 private:
  using Key = std::tuple<std::string, std::string, std::string, std::string>;

  KubeClient* const client_;
  Clock* const clock_;
  const absl::Duration default_resync_;
  const CachePolicyFor default_policy_;
  absl::Mutex mu_;
  std::map<Key, std::unique_ptr<SharedInformer>> informers_ ABSL_GUARDED_BY(mu_);
  bool started_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace nereid::kube
