#include "common/http/http_listener.h"

#include <microhttpd.h>
#include <netdb.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <utility>

#include "absl/memory/memory.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/log/log.h"
#include "common/process/unique_fd.h"

namespace nereid::http {
namespace {

// A request between its headers and the end of its body. libmicrohttpd keeps it in the
// connection's `con_cls` slot (a C API: a raw pointer) from the first access-handler call until
// the request-completed callback, which takes ownership back.
struct PendingRequest {
  HttpRequest request;
  bool answered = false;
};

std::string Endpoint(const HttpListenerOptions& options) {
  return options.host.find(':') != std::string::npos
             ? absl::StrCat("[", options.host, "]:", options.port)
             : absl::StrCat(options.host, ":", options.port);
}

// A listening socket.
absl::StatusOr<UniqueFd> BindListenSocket(const HttpListenerOptions& options) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(options.port);
  if (const int error = getaddrinfo(options.host.c_str(), port.c_str(), &hints, &found);
      error != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot resolve the listen host ", options.host, ": ", gai_strerror(error)));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> addresses(found, &freeaddrinfo);
  UniqueFd socket_fd(socket(found->ai_family, found->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                            found->ai_protocol));
  if (!socket_fd.valid()) return absl::UnavailableError(absl::StrCat("socket: ", strerror(errno)));
  const int fd = socket_fd.get();
  // SO_REUSEADDR only: SO_REUSEPORT would let a second process bind the same port and receive
  // part of the requests; a busy port must be an error instead.
  const int yes = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  if (bind(fd, found->ai_addr, found->ai_addrlen) != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot bind to ", Endpoint(options), ": ", strerror(errno)));
  }
  if (listen(fd, SOMAXCONN) != 0) {
    return absl::UnavailableError(absl::StrCat("listen: ", strerror(errno)));
  }
  return socket_fd;
}

absl::StatusOr<int> BoundPort(int fd) {
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0) {
    return absl::UnavailableError(absl::StrCat("getsockname: ", strerror(errno)));
  }
  if (bound.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port);
  }
  return ntohs(reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
}

// libmicrohttpd's own messages are about single connections (a client that went away, a
// malformed request): debug level, so a hostile client cannot flood the log.
void LogFromMhd(void* /*cls*/, const char* format, va_list args) {
  char line[512];
  vsnprintf(line, sizeof(line), format, args);
  std::string_view text(line);
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  LOG(DEBUG) << "http: libmicrohttpd: " << text;
}

}  // namespace

class HttpListener::Impl {
 public:
  Impl(const HttpListenerOptions& options, Handler handler)
      : options_(options), handler_(std::move(handler)) {}

  ~Impl() { Stop(); }

  absl::Status Start() {
    absl::StatusOr<UniqueFd> fd = BindListenSocket(options_);
    if (!fd.ok()) return fd.status();
    absl::StatusOr<int> port = BoundPort(fd->get());
    if (!port.ok()) return port.status();
    port_ = *port;

    const unsigned threads = static_cast<unsigned>(std::max(options_.threads, 1));
    const unsigned idle_seconds = static_cast<unsigned>(
        std::max<int64_t>(absl::ToInt64Seconds(options_.idle_timeout), 1));
    std::vector<MHD_OptionItem> items = {
        {MHD_OPTION_LISTEN_SOCKET, fd->get(), nullptr},
        {MHD_OPTION_CONNECTION_LIMIT, static_cast<intptr_t>(options_.max_connections), nullptr},
        {MHD_OPTION_CONNECTION_TIMEOUT, static_cast<intptr_t>(idle_seconds), nullptr},
        {MHD_OPTION_NOTIFY_COMPLETED, reinterpret_cast<intptr_t>(&Impl::OnCompleted), this},
    };
    if (threads > 1) items.push_back({MHD_OPTION_THREAD_POOL_SIZE, threads, nullptr});
    items.push_back({MHD_OPTION_END, 0, nullptr});
    // poll(), not epoll: libmicrohttpd 0.9.75's edge-triggered epoll mode misses a client's
    // half-close that arrives with its request and keeps the connection to the idle timeout.
    absl::MutexLock lock(&stop_mu_);
    daemon_ = MHD_start_daemon(MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG, 0, nullptr,
                               nullptr, &Impl::OnRequest, this,
                               MHD_OPTION_EXTERNAL_LOGGER, &LogFromMhd, nullptr,
                               MHD_OPTION_ARRAY, items.data(), MHD_OPTION_END);
    if (daemon_ == nullptr) {
      return absl::UnavailableError(absl::StrCat("the listener on ", Endpoint(options_),
                                                 " did not start (libmicrohttpd refused it)"));
    }
    fd->Release();  // libmicrohttpd closes its listen socket when it stops
    return absl::OkStatus();
  }

