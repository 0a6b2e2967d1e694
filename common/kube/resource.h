#pragma once

// Which REST collection an object lives in: group/version/resource plus its kind and scope.
// Paths follow the Kubernetes API layout: /api/v1/... for the core group, /apis/<g>/<v>/... else.

#include <string>
#include <string_view>

namespace nereid::kube {

struct Resource {
  std::string group;     // "" for the core group.
  std::string version;   // "v1", "v1alpha1", ...
  std::string resource;  // Lower-case plural, e.g. "pods", "datasets".
  std::string kind;      // e.g. "Pod", "Dataset".
  bool namespaced = true;

  // "v1" for the core group, "<group>/<version>" otherwise.
  std::string ApiVersion() const;
  // "/api/v1" or "/apis/<group>/<version>".
  std::string GroupVersionPath() const;
  // The collection: ".../namespaces/<ns>/<resource>", or ".../<resource>" when ns is empty or the
  // resource is cluster-scoped.
  std::string CollectionPath(std::string_view ns) const;
  // One object, optionally a subresource ("status", "scale").
  std::string ObjectPath(std::string_view ns, std::string_view name,
                         std::string_view subresource = "") const;
  // "pods", "datasets.sedna.io": how kubectl and logs name the resource.
  std::string QualifiedName() const;

  friend bool operator==(const Resource&, const Resource&) = default;
};

// Resources Nereid and devapiserver use.
namespace resources {
const Resource& Namespaces();
const Resource& Pods();
const Resource& Services();
const Resource& Endpoints();
const Resource& ConfigMaps();
const Resource& Secrets();
const Resource& Events();
const Resource& Nodes();
const Resource& ServiceAccounts();
const Resource& Leases();
const Resource& Deployments();
const Resource& HorizontalPodAutoscalers();
const Resource& CustomResourceDefinitions();
const Resource& PodGroups();  // scheduling.volcano.sh/v1beta1, served only where Volcano is installed.
}  // namespace resources

}  // namespace nereid::kube
