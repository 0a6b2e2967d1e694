#pragma once

// How the GM's informers cache each resource (kube::SharedInformerFactory's policy): what they
// drop before caching, and which objects they hold packed. The daemon and the controller tests
// use the same policy.

#include "common/kube/resource.h"
#include "common/kube/shared_informer_factory.h"

namespace nereid::gm {

// Every resource: managedFields dropped. Sedna kinds also lose kubectl's last-applied annotation
// (the GM writes them only through /status; children are updated whole from cached copies, so
// they keep it), and are held packed: they are the objects users create by the thousand, and the
// controllers read them one key at a time.
kube::SharedInformerFactory::CachePolicy GmCachePolicy(const kube::Resource& resource);

}  // namespace nereid::gm