  void Stop() {
    absl::MutexLock lock(&stop_mu_);
    if (daemon_ == nullptr) return;
    MHD_stop_daemon(daemon_);
    daemon_ = nullptr;
  }

  int port() const { return port_; }

 private:
  static MHD_Result OnRequest(void* cls, MHD_Connection* connection, const char* url,
                              const char* method, const char* /*version*/,
                              const char* upload_data, size_t* upload_data_size, void** con_cls) {
    return static_cast<Impl*>(cls)->Serve(connection, url, method, upload_data, upload_data_size,
                                          con_cls);
  }

  static void OnCompleted(void* /*cls*/, MHD_Connection* /*connection*/, void** con_cls,
                          MHD_RequestTerminationCode /*code*/) {
    std::unique_ptr<PendingRequest> done(static_cast<PendingRequest*>(*con_cls));
    *con_cls = nullptr;
  }

  MHD_Result Serve(MHD_Connection* connection, const char* url, const char* method,
                   const char* upload_data, size_t* upload_data_size, void** con_cls) {
    if (*con_cls == nullptr) {  // headers complete, body not read yet
      auto pending = std::make_unique<PendingRequest>();
      pending->request.method = method;
      pending->request.path = url;
      const char* length =
          MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
      uint64_t declared = 0;
      pending->request.body_too_large = length != nullptr && absl::SimpleAtoi(length, &declared) &&
                                        declared > options_.max_body_bytes;
      PendingRequest& request = *pending;
      *con_cls = pending.release();  // OnCompleted takes it back
      // Refused before a byte of the body is read (and before 100 Continue).
      if (request.request.body_too_large) return Answer(connection, request);
      return MHD_YES;
    }
    PendingRequest& pending = *static_cast<PendingRequest*>(*con_cls);
    if (*upload_data_size > 0) {
      if (!pending.request.body_too_large) {
        if (pending.request.body.size() + *upload_data_size > options_.max_body_bytes) {
          pending.request.body_too_large = true;
          pending.request.body = std::string();  // drop the buffered part; the rest is discarded
        } else {
          pending.request.body.append(upload_data, *upload_data_size);
        }
      }
      *upload_data_size = 0;
      return MHD_YES;
    }
    if (pending.answered) return MHD_YES;
    return Answer(connection, pending);
  }

  MHD_Result Answer(MHD_Connection* connection, PendingRequest& pending) {
    pending.answered = true;
    const HttpResponse reply = handler_(pending.request);
    MHD_Response* response = MHD_create_response_from_buffer(
        reply.body.size(), const_cast<char*>(reply.body.data()), MHD_RESPMEM_MUST_COPY);
    if (response == nullptr) return MHD_NO;  // out of memory: closes the connection
    if (!reply.content_type.empty()) {
      MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, reply.content_type.c_str());
    }
    for (const auto& [name, value] : reply.headers) {
      MHD_add_response_header(response, name.c_str(), value.c_str());
    }
    const MHD_Result queued =
        MHD_queue_response(connection, static_cast<unsigned>(reply.status), response);
    MHD_destroy_response(response);
    return queued;
  }

  const HttpListenerOptions options_;
  const Handler handler_;
  int port_ = 0;
  absl::Mutex stop_mu_;
  MHD_Daemon* daemon_ ABSL_GUARDED_BY(stop_mu_) = nullptr;
};

absl::StatusOr<std::unique_ptr<HttpListener>> HttpListener::Start(
    const HttpListenerOptions& options, Handler handler) {
  auto impl = std::make_unique<Impl>(options, std::move(handler));
  if (absl::Status started = impl->Start(); !started.ok()) return started;
  return absl::WrapUnique(new HttpListener(std::move(impl)));
}

HttpListener::HttpListener(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpListener::~HttpListener() { Stop(); }

void HttpListener::Stop() { impl_->Stop(); }

int HttpListener::port() const { return impl_->port(); }

absl::StatusOr<unsigned long> RaiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return absl::InternalError(absl::StrCat("getrlimit(RLIMIT_NOFILE): ", strerror(errno)));
  }
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) {
      return absl::InternalError(absl::StrCat("setrlimit(RLIMIT_NOFILE): ", strerror(errno)));
    }
  }
  return static_cast<unsigned long>(limit.rlim_cur);
}

}  // namespace nereid::http
