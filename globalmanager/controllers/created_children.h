#pragma once

// CreatedChildren: the children a controller created that its informer may not show yet
// (kube-controller-manager's expectations, by object). A reconcile that runs before the informer
// has delivered them — the status write of the pass that created them enqueues the owner again at
// once — would otherwise create them again (an AlreadyExists round trip each) and judge the owner
// from a cache without them (a status written twice, once with "missing" children). Lookups answer
// from the informer's cache and fall back to the objects as the API returned them on create; an
// entry goes as soon as the informer delivers anything about the object (added, updated or
// deleted), or after `kCreatedChildrenHorizon` (should its events have beaten our create call, a
// child deleted meanwhile must not be believed forever). Thread-safe.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/kube/lister.h"
#include "common/kube/object.h"
#include "common/kube/selector.h"
#include "common/kube/shared_informer.h"
#include "common/time/clock.h"

namespace nereid::gm {

inline constexpr absl::Duration kCreatedChildrenHorizon = absl::Seconds(30);

class CreatedChildren {
 public:
  // Registers a handler on `informer` (the children's), which must outlive this.
  CreatedChildren(Clock* clock, kube::SharedInformer* informer);

  // After a successful create: `object` as the API returned it.
  void Created(const kube::Json& object);
  // The cached object, else the one we created if the cache does not show it yet; nullptr if
  // neither.
  // (Const for readers: forgetting what the cache has caught up with changes no answer.)
  kube::ObjectPtr Get(const kube::Lister& lister, std::string_view ns,
                      std::string_view name) const;
  // lister.List(ns, selector) and the matching objects we created that it does not show yet.
  std::vector<kube::ObjectPtr> List(const kube::Lister& lister, std::string_view ns,
                                    const kube::LabelSelector& selector) const;

 private:
  struct Entry {
    kube::ObjectPtr object;
    absl::Time created;
  };

  Clock* const clock_;
  mutable absl::Mutex mu_;
  mutable std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);  // by namespace/name
};

}  // namespace nereid::gm
