#include "tests/globalmanager/daemon/daemon_test_util.h"

#include <catch2/catch.hpp>

#include "httplib.h"

namespace nereid::gm::testing {

HttpResult HttpGet(int port, const std::string& path) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(5);
  client.set_read_timeout(5);
  httplib::Result result = client.Get(path.c_str());
  if (!result) return {};
  return {result->status, result->body};
}

edge::v1::Change NextChangeSkippingControl(nereid::testing::TestNode& node) {
  for (int i = 0; i < 20; ++i) {
    std::optional<edge::v1::SyncResponse> response = node.Next();
    REQUIRE(response.has_value());
    if (response->has_change()) return response->change();
  }
  FAIL("no Change among 20 messages");
  return {};
}

std::optional<edge::v1::ReportAck> NextReportAckSkipping(nereid::testing::TestNode& node) {
  for (int i = 0; i < 20; ++i) {
    std::optional<edge::v1::SyncResponse> response = node.Next();
    if (!response.has_value()) return std::nullopt;
    if (response->has_report_ack()) return response->report_ack();
  }
  return std::nullopt;
}

}  // namespace nereid::gm::testing
