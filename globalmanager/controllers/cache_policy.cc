#include "globalmanager/controllers/cache_policy.h"

#include "common/api/sedna_contract.h"
#include "common/kube/cache_transform.h"

namespace nereid::gm {

kube::SharedInformerFactory::CachePolicy GmCachePolicy(const kube::Resource& resource) {
  if (resource.group == api::kGroup) {
    return {kube::DropManagedFieldsAndLastApplied, kube::CacheEncoding::kCompact};
  }
  return {kube::DropManagedFields, kube::CacheEncoding::kDecoded};
}

}  // namespace nereid::gm
