#include "common/kube/http_watch_stream.h"

#include <sys/socket.h>

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/kube/errors.h"
#include "common/log/log.h"

namespace nereid::kube {
namespace {
// Enough of an error body to carry a metav1.Status; the rest is dropped.
constexpr size_t kMaxErrorBody = 64 << 10;
}  // namespace

HttpWatchStream::HttpWatchStream(std::unique_ptr<httplib::ClientImpl> client, Options options)
    : client_(std::move(client)), options_(std::move(options)), framer_(options_.max_event_bytes) {
  // httplib::ClientImpl::stop() only reaches a socket that is already connected. A Cancel() that
  // lands before the connection exists is caught here: httplib creates the socket under the same
  // lock stop() takes, so either stop() sees the connection or this hook sees the flag.
  client_->set_socket_options([this](socket_t sock) {
    if (cancel_requested_.load()) ::shutdown(sock, SHUT_RDWR);
  });
}

absl::StatusOr<std::unique_ptr<HttpWatchStream>> HttpWatchStream::Start(
    std::unique_ptr<httplib::ClientImpl> client, std::string path, httplib::Headers headers,
    Options options) {
  auto stream = std::unique_ptr<HttpWatchStream>(
      new HttpWatchStream(std::move(client), std::move(options)));
  HttpWatchStream* self = stream.get();
  stream->reader_ = std::thread([self, path = std::move(path), headers = std::move(headers)]() mutable {
    self->Run(std::move(path), std::move(headers));
  });
  bool answered = false;
  {
    absl::MutexLock lock(&stream->mu_);
    answered = stream->mu_.AwaitWithTimeout(absl::Condition(self, &HttpWatchStream::StartedOrDone),
                                            stream->options_.header_timeout);
  }
  if (!answered) {
    stream->Cancel();  // Unblocks the reader; the destructor joins it.
    return absl::DeadlineExceededError(absl::StrCat(
        "watch ", stream->options_.resource.QualifiedName(), ": no response headers within ",
        absl::FormatDuration(stream->options_.header_timeout)));
  }
  absl::MutexLock lock(&stream->mu_);
  if (stream->headers_received_ && stream->http_status_ == 200) return stream;
  // The reader has finished: either no response at all, or an error response.
  absl::Status status = stream->headers_received_
                            ? StatusFromResponse(stream->http_status_, stream->error_body_,
                                                 stream->retry_after_)
                            : stream->final_status_;
  if (status.ok()) status = absl::UnavailableError("watch: no response");
  return status;  // ~HttpWatchStream joins the finished reader.
}

HttpWatchStream::~HttpWatchStream() {
  Cancel();
  if (reader_.joinable()) reader_.join();
}

absl::Status HttpWatchStream::RequestError(httplib::Error error) const {
  absl::Status status = options_.describe_error
                            ? options_.describe_error(error)
                            : absl::UnavailableError(httplib::to_string(error));
  return absl::Status(status.code(), absl::StrCat("watch ", options_.resource.QualifiedName(), ": ",
                                                  status.message()));
}

void HttpWatchStream::Run(std::string path, httplib::Headers headers) {
  httplib::Result result = client_->Get(
      path, headers, [this](const httplib::Response& response) { return OnResponse(response); },
      [this](const char* data, size_t length) { return OnData(data, length); });
  absl::MutexLock lock(&mu_);
  if (final_status_.ok() && !cancelled_) {
    if (!result && result.error() != httplib::Error::Canceled) {
      final_status_ = headers_received_
                          ? absl::UnavailableError(absl::StrCat(
                                "watch ", options_.resource.QualifiedName(),
                                ": stream broken or idle too long (", httplib::to_string(result.error()), ")"))
                          : RequestError(result.error());
    } else if (http_status_ == 200 && framer_.has_partial()) {
      final_status_ = absl::DataLossError(absl::StrCat(
          "watch ", options_.resource.QualifiedName(), ": stream ended in the middle of an event"));
    }
  }
  done_ = true;
}

bool HttpWatchStream::OnResponse(const httplib::Response& response) {
  absl::MutexLock lock(&mu_);
  headers_received_ = true;
  http_status_ = response.status;
  retry_after_ = response.get_header_value("Retry-After");
  return !cancelled_;
}

bool HttpWatchStream::OnData(const char* data, size_t length) {
  absl::MutexLock lock(&mu_);
  if (cancelled_) return false;
  if (http_status_ != 200) {
    if (error_body_.size() < kMaxErrorBody) {
      error_body_.append(data, std::min(length, kMaxErrorBody - error_body_.size()));
    }
    return true;
  }
  std::vector<std::string> documents;
  if (absl::Status framed = framer_.Feed(std::string_view(data, length), &documents); !framed.ok()) {
    final_status_ = framed;
    LOG(WARNING) << "watch " << options_.resource.QualifiedName() << ": " << framed.message();
  }
  for (const std::string& document : documents) {
    // Back-pressure: wait for the consumer while the queue is full.
    mu_.Await(absl::Condition(this, &HttpWatchStream::CancelledOrRoomInQueue));
    if (cancelled_) return false;
    if (!Decode(document)) return false;
  }
  return final_status_.ok();
}

absl::StatusOr<WatchEvent> DecodeWatchEvent(const std::string& document,
                                            const Resource& resource) {
  Json doc = Json::parse(document, nullptr, /*allow_exceptions=*/false);
  const std::string what = absl::StrCat("watch ", resource.QualifiedName());
  if (!doc.is_object()) {
    return absl::DataLossError(absl::StrCat(what, ": malformed event (not JSON)"));
  }
  auto type_it = doc.find("type");
  auto object_it = doc.find("object");
  std::optional<WatchEvent::Type> type;
  if (type_it != doc.end() && type_it->is_string()) type = ParseWatchEventType(type_it->get<std::string>());
  if (!type || object_it == doc.end() || !object_it->is_object()) {
    return absl::DataLossError(
        absl::StrCat(what, ": malformed event (missing or unknown type, or no object)"));
  }
  WatchEvent event;
  event.type = *type;
  event.object = std::move(*object_it);
  if (event.type != WatchEvent::Type::kError) {
    if (!event.object.contains("apiVersion")) event.object["apiVersion"] = resource.ApiVersion();
    if (!event.object.contains("kind") && !resource.kind.empty()) {
      event.object["kind"] = resource.kind;
    }
  }
  return event;
}

bool HttpWatchStream::Decode(const std::string& document) {
  absl::StatusOr<WatchEvent> event = DecodeWatchEvent(document, options_.resource);
  if (!event.ok()) {
    final_status_ = event.status();
    return false;
  }
  queue_.push_back(std::move(*event));
  return true;
}

bool HttpWatchStream::StartedOrDone() const {
  return done_ || (headers_received_ && http_status_ == 200);
}
bool HttpWatchStream::CancelledOrRoomInQueue() const {
  return cancelled_ || queue_.size() < options_.max_queued_events;
}
bool HttpWatchStream::CancelledDoneOrEvent() const {
  return cancelled_ || done_ || !queue_.empty();
}

bool HttpWatchStream::Next(WatchEvent* event) {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(this, &HttpWatchStream::CancelledDoneOrEvent));
  if (cancelled_ || queue_.empty()) return false;
  *event = std::move(queue_.front());
  queue_.pop_front();
  return true;
}

absl::Status HttpWatchStream::Finish() {
  absl::MutexLock lock(&mu_);
  if (cancelled_) return absl::OkStatus();
  mu_.Await(absl::Condition(&done_));
  return final_status_;
}

void HttpWatchStream::Cancel() {
  cancel_requested_.store(true);
  {
    absl::MutexLock lock(&mu_);
    if (cancelled_) return;
    cancelled_ = true;
  }
  // Shuts the in-flight socket down (httplib's only cross-thread-safe operation on a client), so
  // a read blocked in the reader thread fails at once.
  client_->stop();
}

}  // namespace nereid::kube
