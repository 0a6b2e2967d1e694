#pragma once

// Reads beside the plain get (the Store's List is in list_paging.cc): label and field selectors,
// and limit/continue paging over a consistent snapshot rebuilt from the watch history.

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/kube/object.h"
#include "tools/devapiserver/registry.h"
#include "tools/devapiserver/storage.h"
#include "tools/devapiserver/watch.h"

namespace nereid::devapi {

// The field selector fields a resource supports (metadata.name/namespace everywhere, plus pod,
// event, namespace, node and secret fields as upstream). nullopt: not supported.
std::optional<std::string> FieldValue(const ResourceType& type, const Json& object,
                                      std::string_view field);

// The objects a list or watch request selects; 400 for a selector that does not parse or names
// a field the resource does not support.
absl::StatusOr<Selection> MakeSelection(const ResourceType& type, const ListRequest& request);

}  // namespace nereid::devapi
