#pragma once

// Prometheus metrics of the edge hub (prometheus-cpp core, registered in the Registry passed in).

#include <memory>
#include <string>

#include "globalmanager/edgehub/disconnected_nodes.h"
#include "globalmanager/edgehub/node_queue_depths.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace nereid::gm {

class HubMetrics {
 public:
  // `registry` may be null: the metrics then live in a private registry (tests, tools).
  explicit HubMetrics(std::shared_ptr<prometheus::Registry> registry);

  prometheus::Registry& registry() { return *registry_; }

  // The nodes' send queues in three series, whatever the number of nodes (node_queue_depths.h).
  NodeQueueDepths& queue_depths() { return *queue_depths_; }

  prometheus::Gauge& connected_nodes() { return *connected_nodes_; }
  // Nodes whose stream here ended and that have not come back (disconnected_nodes.h).
  DisconnectedNodes& disconnected_nodes() { return *disconnected_nodes_; }
  prometheus::Counter& changes_acked() { return *changes_acked_; }
  prometheus::Counter& changes_nacked() { return *changes_nacked_; }
  // Streams refused because the Hello named another node than the client certificate.
  prometheus::Counter& refused_identities() { return *refused_identities_; }
  prometheus::Counter& sessions_replaced() { return *sessions_replaced_; }
  // Streams refused with the address of the replica that serves the node.
  prometheus::Counter& streams_redirected() { return *streams_redirected_; }
  // Streams ended because their Hello did not come in time (EdgeHub::EndStreamsWithoutHello).
  prometheus::Counter& hello_timeouts() { return *hello_timeouts_; }
  // The edge port's listener (connection_gate.h): connections accepted; refused before their
  // handshake because the node hung up, they waited too long or newer ones crowded them out of a
  // full line; waiting for a handshake slot; handed to gRPC and not yet carrying a stream.
  prometheus::Counter& connections_accepted() { return *connections_accepted_; }
  // accept() on the edge port failed for want of descriptors or memory (the gate pauses, retries).
  prometheus::Counter& accept_failures() { return *accept_failures_; }
  prometheus::Counter& connections_refused_peer_gone() { return *connections_refused_peer_gone_; }
  prometheus::Counter& connections_refused_waited() { return *connections_refused_waited_; }
  prometheus::Counter& connections_refused_crowded() { return *connections_refused_crowded_; }
  prometheus::Gauge& connections_waiting() { return *connections_waiting_; }
  prometheus::Gauge& handshakes_pending() { return *handshakes_pending_; }
  prometheus::Counter& reports_accepted() { return *reports_accepted_; }
  prometheus::Counter& reports_rejected() { return *reports_rejected_; }
  prometheus::Counter& reports_retry() { return *reports_retry_; }
  // Resent reports (after a reconnect) that were still with the handler: not handed over twice.
  prometheus::Counter& reports_deduplicated() { return *reports_deduplicated_; }
  // Reports answered RETRY because of a bound on the reports the hub holds: the node's own
  // (max_pending_reports), its fair share of the global bound, or the global bound itself.
  prometheus::Counter& reports_refused_node() { return *reports_refused_node_; }
  prometheus::Counter& reports_refused_share() { return *reports_refused_share_; }
  prometheus::Counter& reports_refused_total() { return *reports_refused_total_; }
  // Reports answered with a newer report about the same object (never handed over themselves).
  prometheus::Counter& reports_coalesced() { return *reports_coalesced_; }
  // Reports of all nodes held: waiting or with the handler.
  prometheus::Gauge& reports_held() { return *reports_held_; }
  // Reports about objects the hub sends to another node (refused).
  prometheus::Counter& foreign_reports() { return *foreign_reports_; }
  // Enqueue of a change -> its ACK (or NACK) received.
  prometheus::Histogram& dispatch_latency() { return *dispatch_latency_; }
  // The same time in three parts (Session::AckedChange): queued, writing, at_node.
  prometheus::Histogram& dispatch_queued() { return *dispatch_queued_; }
  prometheus::Histogram& dispatch_writing() { return *dispatch_writing_; }
  prometheus::Histogram& dispatch_at_node() { return *dispatch_at_node_; }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Gauge* connected_nodes_;
  prometheus::Counter* changes_acked_;
  prometheus::Counter* changes_nacked_;
  prometheus::Counter* streams_redirected_;
  prometheus::Counter* hello_timeouts_;
  prometheus::Counter* refused_identities_;
  prometheus::Counter* sessions_replaced_;
  prometheus::Counter* connections_accepted_;
  prometheus::Counter* accept_failures_;
  prometheus::Counter* connections_refused_peer_gone_;
  prometheus::Counter* connections_refused_waited_;
  prometheus::Counter* connections_refused_crowded_;
  prometheus::Gauge* connections_waiting_;
  prometheus::Gauge* handshakes_pending_;
  prometheus::Counter* reports_accepted_;
  prometheus::Counter* reports_rejected_;
  prometheus::Counter* reports_retry_;
  prometheus::Counter* reports_deduplicated_;
  prometheus::Counter* reports_refused_node_;
  prometheus::Counter* reports_refused_share_;
  prometheus::Counter* reports_refused_total_;
  prometheus::Counter* reports_coalesced_;
  prometheus::Gauge* reports_held_;
  prometheus::Counter* foreign_reports_;
  prometheus::Histogram* dispatch_latency_;
  prometheus::Histogram* dispatch_queued_;
  prometheus::Histogram* dispatch_writing_;
  prometheus::Histogram* dispatch_at_node_;
  std::unique_ptr<NodeQueueDepths> queue_depths_;
  std::unique_ptr<DisconnectedNodes> disconnected_nodes_;
};

}  // namespace nereid::gm
