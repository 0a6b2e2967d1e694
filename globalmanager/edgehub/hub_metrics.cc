#include "globalmanager/edgehub/hub_metrics.h"

namespace nereid::gm {

HubMetrics::HubMetrics(std::shared_ptr<prometheus::Registry> registry)
    : registry_(registry ? std::move(registry) : std::make_shared<prometheus::Registry>()) {
  prometheus::Registry& r = *registry_;
  connected_nodes_ = &prometheus::BuildGauge()
                          .Name("nereid_edgehub_connected_nodes")
                          .Help("Edge nodes with an established Sync stream")
                          .Register(r)
                          .Add({});
  disconnected_nodes_ = std::make_unique<DisconnectedNodes>(r);
  auto gauge = [&r](const char* name, const char* help) {
    return &prometheus::BuildGauge().Name(name).Help(help).Register(r).Add({});
  };
  queue_depths_ = std::make_unique<NodeQueueDepths>(
      gauge("nereid_edgehub_queued_changes", "Changes queued for edge nodes and not yet sent"),
      gauge("nereid_edgehub_nodes_with_backlog", "Edge nodes with at least one change queued"),
      gauge("nereid_edgehub_node_queue_depth_max", "The most changes queued for one edge node"));
  auto& changes = prometheus::BuildCounter()
                      .Name("nereid_edgehub_changes_total")
                      .Help("Downstream changes answered by the node, by result")
                      .Register(r);
  changes_acked_ = &changes.Add({{"result", "ack"}});
  changes_nacked_ = &changes.Add({{"result", "nack"}});
  refused_identities_ = &prometheus::BuildCounter()
                             .Name("nereid_edgehub_refused_identities_total")
                             .Help(
                                 "Streams refused because the Hello named another node than the "
                                 "client certificate")
                             .Register(r)
                             .Add({});
  sessions_replaced_ = &prometheus::BuildCounter()
                            .Name("nereid_edgehub_sessions_replaced_total")
                            .Help(
                                "Streams finished because a newer stream for the same node "
                                "arrived")
                            .Register(r)
                            .Add({});
  streams_redirected_ = &prometheus::BuildCounter()
                             .Name("nereid_edgehub_streams_redirected_total")
                             .Help(
                                 "Streams refused by a replica that does not serve the node, "
                                 "with the address of the one that does")
                             .Register(r)
                             .Add({});
  hello_timeouts_ = &prometheus::BuildCounter()
                         .Name("nereid_edgehub_hello_timeouts_total")
                         .Help("Streams ended because no Hello came within the Hello timeout")
                         .Register(r)
                         .Add({});
  connections_accepted_ = &prometheus::BuildCounter()
                               .Name("nereid_edgehub_connections_accepted_total")
                               .Help("Connections accepted on the edge port")
                               .Register(r)
                               .Add({});
  accept_failures_ = &prometheus::BuildCounter()
                          .Name("nereid_edgehub_accept_failures_total")
                          .Help(
                              "accept() on the edge port failed for want of descriptors or memory; "
                              "the port pauses 100 ms and accepts again")
                          .Register(r)
                          .Add({});
  auto& connections_refused =
      prometheus::BuildCounter()
          .Name("nereid_edgehub_connections_refused_total")
          .Help(
              "Connections closed before their TLS handshake: the node had hung up (peer_gone), "
              "the connection waited too long for a handshake slot (waited) or newer ones "
              "crowded it out of a full line (crowded)")
          .Register(r);
  connections_refused_peer_gone_ = &connections_refused.Add({{"reason", "peer_gone"}});
  connections_refused_waited_ = &connections_refused.Add({{"reason", "waited"}});
  connections_refused_crowded_ = &connections_refused.Add({{"reason", "crowded"}});
  connections_waiting_ = gauge("nereid_edgehub_connections_waiting",
                               "Accepted connections waiting for a handshake slot");
  handshakes_pending_ = gauge("nereid_edgehub_handshakes_pending",
                              "Connections handed to the TLS handshake that carry no stream yet");
  auto& reports = prometheus::BuildCounter()
                      .Name("nereid_edgehub_reports_total")
                      .Help("Upstream status reports answered, by result")
                      .Register(r);
  reports_accepted_ = &reports.Add({{"result", "accepted"}});
  reports_rejected_ = &reports.Add({{"result", "rejected"}});
  reports_retry_ = &reports.Add({{"result", "retry"}});
  reports_deduplicated_ = &prometheus::BuildCounter()
                               .Name("nereid_edgehub_reports_deduplicated_total")
                               .Help(
                                   "Resent reports that were still being written; not handed "
                                   "over twice")
                               .Register(r)
                               .Add({});
  auto& refused = prometheus::BuildCounter()
                      .Name("nereid_edgehub_reports_refused_total")
                      .Help(
                          "Reports answered RETRY by a bound on the reports held: the node's own "
                          "(node), its fair share of the global bound (share), the global bound "
                          "(global)")
                      .Register(r);
  reports_refused_node_ = &refused.Add({{"bound", "node"}});
  reports_refused_share_ = &refused.Add({{"bound", "share"}});
  reports_refused_total_ = &refused.Add({{"bound", "global"}});
  reports_coalesced_ = &prometheus::BuildCounter()
                            .Name("nereid_edgehub_reports_coalesced_total")
                            .Help(
                                "Reports answered with a newer report about the same object, "
                                "not written themselves")
                            .Register(r)
                            .Add({});
  reports_held_ = &prometheus::BuildGauge()
                       .Name("nereid_edgehub_reports_held")
                       .Help("Reports of all nodes held by the hub: waiting or being written")
                       .Register(r)
                       .Add({});
  foreign_reports_ = &prometheus::BuildCounter()
                          .Name("nereid_edgehub_foreign_reports_total")
                          .Help("Reports refused because they were about another node's object")
                          .Register(r)
                          .Add({});
  const prometheus::Histogram::BucketBoundaries latency_buckets{
      0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
  dispatch_latency_ = &prometheus::BuildHistogram()
                           .Name("nereid_edgehub_dispatch_latency_seconds")
                           .Help("Time from queueing a change for a node to the node's ACK/NACK")
                           .Register(r)
                           .Add({}, latency_buckets);
  auto& phases = prometheus::BuildHistogram()
                     .Name("nereid_edgehub_dispatch_phase_seconds")
                     .Help("The dispatch latency in parts: queued (in the GM until its write "
                           "started), writing (the gRPC write until done), node (write done "
                           "until the ACK was read)")
                     .Register(r);
  dispatch_queued_ = &phases.Add({{"phase", "queued"}}, latency_buckets);
  dispatch_writing_ = &phases.Add({{"phase", "writing"}}, latency_buckets);
  dispatch_at_node_ = &phases.Add({{"phase", "node"}}, latency_buckets);
}

}  // namespace nereid::gm
