#include <catch2/catch.hpp>

#include "common/kube/resource.h"

namespace nereid::kube {
namespace {

TEST_CASE("paths follow the Kubernetes REST layout") {
  CHECK(resources::Pods().CollectionPath("ns") == "/api/v1/namespaces/ns/pods");
  CHECK(resources::Pods().CollectionPath("") == "/api/v1/pods");
  CHECK(resources::Pods().ObjectPath("ns", "p", "status") == "/api/v1/namespaces/ns/pods/p/status");
  CHECK(resources::Nodes().ObjectPath("ignored", "n1") == "/api/v1/nodes/n1");
  CHECK(resources::Deployments().ObjectPath("ns", "d", "scale") ==
        "/apis/apps/v1/namespaces/ns/deployments/d/scale");
  Resource datasets{"sedna.io", "v1alpha1", "datasets", "Dataset", true};
  CHECK(datasets.ApiVersion() == "sedna.io/v1alpha1");
  CHECK(datasets.QualifiedName() == "datasets.sedna.io");
  CHECK(resources::Leases().CollectionPath("kube-system") ==
        "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases");
}

}  // namespace
}  // namespace nereid::kube
