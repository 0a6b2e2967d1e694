#pragma once

// Shared by the integration tests that run the globalmanager and localcontroller binaries on
// loopback (edge_e2e_test, staged_jobs_test): a free port, HTTP GET/POST to a local port, and a
// process's stderr dumped when a REQUIRE fails. Header-only; the tests link Catch2 and httplib.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstddef>
#include <exception>
#include <iostream>
#include <string>

#include "httplib.h"
#include "tests/support/subprocess.h"

namespace nereid::testing {

// A port that was free a moment ago: the GM must come back on the same one after a restart (the
// LCs are configured with it), so it cannot be port 0.
inline int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  socklen_t len = sizeof(addr);
  REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  close(fd);
  return ntohs(addr.sin_port);
}

// When a REQUIRE fails (an exception unwinds the test), what a process logged is what explains it:
// the last `tail_bytes` of its stderr.
inline void DumpOnFailure(const char* what, const Subprocess* process, size_t tail_bytes) {
  if (process == nullptr || std::uncaught_exceptions() == 0) return;
  std::string err = process->Stderr();
  if (err.size() > tail_bytes) err = err.substr(err.size() - tail_bytes);
  std::cerr << "---- " << what << " (pid " << process->pid() << ") stderr, last part:\n"
            << err << "\n---- end of " << what << "\n";
}

struct HttpReply {
  int status = 0;  // 0: no answer
  std::string body;
};

// One request to 127.0.0.1:`port` with the helpers' timeouts; `send` makes it on the client.
template <typename Send>
HttpReply HttpRequest(int port, const Send& send) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(2);
  client.set_read_timeout(5);
  httplib::Result result = send(client);
  if (!result) return {};
  return {result->status, result->body};
}

inline HttpReply HttpGet(int port, const std::string& path) {
  return HttpRequest(port, [&](httplib::Client& c) { return c.Get(path.c_str()); });
}

inline HttpReply HttpPost(int port, const std::string& path, const std::string& body) {
  return HttpRequest(port, [&](httplib::Client& c) {
    return c.Post(path.c_str(), body, "application/json");
  });
}

inline HttpReply HttpDelete(int port, const std::string& path) {
  return HttpRequest(port, [&](httplib::Client& c) { return c.Delete(path.c_str()); });
}

}  // namespace nereid::testing
