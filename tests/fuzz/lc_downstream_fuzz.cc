// What a malicious or corrupted GM can make an LC do: a sequence of downstream messages (changes,
// report answers, resync markers), structured or raw protobuf bytes, applied the way the cloud
// link applies them (ApplyChange for changes, the outbox for report answers) to a real LC
// database on a RAM disk (a fresh one per input).
//
// Properties: a change is applied or refused as invalid, never a local failure on a healthy disk
// (which would make the link drop the stream and retry the same change forever); the database then
// holds exactly the accepted changes, each readable back and valid for this node (it is handed to
// the handlers again at restart); answers about reports keep the outbox's books balanced
// (enqueued == replaced + acked + rejected + depth).

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include <fuzzer/FuzzedDataProvider.h>

#include "common/net/edge_protocol.h"
#include "localcontroller/cloudlink/lc_db_adapter.h"
#include "localcontroller/cloudlink/spec_validation.h"
#include "localcontroller/db/lc_database.h"
#include "tests/fuzz/edge_messages.h"
#include "tests/fuzz/fuzz_input.h"

namespace nereid {
namespace {

namespace fs = std::filesystem;
namespace v1 = edge::v1;

constexpr char kNode[] = "edge-a";
fs::path workspace;

v1::SyncResponse NextMessage(FuzzedDataProvider& in) {
  v1::SyncResponse message;
  if (fuzz::MaybeRaw(in, &message)) return message;
  switch (in.ConsumeIntegralInRange(0, 4)) {
    case 0:
    case 1: {
      v1::Change* change = message.mutable_change();
      change->set_nonce(in.ConsumeRandomLengthString(8));
      *change->mutable_upsert() = fuzz::MakeResource(in, kNode);
      break;
    }
    case 2: {
      v1::Removal* removal = message.mutable_change()->mutable_remove();
      *removal->mutable_ref() = fuzz::MakeRef(in);
      removal->set_version(in.ConsumeRandomLengthString(4));
      break;
    }
    case 3: {
      v1::ReportAck* ack = message.mutable_report_ack();
      ack->set_seq(in.ConsumeBool() ? in.ConsumeIntegralInRange<uint64_t>(0, 5)
                                    : in.ConsumeIntegral<uint64_t>());
      ack->set_result(static_cast<v1::ReportResult>(in.ConsumeIntegralInRange(0, 4)));
      ack->set_reason(in.ConsumeRandomLengthString(16));
      break;
    }
    default:
      message.mutable_resync_done()->set_upserts(in.ConsumeIntegral<uint32_t>());
      break;
  }
  return message;
}

}  // namespace
}  // namespace nereid

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  using namespace nereid;
  fuzz::QuietLogs();
  std::string pattern = (fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path()) /
                        "nereid-fuzz-lc-XXXXXX";
  FUZZ_CHECK(mkdtemp(pattern.data()) != nullptr);
  workspace = pattern;
  std::atexit([] { fs::remove_all(workspace); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nereid;
  for (const char* file : {"lc.db", "lc.db-wal", "lc.db-shm"}) fs::remove(workspace / file);
  lc::db::LcDatabase::Options options;
  options.path = (workspace / "lc.db").string();
  options.node_name = kNode;
  options.quick_check_on_open = false;
  absl::StatusOr<std::unique_ptr<lc::db::LcDatabase>> db = lc::db::LcDatabase::Open(options);
  FUZZ_CHECK(db.ok());
  lc::LcDbDesiredStateStore store(db->get());
  lc::LcDbReportSource reports(db->get());
  // Reports waiting for the GM's answer (seq 1..3).
  for (const char* worker : {"w0", "w1", "w2"}) {
    v1::StatusReport report;
    report.mutable_ref()->set_kind("JointInferenceService");
    report.mutable_ref()->set_namespace_("default");
    report.mutable_ref()->set_name("a");
    report.mutable_worker()->set_worker_name(worker);
    FUZZ_CHECK(lc::EnqueueReport(**db, report).ok());
  }

  FuzzedDataProvider in(data, size);
  std::map<std::string, v1::Resource> held;  // what the accepted changes leave on the node
  for (int i = 0; i < 32 && in.remaining_bytes() > 0; ++i) {
    v1::SyncResponse message = NextMessage(in);
    if (!fuzz::OverTheWire(&message)) continue;
    switch (message.message_case()) {
      case v1::SyncResponse::kChange: {
        const absl::Status applied = lc::ApplyChange(message.change(), kNode, store);
        FUZZ_CHECK(applied.ok() || absl::IsInvalidArgument(applied) ||
                   absl::IsFailedPrecondition(applied));
        if (!applied.ok()) break;
        if (message.change().has_upsert()) {
          held[net::ObjectKey(message.change().upsert().ref())] = message.change().upsert();
        } else {
          held.erase(net::ObjectKey(message.change().remove().ref()));
        }
        break;
      }
      case v1::SyncResponse::kReportAck: {
        const v1::ReportAck& ack = message.report_ack();
        if (ack.result() == v1::REPORT_ACCEPTED) {
          FUZZ_CHECK(reports.Ack(ack.seq()).ok());
        } else if (ack.result() == v1::REPORT_REJECTED) {
          FUZZ_CHECK(reports.Reject(ack.seq(), ack.reason()).ok());
        }
        break;
      }
      case v1::SyncResponse::kResyncDone:
        FUZZ_CHECK(store.RecordSync(absl::FromUnixSeconds(1700000000)).ok());
        break;
      default: break;
    }
  }

  absl::StatusOr<std::vector<v1::InventoryItem>> inventory = store.Inventory();
  FUZZ_CHECK(inventory.ok());
  FUZZ_CHECK(inventory->size() == held.size());
  for (const v1::InventoryItem& item : *inventory) {
    auto it = held.find(net::ObjectKey(item.ref()));
    FUZZ_CHECK(it != held.end());
    FUZZ_CHECK(item.version() == it->second.version());
    absl::StatusOr<lc::db::DesiredObject> stored = (*db)->Get(lc::ToDbRef(item.ref()));
    FUZZ_CHECK(stored.ok());
    absl::StatusOr<v1::Resource> decoded = lc::DecodeDesiredObject(*stored);
    FUZZ_CHECK(decoded.ok());
    FUZZ_CHECK(lc::ValidateForNode(*decoded, kNode).ok());
  }
  absl::StatusOr<lc::db::OutboxStats> stats = (*db)->GetOutboxStats();
  FUZZ_CHECK(stats.ok());
  FUZZ_CHECK(stats->enqueued == stats->replaced + stats->acked + stats->rejected + stats->depth);
  return 0;
}
