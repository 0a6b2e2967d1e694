#include "globalmanager/edgehub/sync_reactor.h"

#include "common/net/edge_protocol.h"
#include "globalmanager/edgehub/edge_hub.h"
#include "grpcpp/server_context.h"

namespace nereid::gm {

SyncReactor::SyncReactor(EdgeHub* hub, grpc::CallbackServerContext* context,
                         std::shared_ptr<Session> session, StreamPeer peer,
                         std::string connection)
    : hub_(hub),
      context_(context),
      session_(std::move(session)),
      peer_(std::move(peer)),
      connection_(std::move(connection)) {
  session_->Attach(this);
  StartRead(&request_);
}

void SyncReactor::OnReadDone(bool ok) {
  if (!ok) {
    // The node closed its side or the stream broke; a Finish is still owed.
    session_->RequestFinish(grpc::Status::OK);
    session_->Pump();
    return;
  }
  const bool keep_reading = hub_->OnRequest(session_, peer_, request_);
  session_->Pump();
  if (keep_reading && !session_->finishing()) StartRead(&request_);
}

void SyncReactor::OnWriteDone(bool ok) {
  session_->OnWriteDone(ok);
  session_->Pump();
}

void SyncReactor::OnCancel() {
  session_->RequestFinish(grpc::Status(grpc::StatusCode::CANCELLED, "stream cancelled"));
  session_->Pump();
}

void SyncReactor::End(grpc::Status status, const std::string& owner) {
  if (!owner.empty()) context_->AddTrailingMetadata(net::kEdgeOwnerTrailer, owner);
  Finish(std::move(status));
}

void SyncReactor::OnDone() {
  session_->Detach();
  hub_->OnSessionDone(session_, connection_);
  delete this;  // the callback API's sanctioned ownership: gRPC is done with the reactor
}

}  // namespace nereid::gm
