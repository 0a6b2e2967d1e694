#pragma once

// Where the cloud link takes upstream reports from: the LC's durable outbox (SQLite in production,
// see lc_db_adapter.h). A report stays there until the GM ACKs (it reached the Kubernetes API) or
// rejects it; a newer state of the same thing replaces an unsent older one under a new seq.

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nereid/edge/v1/status.pb.h"

namespace nereid::lc {

class ReportSource {
 public:
  virtual ~ReportSource() = default;

  // Up to `limit` pending reports with seq > after_seq, in seq order, each with seq set.
  virtual absl::StatusOr<std::vector<edge::v1::StatusReport>> Pending(int limit,
                                                                      uint64_t after_seq) = 0;
  // The GM wrote report `seq`: drop it unless a newer state replaced it meanwhile.
  virtual absl::Status Ack(uint64_t seq) = 0;
  // The GM refused report `seq` for good: drop it (same "still current" rule) and count it.
  virtual absl::Status Reject(uint64_t seq, std::string_view reason) = 0;
  // `wakeup` is called (on any thread, must not block) whenever a report was enqueued.
  virtual void SetWakeup(std::function<void()> wakeup) = 0;
};

}  // namespace nereid::lc
