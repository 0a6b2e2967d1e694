#pragma once

// The upstream outbox: status reports waiting for the GM's ACK. One entry per OutboxKey (the latest
// state replaces an older unsent one, so it stays bounded while the cloud is away), each with a
// per-node sequence number taken from a persisted counter: strictly increasing, never reused, even
// across restarts and after the newest entry was deleted. A view over a connection: the caller
// (LcDatabase) holds the lock and a transaction around Enqueue/Ack/Reject (they write two tables).

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/store/sqlite_db.h"
#include "common/time/clock.h"
#include "localcontroller/db/types.h"

namespace nereid::lc::db {

class Outbox {
 public:
  Outbox(store::Db& db, Clock* clock) : db_(db), clock_(clock) {}

  // Stores the report under a new seq, replacing the entry for the same key if one is pending.
  // InvalidArgument when the key has no kind, name or report type.
  absl::StatusOr<int64_t> Enqueue(const OutboxKey& key, std::string_view observed_version,
                                  std::string_view payload);
  // Up to `limit` entries with seq > after_seq, in seq order (an index range scan: cheap enough to
  // call per send window).
  absl::StatusOr<std::vector<OutboxEntry>> Pending(int limit, int64_t after_seq = 0);
  // The GM wrote the report: deletes the entry if `seq` is still its current seq. Returns false
  // (and keeps the entry) when a newer state was enqueued meanwhile or the seq is unknown (a
  // duplicate ACK), so the newer state is still sent.
  absl::StatusOr<bool> Ack(int64_t seq);
  // The GM refused the report for good (e.g. the object is gone): deletes and counts it, under the
  // same "still current" rule as Ack.
  absl::StatusOr<bool> Reject(int64_t seq, std::string_view reason);
  absl::StatusOr<int64_t> Depth();
  absl::StatusOr<OutboxStats> Stats();

  // Number of successful Enqueue calls on this object (not persisted); lets LcDatabase tell
  // whether a batch enqueued anything, to wake the sender after commit.
  int64_t enqueue_calls() const { return enqueue_calls_; }

 private:
  // Deletes entry `seq` and bumps `counter` ("acked" or "rejected") if it existed.
  absl::StatusOr<bool> Remove(int64_t seq, bool rejected);

  store::Db& db_;
  Clock* clock_;
  int64_t enqueue_calls_ = 0;
};

}  // namespace nereid::lc::db
