#include "localcontroller/cloudlink/summary_sender.h"

#include <algorithm>

#include "common/log/log.h"
#include "common/net/edge_protocol.h"

namespace nereid::lc {

void SummarySender::OnEstablished(const edge::v1::HelloReply& reply, absl::Time now) {
  last_sent_.reset();
  const bool reads = std::find(reply.capabilities().begin(), reply.capabilities().end(),
                               net::kEdgeCapabilityNodeSummary) != reply.capabilities().end();
  next_check_ = reads && source_ != nullptr ? now : absl::InfiniteFuture();
}

std::optional<edge::v1::NodeSummary> SummarySender::Due(absl::Time now) {
  if (now < next_check_) return std::nullopt;
  next_check_ = now + interval_;
  absl::StatusOr<edge::v1::NodeSummary> summary = source_();
  if (!summary.ok()) {
    LOG(WARNING) << "cloud link: reading the node summary: " << summary.status();
    return std::nullopt;
  }
  if (last_sent_.has_value() &&
      summary->SerializeAsString() == last_sent_->SerializeAsString()) {
    return std::nullopt;
  }
  last_sent_ = *summary;
  return *std::move(summary);
}

}  // namespace nereid::lc
