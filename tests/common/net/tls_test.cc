#include "common/net/tls.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "common/net/keepalive.h"
#include "common/net/peer_identity.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/server_builder.h"
#include "nereid/edge/v1/sync.grpc.pb.h"
#include "tests/common/net/test_certs.h"

namespace nereid {
namespace {

namespace v1 = edge::v1;
using testing::TestCerts;
using testing::UntrustedCerts;

// Answers every Sync with one message naming the peer identity the TLS handshake established.
class IdentityEchoService final : public v1::EdgeSync::CallbackService {
  class Reactor final : public grpc::ServerBidiReactor<v1::SyncRequest, v1::SyncResponse> {
   public:
    explicit Reactor(grpc::CallbackServerContext* context) {
      net::PeerIdentity identity = net::PeerIdentityFrom(context->auth_context().get());
      reply_.mutable_hello_reply()->set_node_name(identity.DebugString());
      StartWriteAndFinish(&reply_, grpc::WriteOptions(), grpc::Status::OK);
    }
    void OnDone() override { delete this; }  // gRPC's sanctioned reactor lifetime

   private:
    v1::SyncResponse reply_;
  };

  grpc::ServerBidiReactor<v1::SyncRequest, v1::SyncResponse>* Sync(
      grpc::CallbackServerContext* context) override {
    return new Reactor(context);
  }
};

struct EchoServer {
  IdentityEchoService service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;

