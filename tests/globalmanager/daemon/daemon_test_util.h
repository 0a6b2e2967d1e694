#pragma once

// Helpers for GM daemon tests: plain HTTP GETs against the health listener and reading a node's
// stream past control messages.

#include <optional>
#include <string>

#include "tests/globalmanager/edgehub/test_node.h"

namespace nereid::gm::testing {

struct HttpResult {
  int status = 0;  // 0: no answer
  std::string body;
};
HttpResult HttpGet(int port, const std::string& path);

// The next Change on `node`'s stream, skipping HelloReply and ResyncDone (REQUIREs one).
edge::v1::Change NextChangeSkippingControl(nereid::testing::TestNode& node);
// The next ReportAck, skipping everything else; nullopt if none arrives in time.
std::optional<edge::v1::ReportAck> NextReportAckSkipping(nereid::testing::TestNode& node);

}  // namespace nereid::gm::testing
