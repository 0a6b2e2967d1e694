#include "globalmanager/edgehub/report_ownership.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/net/edge_protocol.h"
#include "common/strings/absl_compat.h"

namespace nereid::gm {

std::optional<ReportOutcome> RefuseForeignReport(std::string_view node,
                                                 const edge::v1::ObjectRef* sent,
                                                 bool sent_elsewhere,
                                                 const edge::v1::StatusReport& report) {
  const edge::v1::ObjectRef& ref = report.ref();
  const bool recreated =
      sent != nullptr && !ref.uid().empty() && !sent->uid().empty() && ref.uid() != sent->uid();
  if (sent != nullptr && !recreated) return std::nullopt;
  if (sent == nullptr && sent_elsewhere) {
    return ReportOutcome::Rejected(
        std::string(kNotThisNode),
        absl::StrCat(net::RefString(ref), " is not sent to node ", ToAbsl(node)));
  }
  return ReportOutcome::Rejected(
      std::string(kObjectGone),
      absl::StrCat(net::RefString(ref), recreated ? " was re-created (uid changed)"
                                                  : " no longer exists for this node"));
}

}  // namespace nereid::gm