  explicit EchoServer(const net::TlsOptions& tls) {
    auto creds = net::MakeServerCredentials(tls);
    REQUIRE(creds.ok());
    grpc::ServerBuilder builder;
    net::ApplyServerKeepalive(net::KeepaliveOptions{}, builder);
    builder.AddListeningPort("127.0.0.1:0", *creds, &port);
    builder.RegisterService(&service);
    server = builder.BuildAndStart();
    REQUIRE(server != nullptr);
    REQUIRE(port > 0);
  }
  ~EchoServer() { server->Shutdown(); }
};

struct CallResult {
  bool got_reply = false;
  std::string identity;
  grpc::Status status;
};

CallResult CallEcho(int port, std::shared_ptr<grpc::ChannelCredentials> creds) {
  grpc::ChannelArguments args;
  net::ApplyClientKeepalive(net::KeepaliveOptions{}, args);
  auto channel = grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(port), creds, args);
  auto stub = v1::EdgeSync::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto stream = stub->Sync(&context);
  CallResult result;
  v1::SyncResponse reply;
  if (stream->Read(&reply)) {
    result.got_reply = true;
    result.identity = reply.hello_reply().node_name();
  }
  result.status = stream->Finish();
  return result;
}

TEST_CASE("gen-certs.sh makes a CA, a GM server cert and node client certs", "[net][tls]") {
  const testing::CertSet& certs = TestCerts();
  struct stat key_stat {};
  REQUIRE(stat(certs.NodeKey("edge-a").c_str(), &key_stat) == 0);
  CHECK((key_stat.st_mode & 0777) == 0600);
  REQUIRE(stat(certs.gm_key.c_str(), &key_stat) == 0);
  CHECK((key_stat.st_mode & 0777) == 0600);

  auto node_pem = net::ReadPemFile(certs.NodeCert("edge-b"));
  REQUIRE(node_pem.ok());
  auto node_names = net::CertificateNames(*node_pem);
  REQUIRE(node_names.ok());
  CHECK(*node_names == std::vector<std::string>{"edge-b", "edge-b"});

  auto gm_pem = net::ReadPemFile(certs.gm_cert);
  REQUIRE(gm_pem.ok());
  auto gm_names = net::CertificateNames(*gm_pem);
  REQUIRE(gm_names.ok());
  CHECK(*gm_names == std::vector<std::string>{"globalmanager", "localhost", "globalmanager"});
}

TEST_CASE("TLS options and files are checked with clear errors", "[net][tls]") {
  const testing::CertSet& certs = TestCerts();

  SECTION("missing flags are named") {
    absl::Status status = net::ValidateTlsOptions({certs.ca, "", "", false});
    CHECK(absl::IsInvalidArgument(status));
    CHECK(std::string(status.message()).find("--tls-cert --tls-key") != std::string::npos);
    CHECK(net::ValidateTlsOptions({"", "", "", true}).ok());
  }
  SECTION("a missing file is named") {
    auto creds = net::MakeChannelCredentials(
        {certs.ca, certs.dir + "/nope.crt", certs.NodeKey("edge-a"), false});
    REQUIRE_FALSE(creds.ok());
    CHECK(absl::IsNotFound(creds.status()));
    CHECK(std::string(creds.status().message()).find("nope.crt") != std::string::npos);
  }
  SECTION("a key that does not belong to the certificate is refused") {
    auto creds =
        net::MakeServerCredentials({certs.ca, certs.gm_cert, certs.NodeKey("edge-a"), false});
    REQUIRE_FALSE(creds.ok());
    CHECK(std::string(creds.status().message()).find("is not the key of") != std::string::npos);
  }
  SECTION("a file that is not PEM is refused") {
    auto creds = net::MakeServerCredentials(
        {certs.ca, certs.gm_cert, std::string(NEREID_TEST_NOT_PEM_FILE), false});
    REQUIRE_FALSE(creds.ok());
    CHECK(absl::IsInvalidArgument(creds.status()));
  }
  SECTION("good files give credentials; --insecure needs none") {
    CHECK(net::MakeServerCredentials(certs.ServerTls()).ok());
    CHECK(net::MakeChannelCredentials(certs.ClientTls("edge-a")).ok());
    CHECK(net::MakeChannelCredentials({"", "", "", true}).ok());
  }
}

TEST_CASE("mTLS: a node certificate from our CA is accepted and identifies the node",
          "[net][tls]") {
  EchoServer server(TestCerts().ServerTls());
  auto creds = net::MakeChannelCredentials(TestCerts().ClientTls("edge-a"));
  REQUIRE(creds.ok());
  CallResult result = CallEcho(server.port, *creds);
  CHECK(result.status.ok());
  REQUIRE(result.got_reply);
  CHECK(result.identity == "CN=edge-a DNS=[edge-a]");
}

TEST_CASE("mTLS: a client certificate from another CA is rejected at the handshake", "[net][tls]") {
  EchoServer server(TestCerts().ServerTls());
  // The attacker trusts our CA (public) but presents a cert signed by their own CA.
  net::TlsOptions attacker = UntrustedCerts().ClientTls("edge-a");
  attacker.ca_file = TestCerts().ca;
  auto creds = net::MakeChannelCredentials(attacker);
  REQUIRE(creds.ok());
  CallResult result = CallEcho(server.port, *creds);
  CHECK_FALSE(result.got_reply);
  CHECK(result.status.error_code() == grpc::StatusCode::UNAVAILABLE);
}

TEST_CASE("mTLS: a client without a certificate is rejected", "[net][tls]") {
  EchoServer server(TestCerts().ServerTls());
  auto ca = net::ReadPemFile(TestCerts().ca);
  REQUIRE(ca.ok());
  grpc::SslCredentialsOptions only_roots;
  only_roots.pem_root_certs = *ca;
  CallResult result = CallEcho(server.port, grpc::SslCredentials(only_roots));
  CHECK_FALSE(result.got_reply);
  CHECK(result.status.error_code() == grpc::StatusCode::UNAVAILABLE);
}

TEST_CASE("peer identity of an unauthenticated context names nobody", "[net][tls]") {
  net::PeerIdentity identity = net::PeerIdentityFrom(nullptr);
  CHECK_FALSE(identity.authenticated);
  CHECK_FALSE(identity.Names("edge-a"));
  net::PeerIdentity named{true, "edge-a", {"edge-a", "edge-a.local"}};
  CHECK(named.Names("edge-a"));
  CHECK(named.Names("edge-a.local"));
  CHECK_FALSE(named.Names("edge-b"));
  CHECK_FALSE(named.Names(""));
}

}  // namespace
}  // namespace nereid
