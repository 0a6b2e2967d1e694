#pragma once

// The reports the edge hub holds, across every node, and the order it hands them to the
// ReportHandler. Three rules keep 10,000 nodes' reports from swamping the GM or each other:
//
//  - Bounds: a node holds at most `max_per_node`; all nodes together at most `max_total`; and a
//    node is refused once it holds its fair share, max_total ÷ (nodes holding reports + 1), at
//    least `min_share`. The "+ 1" keeps room for a node that holds nothing yet, so one chatty
//    node (or a few) cannot take the whole bound and make a quiet node's report wait.
//  - Fair order: at most `max_dispatched` reports are with the handler at once, taken round-robin
//    over the nodes that have one waiting, so a quiet node's report waits for at most one report
//    of each other node, not behind thousands of one node's.
//  - Per object: one report at a time with the handler, in arrival (seq) order. Reports that
//    carry a whole latest state (Dataset, Model) waiting together are coalesced: only the newest
//    is handed over, and its outcome answers every one of them. Worker reports and trigger events
//    are each handed over (they are about several workers or are events).
//
// Not thread-safe: the hub calls it under its own mutex.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "nereid/edge/v1/status.pb.h"

namespace nereid::gm {

class ReportScheduler {
 public:
  using ReportPtr = std::shared_ptr<const edge::v1::StatusReport>;

  struct Options {
    std::size_t max_per_node = 1024;
    std::size_t max_total = 16'384;
    std::size_t min_share = 8;
    std::size_t max_dispatched = 256;
  };

  enum class Admission {
    kQueued,
    kDuplicate,   // the same seq is held already (a resend after a reconnect): its ACK will come
    kNodeFull,    // the node holds max_per_node
    kOverShare,   // the node holds its fair share of max_total
    kTotalFull,   // all nodes together hold max_total
  };

  struct Dispatch {
    std::string node;
    std::string key;
    ReportPtr report;
  };

  explicit ReportScheduler(Options options);

  // Holds `report` of `node` about object `key` (net::ObjectKey of its ref) unless a bound says no.
  Admission Admit(const std::string& node, const std::string& key, ReportPtr report);

  // The next report to hand to the handler: round-robin over nodes, while fewer than
  // max_dispatched are with it. Every Dispatch must be answered with Complete.
  std::optional<Dispatch> Next();

  // The handler finished report `seq` about `key` of `node`. Returns the seqs this answers (the
  // report and those coalesced into it, oldest first), or nullopt when it was not with the handler.
  std::optional<std::vector<uint64_t>> Complete(const std::string& node, const std::string& key,
                                                uint64_t seq);

  std::size_t held() const { return held_; }
  std::size_t held(const std::string& node) const;
  std::size_t dispatched() const { return dispatched_; }
  // Nodes holding at least one report.
  std::size_t holders() const { return nodes_.size(); }
  // What one node may hold; `one_more_holder` for a node that holds nothing yet.
  std::size_t FairShare(bool one_more_holder) const;

 private:
  struct ObjectReports {
    std::deque<ReportPtr> waiting;   // not yet with the handler, in arrival order
    ReportPtr dispatched;            // with the handler, or null
    std::vector<uint64_t> riders;    // coalesced into `dispatched`, answered with it
  };
  struct NodeReports {
    absl::flat_hash_map<std::string, ObjectReports> objects;
    std::deque<std::string> ready;   // objects with a report waiting and none with the handler
    std::size_t held = 0;
    bool in_ring = false;
  };

  static bool Holds(const ObjectReports& object, uint64_t seq);
  void MarkReady(const std::string& node, NodeReports& reports, const std::string& key);

  const Options options_;
  absl::flat_hash_map<std::string, NodeReports> nodes_;  // only nodes that hold reports
  std::deque<std::string> ring_;                          // nodes with a ready object, in turn
  std::size_t held_ = 0;
  std::size_t dispatched_ = 0;
};

}  // namespace nereid::gm
