#include "localcontroller/worker_attribution.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/net/edge_protocol.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "localcontroller/cloudlink/lc_db_adapter.h"
#include "localcontroller/worker/message_content.h"

namespace nereid::lc {
namespace {

// The desired object (kind, ns, name), or nullopt when the node does not hold it.
absl::StatusOr<std::optional<db::DesiredObject>> Held(db::LcDatabase::Tables& tables,
                                                      std::string_view kind, std::string_view ns,
                                                      std::string_view name) {
  absl::StatusOr<db::DesiredObject> object =
      tables.desired.Get({std::string(kind), std::string(ns), std::string(name), ""});
  if (absl::IsNotFound(object.status())) return std::nullopt;
  if (!object.ok()) return object.status();
  return *std::move(object);
}

}  // namespace

absl::StatusOr<worker::ReportOwner> AttributeWorker(db::LcDatabase::Tables& tables,
                                                    std::string_view ns, std::string_view worker,
                                                    std::string_view owner_name) {
  if (!worker.empty()) {
    ASSIGN_OR_RETURN(std::optional<db::DesiredObject> placed,
                     Held(tables, net::kKindWorker, ns, worker));
    if (placed.has_value()) {
      ASSIGN_OR_RETURN(edge::v1::Resource resource, DecodeDesiredObject(*placed));
      const std::string_view kind = worker::OwnerKindToKind(resource.worker().job_kind());
      if (!kind.empty() && !resource.worker().job_name().empty()) {
        return worker::ReportOwner{std::string(kind), resource.worker().job_name()};
      }
    }
  }
  if (owner_name.empty()) {
    return absl::NotFoundError("the report names no owner and no Worker object is placed for it");
  }
  std::vector<std::string> kinds;
  for (std::string_view kind : worker::ForwardedKinds()) {
    ASSIGN_OR_RETURN(std::optional<db::DesiredObject> held, Held(tables, kind, ns, owner_name));
    if (held.has_value()) kinds.emplace_back(kind);
  }
  if (kinds.size() == 1) return worker::ReportOwner{kinds[0], std::string(owner_name)};
  if (kinds.empty()) {
    return absl::NotFoundError(absl::StrCat("no object named \"", ToAbsl(owner_name),
                                            "\" is placed on this node"));
  }
  return absl::NotFoundError(absl::StrCat("several objects named \"", ToAbsl(owner_name),
                                          "\" are placed on this node (", absl::StrJoin(kinds, ", "),
                                          ")"));
}

}  // namespace nereid::lc
