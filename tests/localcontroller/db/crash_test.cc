// Crash safety of the LC database: a forked child writes in a loop (upserts, checkpoints and
// enqueues in transactions, acks, rejects, deletes) and reports every committed step to the parent
// over a pipe; the parent SIGKILLs it at a random point, reopens the database and checks that it is
// intact and that everything the child saw committed is there (or was acked/replaced since).
// Intents are written to the pipe *before* a destructive call, so an ack or delete that committed
// just before the kill is never mistaken for a loss.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/log/log.h"
#include "localcontroller/db/lc_database.h"
#include "tests/localcontroller/db/test_util.h"

namespace nereid::lc::db {
namespace {

using testing::MakeOptions;
using testing::TempDir;

constexpr int kObjects = 12;
constexpr int kRounds = 20;
constexpr int64_t kChildMaxOps = 200000;  // the child's loop is bounded even if never killed

std::string ObjName(int i) { return absl::StrCat("ds", i); }
ObjectRef Obj(const std::string& name) { return ObjectRef{kDatasetKind, "crash", name, "uid-" + name}; }
OutboxKey Key(const std::string& name) { return OutboxKey{Obj(name), kReportDatasetStatus, ""}; }
// Contents derived from (object, version), so the parent can tell a torn or mixed-up row.
std::string Spec(int64_t version) { return absl::StrCat("spec:", version, ":", std::string(300, 's')); }
std::string Checkpoint(const std::string& name, int64_t version) {
  return absl::StrCat("cp:", name, ":", version);
}
std::string Payload(const std::string& name, int64_t version) {
  return absl::StrCat("payload:", name, ":", version, ":", std::string(200, 'p'));
}

// --- Child side. No Catch2 here: plain code that reports over the pipe and _exits.

void Emit(int fd, const std::string& line) {
  std::string data = line + "\n";
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = write(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(3);
    off += static_cast<size_t>(n);
  }
}

int Fail(int fd, const std::string& what, const absl::Status& status) {
  Emit(fd, absl::StrCat("X ", what, ": ", status.ToString()));
  return 2;
}

// One object's write: desired object + its checkpoint + its status report, in the caller's
// transaction.
absl::StatusOr<int64_t> WriteObject(LcDatabase::Tables& t, const std::string& name,
                                    int64_t version) {
  const std::string v = absl::StrCat(version);
  absl::Status s = t.desired.Upsert(Obj(name), v, Spec(version));
  if (!s.ok()) return s;
  s = t.datasets.PutFile("crash", name, "/data/" + name, Checkpoint(name, version));
  if (!s.ok()) return s;
  return t.outbox.Enqueue(Key(name), v, Payload(name, version));
}

int ChildLoop(const std::string& path, int fd, int round, uint32_t seed) {
  log::SetMinLevel(log::Level::kError);
  auto opened = LcDatabase::Open(MakeOptions(path));
  if (!opened.ok()) return Fail(fd, "open", opened.status());
  LcDatabase& db = **opened;
  std::mt19937 rng(seed);
  std::map<std::string, std::vector<int64_t>> seqs;  // for acking superseded seqs on purpose
  Emit(fd, "S");
  for (int64_t i = 0; i < kChildMaxOps; ++i) {
    const int64_t version = int64_t{round} * 1'000'000 + i + 1;
    const int choice = static_cast<int>(rng() % 10);
    if (choice == 0) {  // several objects in one transaction
      std::vector<std::pair<std::string, int64_t>> done;
      absl::Status s = db.Write([&](LcDatabase::Tables& t) -> absl::Status {
        for (int j = 0; j < 4; ++j) {
          const std::string name = ObjName(static_cast<int>(rng() % kObjects));
          absl::StatusOr<int64_t> seq = WriteObject(t, name, version);
          if (!seq.ok()) return seq.status();
          done.emplace_back(name, *seq);
        }
        return absl::OkStatus();
      });
      if (!s.ok()) return Fail(fd, "batch", s);
      for (const auto& [name, seq] : done) {
        Emit(fd, absl::StrCat("E ", seq, " ", name, " ", version));
        seqs[name].push_back(seq);
      }
    } else if (choice == 1) {  // the GM deleted a dataset
      const std::string name = ObjName(static_cast<int>(rng() % kObjects));
      Emit(fd, absl::StrCat("d ", name));
      absl::StatusOr<bool> deleted = db.Delete(Obj(name));
      if (!deleted.ok()) return Fail(fd, "delete", deleted.status());
    } else {
      const std::string name = ObjName(static_cast<int>(rng() % kObjects));
      int64_t seq = 0;
      absl::Status s = db.Write([&](LcDatabase::Tables& t) -> absl::Status {
        absl::StatusOr<int64_t> written = WriteObject(t, name, version);
        if (!written.ok()) return written.status();
        seq = *written;
        return absl::OkStatus();
      });
      if (!s.ok()) return Fail(fd, "write", s);
      Emit(fd, absl::StrCat("E ", seq, " ", name, " ", version));
      seqs[name].push_back(seq);
    }
    if (rng() % 2 == 0) {  // the GM acks (or rejects) something in flight
      auto pending = db.Pending(3);
      if (!pending.ok()) return Fail(fd, "pending", pending.status());
      if (!pending->empty()) {
        const OutboxEntry& e = (*pending)[rng() % pending->size()];
        const bool reject = rng() % 5 == 0;
        Emit(fd, absl::StrCat("I ", e.seq, " ", e.key.object.name));
        absl::StatusOr<bool> removed = reject ? db.Reject(e.seq, "gone") : db.Ack(e.seq);
        if (!removed.ok()) return Fail(fd, "ack", removed.status());
        if (!*removed) return Fail(fd, "ack", absl::InternalError("a pending seq was not removed"));
        Emit(fd, absl::StrCat("A ", e.seq));
      }
    }
    if (rng() % 7 == 0) {  // a late ACK for a superseded state must not remove the newer one
      const std::string name = ObjName(static_cast<int>(rng() % kObjects));
      const std::vector<int64_t>& list = seqs[name];
      if (list.size() >= 2) {
        absl::StatusOr<bool> removed = db.Ack(list[list.size() - 2]);
        if (!removed.ok()) return Fail(fd, "stale ack", removed.status());
        if (*removed) return Fail(fd, "stale ack", absl::InternalError("removed a superseded seq"));
      }
    }
  }
  return 0;
}

// --- Parent side.

struct Observed {
  std::map<int64_t, std::pair<std::string, int64_t>> enqueued;  // seq -> (object, version)
  std::map<std::string, int64_t> last_seq_for;                   // object -> highest reported seq
  std::map<std::string, int64_t> last_version_for;               // object -> highest version
  std::map<std::string, int64_t> intent_seq_for;                 // object -> highest ack intent
  std::set<std::string> deleted_after_write;  // a delete intent follows the object's last write
  std::set<int64_t> removed;                  // acks/rejects the child saw commit
  int64_t max_seq = 0;
  bool started = false;
  std::string failure;
};

void Apply(const std::string& line, Observed& o) {
  std::vector<std::string> f = absl::StrSplit(line, ' ');
  int64_t n = 0;
  if (f[0] == "S") {
    o.started = true;
  } else if (f[0] == "E" && f.size() == 4 && absl::SimpleAtoi(f[1], &n)) {
    int64_t version = 0;
    REQUIRE(absl::SimpleAtoi(f[3], &version));
    o.enqueued[n] = {f[2], version};
    o.last_seq_for[f[2]] = std::max(o.last_seq_for[f[2]], n);
    o.last_version_for[f[2]] = version;
    o.deleted_after_write.erase(f[2]);
    o.max_seq = std::max(o.max_seq, n);
  } else if (f[0] == "I" && f.size() == 3 && absl::SimpleAtoi(f[1], &n)) {
    o.intent_seq_for[f[2]] = std::max(o.intent_seq_for[f[2]], n);
  } else if (f[0] == "A" && absl::SimpleAtoi(f[1], &n)) {
    o.removed.insert(n);
  } else if (f[0] == "d") {
    o.deleted_after_write.insert(f[1]);
  } else if (f[0] == "X") {
    o.failure = line;
  } else {
    o.failure = "unparsable line from child: " + line;
  }
}

// Reads complete lines from `fd` into `o` until `stop(o)` or EOF; false on a 20 s stall.
template <typename Stop>
bool ReadLines(int fd, std::string& buffer, Observed& o, Stop stop) {
  char chunk[4096];
  while (!stop(o)) {
    pollfd p{fd, POLLIN, 0};
    int ready = poll(&p, 1, 20000);
    if (ready <= 0) return false;
    ssize_t n = read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;  // EOF: the child is gone
    buffer.append(chunk, static_cast<size_t>(n));
    size_t newline;
    while ((newline = buffer.find('\n')) != std::string::npos) {
      Apply(buffer.substr(0, newline), o);
      buffer.erase(0, newline + 1);
    }
  }
  return true;
}

void CheckAfterCrash(const std::string& path, const Observed& o, int64_t* last_seq_seen) {
  auto opened = LcDatabase::Open(MakeOptions(path));
  INFO(opened.status().ToString());
  REQUIRE(opened.ok());
  LcDatabase& db = **opened;
  REQUIRE(db.CheckIntegrity().ok());

  auto stats = db.GetOutboxStats();
  REQUIRE(stats.ok());
  CHECK(stats->enqueued == stats->replaced + stats->acked + stats->rejected + stats->depth);
  CHECK(stats->last_seq >= o.max_seq);
  CHECK(stats->last_seq >= *last_seq_seen);  // the counter never goes back
  *last_seq_seen = stats->last_seq;

  auto pending = db.Pending(1000);
  REQUIRE(pending.ok());
  CHECK(static_cast<int64_t>(pending->size()) == stats->depth);
  CHECK(stats->depth <= kObjects);  // one entry per key: bounded
  std::map<std::string, OutboxEntry> entry_for;
  for (const OutboxEntry& e : *pending) {
    INFO("outbox entry seq " << e.seq << " " << e.key.DebugString());
    CHECK(e.seq <= stats->last_seq);
    int64_t version = 0;
    REQUIRE(absl::SimpleAtoi(e.observed_version, &version));
    CHECK(e.payload == Payload(e.key.object.name, version));  // nothing torn or mixed up
    CHECK(o.removed.count(e.seq) == 0);                      // a committed ack stays acked
    auto reported = o.enqueued.find(e.seq);
    if (reported == o.enqueued.end()) {
      CHECK(e.seq > o.max_seq);  // committed but unreported: only the step cut by the kill
    } else {
      CHECK(reported->second.first == e.key.object.name);
      CHECK(reported->second.second == version);
    }
    entry_for[e.key.object.name] = e;
  }

  // Every reported enqueue is present, superseded by a newer entry, or was acked/rejected.
  for (const auto& [name, seq] : o.last_seq_for) {
    INFO("object " << name << " last reported seq " << seq);
    auto it = entry_for.find(name);
    if (it != entry_for.end()) {
      CHECK(it->second.seq >= seq);
    } else {
      auto intent = o.intent_seq_for.find(name);
      CHECK((intent != o.intent_seq_for.end() && intent->second >= seq));
    }
  }

  // Desired objects: at least the last reported version, unless a delete was under way; each one
  // written atomically with its checkpoint and (if still pending) its report.
  auto objects = db.List(kDatasetKind);
  REQUIRE(objects.ok());
  std::map<std::string, DesiredObject> object_for;
  for (const DesiredObject& obj : *objects) object_for[obj.ref.name] = obj;
  for (const auto& [name, version] : o.last_version_for) {
    INFO("object " << name << " last reported version " << version);
    auto it = object_for.find(name);
    if (it == object_for.end()) {
      CHECK(o.deleted_after_write.count(name) == 1);
      continue;
    }
    int64_t stored = 0;
    REQUIRE(absl::SimpleAtoi(it->second.version, &stored));
    CHECK(stored >= version);
  }
  for (const auto& [name, obj] : object_for) {
    INFO("object " << name << " version " << obj.version);
    int64_t version = 0;
    REQUIRE(absl::SimpleAtoi(obj.version, &version));
    CHECK(obj.spec == Spec(version));
    auto files = db.FileCheckpoints("crash", name);
    REQUIRE(files.ok());
    REQUIRE(files->size() == 1);
    CHECK((*files)[0].data == Checkpoint(name, version));
    auto entry = entry_for.find(name);
    if (entry != entry_for.end()) CHECK(entry->second.observed_version == obj.version);
  }
  // Checkpoints never outlive their dataset.
  for (int i = 0; i < kObjects; ++i) {
    if (object_for.count(ObjName(i)) == 0) CHECK(db.FileCheckpoints("crash", ObjName(i))->empty());
  }
}

TEST_CASE("SIGKILL at random points never loses or tears committed state") {
  TempDir dir;
  const std::string path = dir.File("lc.db");
  std::mt19937 rng(20240611);
  int64_t last_seq_seen = 0;
  for (int round = 1; round <= kRounds; ++round) {
    const uint32_t child_seed = rng();
    const int kill_after = 1 + static_cast<int>(rng() % 400);  // reported enqueues before the kill
    const int extra_us = static_cast<int>(rng() % 3000);        // then a little more, mid-step
    INFO("round " << round << " child seed " << child_seed << " kill after " << kill_after
                  << " enqueues + " << extra_us << " us");
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      close(fds[0]);
      _exit(ChildLoop(path, fds[1], round, child_seed));
    }
    close(fds[1]);
    Observed o;
    std::string buffer;
    const bool live = ReadLines(fds[0], buffer, o, [&](const Observed& seen) {
      return !seen.failure.empty() ||
             static_cast<int>(seen.enqueued.size()) >= kill_after;
    });
    if (extra_us > 0) absl::SleepFor(absl::Microseconds(extra_us));
    kill(pid, SIGKILL);
    const bool drained = ReadLines(fds[0], buffer, o, [](const Observed&) { return false; });
    close(fds[0]);
    int wstatus = 0;
    REQUIRE(waitpid(pid, &wstatus, 0) == pid);
    REQUIRE(live);
    REQUIRE(drained);
    INFO(o.failure);
    REQUIRE(o.failure.empty());
    REQUIRE(o.started);
    // The child was killed, not finished on its own.
    CHECK((WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL));
    // Sequence numbers keep growing across restarts: above everything the last round committed.
    if (!o.enqueued.empty()) CHECK(o.enqueued.begin()->first > last_seq_seen);

    CheckAfterCrash(path, o, &last_seq_seen);
  }
}

}  // namespace
}  // namespace nereid::lc::db
