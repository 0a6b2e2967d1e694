#pragma once

// gRPC server channel arguments for the edge hub's load: thousands of long-lived mTLS
// connections, one per edge node, each carrying one mostly idle Sync stream of small messages.
// gRPC's defaults are tuned for few busy connections and cost memory per connection whether or
// not bytes flow (bench/RESULTS.md, "GM memory per connected node", has the heap profile).

#include "grpcpp/server_builder.h"

namespace nereid::gm {

struct IdleStreamOptions {
  // Largest TLS record the GM writes. gRPC allocates this much per connection for the life of the
  // connection (default 16 KiB). Changes and acks are small; a large Hello reply is split.
  int tls_max_frame_bytes = 4096;
  // HTTP/2 streams per connection. A node opens one Sync stream (the hub refuses more than a few
  // per node connection: EdgeHub::Options::max_streams_per_connection), but a replica relaying
  // nodes to the leader carries one stream per relayed node on its one connection.
  int max_streams_per_connection = 1 << 20;
  // First size of a connection's TCP read buffer, kept while the connection waits for bytes; it
  // grows with what reads return. gRPC's default is 8 KiB; below that takes the static gRPC's
  // patch (scripts/grpc-patches/0002), without which it has no effect.
  int tcp_read_chunk_bytes = 2048;
  // Each direction of the buffer pair between OpenSSL and the socket, kept for the connection's
  // life: as much of it stays resident as the largest handshake read or TLS record touched.
  // gRPC's is 17 KiB; the outgoing side never goes below a whole TLS frame. Takes the static
  // gRPC's patch (scripts/grpc-patches/0003), without which it has no effect.
  int tls_bio_buffer_bytes = 4096;
  // A connection that carries no stream this long is closed (a final GOAWAY, then the close):
  // the LC holds its stream for the connection's life, so only a client that left nothing open
  // is closed.
  int max_connection_idle_ms = 5 * 60 * 1000;
};

void ApplyIdleStreamArgs(const IdleStreamOptions& options, grpc::ServerBuilder& builder);

}  // namespace nereid::gm
