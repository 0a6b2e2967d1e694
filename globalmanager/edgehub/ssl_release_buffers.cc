// Frees each TLS connection's OpenSSL record buffers while the connection is idle.
//
// OpenSSL keeps a 16 KiB read and a 16 KiB write record buffer for every connection for its whole
// life unless SSL_MODE_RELEASE_BUFFERS is set; with it, they are freed as soon as they are empty
// and allocated again for the next record. gRPC 1.51 creates the SSL objects of its TLS
// connections itself and has no option to set the mode, and the GM holds one connection per edge
// node, mostly idle: the buffers were about a fifth of the GM's memory per connected node (heap
// profile in bench/RESULTS.md).
//
// This definition of SSL_new comes before libssl's in the GM's symbol lookup (the executable's
// symbols are searched first; a static gRPC binds to it at link time), creates the connection with
// libssl's SSL_new and sets the mode. Every TLS connection of the process gets it, which is only a
// memory/CPU trade-off (one allocation per burst of records), never a change in behaviour.
// Linked into the globalmanager executable only (see globalmanager/CMakeLists.txt).

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include "openssl/ssl.h"

extern "C" SSL* SSL_new(SSL_CTX* ctx) {
  using SslNewFn = SSL* (*)(SSL_CTX*);
  static const SslNewFn libssl_ssl_new = [] {
    auto fn = reinterpret_cast<SslNewFn>(dlsym(RTLD_NEXT, "SSL_new"));
    if (fn == nullptr) {
      std::fprintf(stderr, "globalmanager: libssl's SSL_new not found: %s\n", dlerror());
      std::abort();
    }
    return fn;
  }();
  SSL* ssl = libssl_ssl_new(ctx);
  if (ssl != nullptr) SSL_set_mode(ssl, SSL_MODE_RELEASE_BUFFERS);
  return ssl;
}
