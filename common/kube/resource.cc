#include "common/kube/resource.h"

#include "absl/strings/str_cat.h"
#include "common/strings/absl_compat.h"

namespace nereid::kube {

std::string Resource::ApiVersion() const {
  return group.empty() ? version : absl::StrCat(group, "/", version);
}

std::string Resource::GroupVersionPath() const {
  return group.empty() ? absl::StrCat("/api/", version) : absl::StrCat("/apis/", group, "/", version);
}

std::string Resource::CollectionPath(std::string_view ns) const {
  if (!namespaced || ns.empty()) return absl::StrCat(GroupVersionPath(), "/", resource);
  return absl::StrCat(GroupVersionPath(), "/namespaces/", ToAbsl(ns), "/", resource);
}

std::string Resource::ObjectPath(std::string_view ns, std::string_view name,
                                 std::string_view subresource) const {
  std::string path = absl::StrCat(CollectionPath(namespaced ? ns : ""), "/", ToAbsl(name));
  if (!subresource.empty()) absl::StrAppend(&path, "/", ToAbsl(subresource));
  return path;
}

std::string Resource::QualifiedName() const {
  return group.empty() ? resource : absl::StrCat(resource, ".", group);
}

namespace resources {
namespace {
Resource Make(std::string group, std::string version, std::string resource, std::string kind,
              bool namespaced) {
  return Resource{std::move(group), std::move(version), std::move(resource), std::move(kind),
                  namespaced};
}
}  // namespace

#define NEREID_RESOURCE(fn, group, version, resource, kind, namespaced) \
  const Resource& fn() {                                                \
    static const Resource r = Make(group, version, resource, kind, namespaced); \
    return r;                                                           \
  }

NEREID_RESOURCE(Namespaces, "", "v1", "namespaces", "Namespace", false)
NEREID_RESOURCE(Pods, "", "v1", "pods", "Pod", true)
NEREID_RESOURCE(Services, "", "v1", "services", "Service", true)
NEREID_RESOURCE(Endpoints, "", "v1", "endpoints", "Endpoints", true)
NEREID_RESOURCE(ConfigMaps, "", "v1", "configmaps", "ConfigMap", true)
NEREID_RESOURCE(Secrets, "", "v1", "secrets", "Secret", true)
NEREID_RESOURCE(Events, "", "v1", "events", "Event", true)
NEREID_RESOURCE(Nodes, "", "v1", "nodes", "Node", false)
NEREID_RESOURCE(ServiceAccounts, "", "v1", "serviceaccounts", "ServiceAccount", true)
NEREID_RESOURCE(Leases, "coordination.k8s.io", "v1", "leases", "Lease", true)
NEREID_RESOURCE(Deployments, "apps", "v1", "deployments", "Deployment", true)
NEREID_RESOURCE(HorizontalPodAutoscalers, "autoscaling", "v2", "horizontalpodautoscalers",
                "HorizontalPodAutoscaler", true)
NEREID_RESOURCE(CustomResourceDefinitions, "apiextensions.k8s.io", "v1",
                "customresourcedefinitions", "CustomResourceDefinition", false)
NEREID_RESOURCE(PodGroups, "scheduling.volcano.sh", "v1beta1", "podgroups", "PodGroup", true)

#undef NEREID_RESOURCE

}  // namespace resources
}  // namespace nereid::kube
