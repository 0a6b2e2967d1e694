#pragma once

// The JSONPath subset CRD additionalPrinterColumns use: ".a.b.c", "{.a.b}", ".a[0].b", ".a[*].b",
// ".a['x.y']" and filters ".status.conditions[?(@.type=="Ready")].status" (== and !=).

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/kube/object.h"

namespace nereid::devapi {

// The values the path selects, in document order. A syntax error is InvalidArgument.
absl::StatusOr<std::vector<const kube::Json*>> EvalJsonPath(const kube::Json& root,
                                                            std::string_view path);

}  // namespace nereid::devapi
