// Smaller per-connection TLS memory for the GM's gRPC server, which holds one mTLS connection per
// edge node, mostly idle. gRPC 1.51 has no option for the buffers below (heap profile in
// bench/RESULTS.md, "GM memory per connected node").
//
//  - OpenSSL keeps a 16 KiB read and a 16 KiB write record buffer per connection for its whole
//    life unless SSL_MODE_RELEASE_BUFFERS is set; with it they are freed when empty and allocated
//    again for the next record (nginx sets it for the same reason).
//  - Not here: gRPC's TLS handshaker also keeps a BIO pair of 17 KiB per direction for the
//    connection's life. The static gRPC's patch 0003 sizes it (IdleStreamOptions::
//    tls_bio_buffer_bytes) and feeds a handshake flight larger than it in pieces; gRPC 1.51 alone
//    dropped the bytes that did not fit, which refused certificate chains larger than the BIO.
//
// This SSL_new comes before libssl's in the process's symbol lookup (the executable is searched
// first; a static gRPC binds to it at link time) and calls the library's own. It applies to every
// caller in the process (the mode only trades memory for an allocation per burst of records).
// Linked into the globalmanager executable and the hub's tests (which run their mTLS handshakes
// with it), not into a library other programs link.

#include <dlfcn.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>

#include "openssl/ssl.h"

namespace {

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
