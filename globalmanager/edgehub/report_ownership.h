#pragma once

// Whose a report is: the one check of a StatusReport's ownership. The hub makes it (it knows the
// node from its client certificate and what it sent that node), before a report reaches the
// ReportRouter; the controllers trust every report they are handed.

#include <optional>
#include <string_view>

#include "globalmanager/edgehub/report_handler.h"
#include "nereid/edge/v1/resources.pb.h"
#include "nereid/edge/v1/status.pb.h"

namespace nereid::gm {

inline constexpr std::string_view kNotThisNode = "NotThisNode";
inline constexpr std::string_view kObjectGone = "ObjectGone";

// nullopt when `node` may report about `report.ref()`: the hub sends it the object (`sent`, the
// ref it was sent under; nullptr when none) with the same uid. Otherwise the rejection: NotThisNode
// when only other nodes are sent the object (`sent_elsewhere`), ObjectGone when it is gone or
// was re-created (another uid).
std::optional<ReportOutcome> RefuseForeignReport(std::string_view node,
                                                 const edge::v1::ObjectRef* sent,
                                                 bool sent_elsewhere,
                                                 const edge::v1::StatusReport& report);

}  // namespace nereid::gm
