#pragma once

// The OpenAPI v3 subset CRDs use, applied the way the apiextensions server does on create and
// update: prune unknown fields (where the schema is structural), apply defaults, then validate.
// Supported: type, properties, additionalProperties, items, required, enum, minimum/maximum
// (+exclusive), minLength/maxLength, minItems/maxItems, pattern, default, nullable,
// x-kubernetes-preserve-unknown-fields, x-kubernetes-int-or-string,
// x-kubernetes-embedded-resource. Not supported (accepted, not enforced): allOf/anyOf/oneOf/not,
// format, x-kubernetes-validations (CEL), uniqueItems, multipleOf, list-type/map-keys.

#include <string>
#include <vector>

#include "common/kube/errors.h"
#include "common/kube/object.h"

namespace nereid::devapi {

using kube::Json;

struct SchemaOutcome {
  std::vector<kube::StatusCause> causes;    // validation failures, field paths like spec.format
  std::vector<std::string> unknown_fields;  // pruned fields (for fieldValidation=Strict|Warn)
};

// Prunes, defaults and validates `object` (a whole custom resource) in place. apiVersion, kind
// and metadata at the root are never pruned.
SchemaOutcome ApplySchema(const Json& schema, Json* object);

}  // namespace nereid::devapi
