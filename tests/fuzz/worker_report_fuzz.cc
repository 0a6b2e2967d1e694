// The LC's worker report intake (POST /sedna/workers/{worker}/info): any body from any process on
// the node. Input: the path's worker name, a newline, then the body.
//
// Properties: the reply is 200 or 400 (the sink never fails here), its message and the operator
// API's rendering of every kept worker serialize; every forwarded report passes the edge protocol's
// checks (the GM would otherwise refuse it: a silent loss) and survives the outbox encoding.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/net/edge_protocol.h"
#include "localcontroller/cloudlink/lc_db_adapter.h"
#include "localcontroller/server/api_json.h"
#include "localcontroller/worker/worker_intake.h"
#include "tests/fuzz/fuzz_input.h"

namespace nereid {
namespace {

class CheckingSink final : public lc::worker::ReportSink {
 public:
  absl::Status Enqueue(edge::v1::StatusReport report) override {
    report.set_seq(1);  // the outbox numbers reports; everything else must already be valid
    FUZZ_CHECK(net::ValidateReport(report).ok());
    absl::StatusOr<lc::EncodedReport> encoded = lc::EncodeReport(report);
    FUZZ_CHECK(encoded.ok());
    lc::db::OutboxEntry entry;
    entry.seq = 1;
    entry.key = encoded->key;
    entry.observed_version = encoded->observed_version;
    entry.payload = encoded->payload;
    absl::StatusOr<edge::v1::StatusReport> decoded = lc::DecodeReport(entry);
    FUZZ_CHECK(decoded.ok());
    FUZZ_CHECK(decoded->worker().worker_name() == report.worker().worker_name());
    FUZZ_CHECK(decoded->ref().name() == report.ref().name());
    ++enqueued;
    return absl::OkStatus();
  }
  int enqueued = 0;
};

}  // namespace
}  // namespace nereid

NEREID_FUZZ_QUIET_INITIALIZE()

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nereid;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  const std::string_view worker = newline == std::string_view::npos ? "" : input.substr(0, newline);
  const std::string_view body =
      newline == std::string_view::npos ? input : input.substr(newline + 1);

  CheckingSink sink;
  lc::worker::WorkerIntake intake({.sink = &sink, .max_workers = 4, .max_detail_bytes = 256});
  // Twice: the second report of the same worker replaces the first in the table.
  for (int round = 0; round < 2; ++round) {
    const lc::worker::IntakeReply reply = intake.Submit(worker, body);
    FUZZ_CHECK(reply.status == 200 || reply.status == 400);
    (void)lc::server::Dump(lc::server::SednaReplyJson(reply.status, reply.message));
  }
  FUZZ_CHECK(intake.size() <= 1);
  for (const lc::worker::WorkerRecord& record : intake.Workers()) {
    FUZZ_CHECK(record.name == worker);
    (void)lc::server::Dump(lc::server::ToJson(record));
  }
  const lc::worker::WorkerIntake::Stats stats = intake.stats();
  FUZZ_CHECK(stats.received == 2);
  FUZZ_CHECK(stats.forwarded == static_cast<uint64_t>(sink.enqueued));
  return 0;
}
