#pragma once

// When the cloud link sends the node's summary (sync.proto NodeSummary): only to a GM that
// announced it reads them, once after the HelloReply, then only when it changed. The summary is
// read from its source at most once per `interval` (a few database reads), so a change reaches the
// GM within about one interval and an unchanged node sends nothing at all.

#include <functional>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nereid/edge/v1/sync.pb.h"

namespace nereid::lc {

// The node's summary now; an error skips one round (logged).
using NodeSummarySource = std::function<absl::StatusOr<edge::v1::NodeSummary>()>;

class SummarySender {
 public:
  // A null `source`: never sends.
  SummarySender(NodeSummarySource source, absl::Duration interval)
      : source_(std::move(source)), interval_(interval) {}

  // A stream was established: summaries go on it when its HelloReply lists "node-summary".
  void OnEstablished(const edge::v1::HelloReply& reply, absl::Time now);
  // The summary to send at `now`, if one is due and differs from the last one sent on this stream.
  std::optional<edge::v1::NodeSummary> Due(absl::Time now);
  // When Due may next have something (InfiniteFuture when summaries are off for this stream).
  absl::Time next_check() const { return next_check_; }

 private:
  const NodeSummarySource source_;
  const absl::Duration interval_;
  std::optional<edge::v1::NodeSummary> last_sent_;
  absl::Time next_check_ = absl::InfiniteFuture();
};

}  // namespace nereid::lc
