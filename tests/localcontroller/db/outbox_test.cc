#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/time/fake_clock.h"
#include "localcontroller/db/lc_database.h"
#include "tests/localcontroller/db/test_util.h"

namespace nereid::lc::db {
namespace {

using testing::DatasetRef;
using testing::MakeOptions;
using testing::OpenOrDie;
using testing::Ref;
using testing::TempDir;

OutboxKey DatasetStatus(const std::string& name) {
  return OutboxKey{DatasetRef("ns", name), kReportDatasetStatus, ""};
}

OutboxKey WorkerReport(const std::string& job, const std::string& worker) {
  return OutboxKey{Ref("IncrementalLearningJob", "ns", job, "uid-" + job), kReportWorker, worker};
}

void CheckCountersConsistent(LcDatabase& db) {
  auto stats = db.GetOutboxStats();
  REQUIRE(stats.ok());
  CHECK(stats->enqueued == stats->replaced + stats->acked + stats->rejected + stats->depth);
}

TEST_CASE("the latest state replaces an older unsent one for the same key") {
  FakeClock clock;
  auto db = OpenOrDie(MakeOptions(":memory:", &clock));
  auto s1 = db->Enqueue(DatasetStatus("ds"), "v1", "count=1");
  REQUIRE(s1.ok());
  clock.Advance(absl::Seconds(1));
  auto s2 = db->Enqueue(DatasetStatus("ds"), "v2", "count=2");
  REQUIRE(s2.ok());
  CHECK(*s2 > *s1);
  CHECK(*db->OutboxDepth() == 1);

  auto pending = db->Pending(10);
  REQUIRE(pending.ok());
  REQUIRE(pending->size() == 1);
  const OutboxEntry& e = (*pending)[0];
  CHECK(e.seq == *s2);
  CHECK(e.key.object.kind == "Dataset");
  CHECK(e.key.object.ns == "ns");
  CHECK(e.key.object.name == "ds");
  CHECK(e.key.object.uid == "uid-ds");
  CHECK(e.key.report_type == kReportDatasetStatus);
  CHECK(e.key.sub_key.empty());
  CHECK(e.observed_version == "v2");
  CHECK(e.payload == "count=2");
  CHECK(e.enqueued_at == clock.Now());

  // Other report types and sub keys of the same object are separate entries.
  REQUIRE(db->Enqueue(WorkerReport("job", "w1"), "v1", "r1").ok());
  REQUIRE(db->Enqueue(WorkerReport("job", "w2"), "v1", "r2").ok());
  REQUIRE(db->Enqueue(WorkerReport("job", "w1"), "v1", "r1b").ok());
  REQUIRE(db->Enqueue(OutboxKey{DatasetRef("ns", "ds"), kReportTrigger, "train"}, "v2", "t").ok());
  CHECK(*db->OutboxDepth() == 4);
  auto stats = db->GetOutboxStats();
  CHECK(stats->enqueued == 6);
  CHECK(stats->replaced == 2);
  CheckCountersConsistent(*db);
}

TEST_CASE("Pending is ordered by seq, limited, and can start after a seq") {
  auto db = OpenOrDie(MakeOptions(":memory:"));
  for (int i = 0; i < 5; ++i) {
    REQUIRE(db->Enqueue(DatasetStatus(absl::StrCat("d", i)), "1", absl::StrCat(i)).ok());
  }
  // Re-enqueue d1: it moves to the end with a new seq.
  REQUIRE(db->Enqueue(DatasetStatus("d1"), "2", "1b").ok());
  auto all = db->Pending(100);
  REQUIRE(all->size() == 5);
  std::vector<std::string> names;
  int64_t last = 0;
  for (const OutboxEntry& e : *all) {
    CHECK(e.seq > last);
    last = e.seq;
    names.push_back(e.key.object.name);
  }
  CHECK(names == std::vector<std::string>{"d0", "d2", "d3", "d4", "d1"});

  auto first_two = db->Pending(2);
  REQUIRE(first_two->size() == 2);
  auto next = db->Pending(2, (*first_two)[1].seq);
  REQUIRE(next->size() == 2);
  CHECK((*next)[0].key.object.name == "d3");
  CHECK((*next)[1].key.object.name == "d4");
  CHECK(db->Pending(10, last)->empty());
  CHECK(db->Pending(0)->empty());
}

TEST_CASE("an ACK of a superseded seq keeps the newer state") {
  auto db = OpenOrDie(MakeOptions(":memory:"));
  int64_t old_seq = *db->Enqueue(DatasetStatus("ds"), "v1", "old");
  int64_t new_seq = *db->Enqueue(DatasetStatus("ds"), "v2", "new");
  // The GM acks the old report (it was in flight when the new state was enqueued).
  CHECK(*db->Ack(old_seq) == false);
  CHECK(*db->OutboxDepth() == 1);
  CHECK((*db->Pending(10))[0].payload == "new");
  CHECK(*db->Ack(new_seq) == true);
  CHECK(*db->OutboxDepth() == 0);
  CHECK(*db->Ack(new_seq) == false);  // duplicate ACK
  CHECK(*db->Ack(12345) == false);    // unknown seq
  auto stats = db->GetOutboxStats();
  CHECK(stats->acked == 1);
  CHECK(stats->replaced == 1);
  CheckCountersConsistent(*db);
}

TEST_CASE("Reject drops and counts a report the GM refused for good") {
  auto db = OpenOrDie(MakeOptions(":memory:"));
  int64_t gone = *db->Enqueue(DatasetStatus("gone"), "v1", "p");
  int64_t old_seq = *db->Enqueue(DatasetStatus("ds"), "v1", "old");
  int64_t new_seq = *db->Enqueue(DatasetStatus("ds"), "v2", "new");
  CHECK(*db->Reject(gone, "dataset ns/gone not found") == true);
  CHECK(*db->Reject(old_seq, "stale") == false);  // superseded: the newer state survives
  CHECK(*db->OutboxDepth() == 1);
  CHECK((*db->Pending(10))[0].seq == new_seq);
  CHECK(*db->Reject(gone, "again") == false);
  auto stats = db->GetOutboxStats();
  CHECK(stats->rejected == 1);
  CHECK(stats->acked == 0);
  CheckCountersConsistent(*db);
}

TEST_CASE("seq is strictly increasing across deletions and restarts, never reused") {
  TempDir dir;
  const std::string path = dir.File("lc.db");
  int64_t highest = 0;
  {
    auto db = OpenOrDie(MakeOptions(path));
    for (int i = 0; i < 3; ++i) highest = *db->Enqueue(DatasetStatus(absl::StrCat("d", i)), "1", "p");
    CHECK(highest == 3);
    // Delete the newest entry and then everything: the counter must not fall back.
    REQUIRE(*db->Ack(highest));
    REQUIRE(*db->Reject(2, "gone"));
    REQUIRE(*db->Ack(1));
    CHECK(*db->OutboxDepth() == 0);
    int64_t next = *db->Enqueue(DatasetStatus("d9"), "1", "p");
    CHECK(next == highest + 1);
    highest = next;
  }
  auto db = OpenOrDie(MakeOptions(path));
  auto stats = db->GetOutboxStats();
  CHECK(stats->last_seq == highest);
  CHECK(stats->depth == 1);
  CHECK((*db->Pending(10))[0].seq == highest);  // pending entries survive the restart
  int64_t after_restart = *db->Enqueue(DatasetStatus("d9"), "2", "p2");
  CHECK(after_restart == highest + 1);
  CheckCountersConsistent(*db);
}

TEST_CASE("outbox keys must name an object and a report type") {
  auto db = OpenOrDie(MakeOptions(":memory:"));
  CHECK(db->Enqueue(OutboxKey{Ref("", "ns", "n"), kReportDatasetStatus, ""}, "1", "p")
            .status()
            .code() == absl::StatusCode::kInvalidArgument);
  CHECK(db->Enqueue(OutboxKey{Ref("Dataset", "ns", ""), kReportDatasetStatus, ""}, "1", "p")
            .status()
            .code() == absl::StatusCode::kInvalidArgument);
  CHECK(db->Enqueue(OutboxKey{Ref("Dataset", "ns", "n"), "", ""}, "1", "p").status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(db->GetOutboxStats()->last_seq == 0);  // a refused enqueue consumes no seq
}

TEST_CASE("a report enqueued with its checkpoint in one Write stands or falls with it") {
  auto db = OpenOrDie(MakeOptions(":memory:"));
  REQUIRE(db->Upsert(DatasetRef("ns", "ds"), "1", "spec").ok());
  REQUIRE(db->Write([](LcDatabase::Tables& t) -> absl::Status {
    absl::Status s = t.datasets.PutFile("ns", "ds", "/data/x.txt", "offset=10");
    if (!s.ok()) return s;
    s = t.datasets.PutResult("ns", "ds", DatasetResult{3, "", "", absl::UnixEpoch()});
    if (!s.ok()) return s;
    return t.outbox.Enqueue(DatasetStatus("ds"), "1", "count=3").status();
  }).ok());
  CHECK(*db->OutboxDepth() == 1);
  CHECK(db->FileCheckpoints("ns", "ds")->size() == 1);

  // The dataset is deleted between scan and commit: the checkpoint write fails, so no report for
  // it is left half-recorded either.
  REQUIRE(*db->Delete(DatasetRef("ns", "ds")));
  absl::Status late = db->Write([](LcDatabase::Tables& t) -> absl::Status {
    absl::StatusOr<int64_t> seq = t.outbox.Enqueue(DatasetStatus("ds"), "1", "count=4");
    if (!seq.ok()) return seq.status();
    return t.datasets.PutFile("ns", "ds", "/data/x.txt", "offset=20");
  });
  CHECK(absl::IsNotFound(late));
  CHECK((*db->Pending(10))[0].payload == "count=3");
}

}  // namespace
}  // namespace nereid::lc::db
