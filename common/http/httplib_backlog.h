#pragma once

// The full listen backlog for a server built on cpp-httplib (devapiserver, the tests' HTTP
// servers). cpp-httplib 0.11 (Debian 12) listens with a backlog of 5: when a client opens a dozen
// connections at once (a GM starting its informers), the kernel drops the SYNs past it and the
// client resends them only after 1 s, then 3 s.
//
//   httplib::Server server;
//   HttplibBacklog backlog(server);        // before binding
//   int port = server.bind_to_any_port("127.0.0.1");
//   absl::Status widened = backlog.Widen();  // after binding, before listen_after_bind()

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "httplib.h"

namespace nereid::http {

class HttplibBacklog {
 public:
  // Replaces `server`'s socket options with cpp-httplib's defaults plus noting the socket.
  explicit HttplibBacklog(httplib::Server& server) {
    server.set_socket_options([this](socket_t fd) {
      httplib::default_socket_options(fd);
      fd_ = fd;
    });
  }
  HttplibBacklog(const HttplibBacklog&) = delete;
  HttplibBacklog& operator=(const HttplibBacklog&) = delete;

  // Listening again on a listening socket only changes its backlog.
  absl::Status Widen() const {
    if (fd_ < 0) return absl::FailedPreconditionError("the server is not bound");
    if (listen(fd_, SOMAXCONN) != 0) {
      return absl::UnavailableError(absl::StrCat("listen: ", strerror(errno)));
    }
    return absl::OkStatus();
  }

 private:
  int fd_ = -1;  // the listening socket, which the server owns
};

}  // namespace nereid::http
