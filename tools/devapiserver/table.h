#pragma once

// meta.k8s.io/v1 Table output, which kubectl asks for with
// "Accept: application/json;as=Table;v=v1;g=meta.k8s.io". CRDs print their
// additionalPrinterColumns (Name first, date columns as ages); built-in kinds print the columns
// kubectl users know (pods: Ready/Status/Restarts/Age, wide: IP/Node ...). Columns with
// priority > 0 are the -o wide ones; kubectl hides them otherwise.

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/kube/object.h"
#include "tools/devapiserver/registry.h"

namespace nereid::devapi {

struct TableOptions {
  bool include_column_definitions = true;  // false for watch events after the first
  std::string include_object = "Metadata";  // None | Metadata | Object
  absl::Time now;
};

// Kubernetes' duration.HumanDuration: "45s", "5m3s", "3h", "2d4h", "3y".
std::string HumanDuration(absl::Duration d);

std::vector<PrinterColumn> TableColumns(const ResourceType& type);

// A Table for `objects`; list metadata (resourceVersion, continue) is the caller's to add.
Json BuildTable(const ResourceType& type, const std::vector<Json>& objects,
                const TableOptions& options);

}  // namespace nereid::devapi
