#pragma once

// Kubernetes protobuf request bodies ("k8s\0" + runtime.Unknown{typeMeta, raw}) for the few
// built-in kinds that kubectl's typed-client generator commands send (`kubectl create namespace`,
// `create configmap`, `create secret generic|tls|docker-registry`, `create serviceaccount`):
// Namespace, ConfigMap, Secret, ServiceAccount. Anything else is UnsupportedMediaType (415) with
// a message pointing at `kubectl apply -f`. Decoding is table-driven from the field numbers in
// k8s.io/api/core/v1/generated.proto and apimachinery's ObjectMeta; unknown fields are skipped.

#include <string_view>

#include "absl/status/statusor.h"
#include "common/kube/object.h"

namespace nereid::devapi {

absl::StatusOr<kube::Json> DecodeKubeProtobuf(std::string_view body);

}  // namespace nereid::devapi
