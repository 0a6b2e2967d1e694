#include "globalmanager/edgehub/idle_stream_args.h"

#include "grpc/grpc.h"

namespace nereid::gm {

void ApplyIdleStreamArgs(const IdleStreamOptions& options, grpc::ServerBuilder& builder) {
  builder.AddChannelArgument(GRPC_ARG_TSI_MAX_FRAME_SIZE, options.tls_max_frame_bytes);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, options.max_streams_per_connection);
  // BDP probing pings busy connections to grow their flow-control windows for bulk transfer;
  // the Sync stream carries small messages, so the default 64 KiB windows suffice.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  builder.AddChannelArgument(GRPC_ARG_TCP_READ_CHUNK_SIZE, options.tcp_read_chunk_bytes);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, options.max_connection_idle_ms);
  builder.AddChannelArgument("grpc.x.nereid.tls_bio_buffer_size", options.tls_bio_buffer_bytes);
}

}  // namespace nereid::gm
