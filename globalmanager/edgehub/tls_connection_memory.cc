// Smaller per-connection TLS buffers for the GM's gRPC server, which holds one mTLS connection per
// edge node, mostly idle. gRPC 1.51 has no option for either buffer below (heap profile in
// bench/RESULTS.md, "GM memory per connected node").
//
//  - OpenSSL keeps a 16 KiB read and a 16 KiB write record buffer per connection for its whole
//    life unless SSL_MODE_RELEASE_BUFFERS is set; with it they are freed when empty and allocated
//    again for the next record (nginx sets it for the same reason).
//  - gRPC's TLS handshaker connects OpenSSL to the network through a BIO pair and asks for
//    OpenSSL's default buffer sizes (0 = 17 KiB per direction), kept for the connection's life.
//    The incoming direction (bytes from the peer, waiting for OpenSSL to read them) gets
//    kIncomingBioBytes: after the handshake gRPC feeds it in pieces of any size; during the
//    handshake it must hold the peer's whole flight, because gRPC 1.51 drops what does not fit
//    before the handshake is done. That bounds the certificate chain a node presents to about
//    7 KiB (a leaf and three intermediates of RSA-2048; one leaf is about 1 KiB). The outgoing
//    direction stays at the default: OpenSSL must write a whole record into it, and a gRPC
//    client in the same process (the tests) writes 16 KiB records.
//
// These definitions come before libssl's and libcrypto's in the process's symbol lookup (the
// executable is searched first; a static gRPC binds to them at link time) and call the library's
// own function. They apply to every caller in the process: SSL_new's mode only trades memory for
// an allocation per burst of records; BIO_new_bio_pair with a size of 0 is only gRPC's TLS
// handshaker. Linked into the globalmanager executable and the hub's tests (which run their mTLS
// handshakes with them), not into a library other programs link.

#include <dlfcn.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>

#include "openssl/bio.h"
#include "openssl/ssl.h"

namespace {

constexpr std::size_t kIncomingBioBytes = 8 * 1024;

template <typename Fn>
Fn NextDefinition(const char* name) {
  auto fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
  if (fn == nullptr) {
    std::fprintf(stderr, "tls_connection_memory: %s not found in the TLS library: %s\n", name,
                 dlerror());
    std::abort();
  }
  return fn;
}

}  // namespace

extern "C" SSL* SSL_new(SSL_CTX* ctx) {
  static const auto library_ssl_new = NextDefinition<SSL* (*)(SSL_CTX*)>("SSL_new");
  SSL* ssl = library_ssl_new(ctx);
  if (ssl != nullptr) SSL_set_mode(ssl, SSL_MODE_RELEASE_BUFFERS);
  return ssl;
}

// gRPC passes (network side, its size, OpenSSL's side, its size): what is written into the network
// side (writebuf1) is what OpenSSL reads.
extern "C" int BIO_new_bio_pair(BIO** bio1, size_t writebuf1, BIO** bio2, size_t writebuf2) {
  static const auto library_new_bio_pair =
      NextDefinition<int (*)(BIO**, size_t, BIO**, size_t)>("BIO_new_bio_pair");
  return library_new_bio_pair(bio1, writebuf1 == 0 ? kIncomingBioBytes : writebuf1, bio2,
                              writebuf2);
}
