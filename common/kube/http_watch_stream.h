#pragma once

// A watch over HTTP: GET ...?watch=true on a dedicated httplib client, read on a thread of its own.
// The body is a stream of JSON events ({"type":"ADDED","object":{...}}) framed by JsonStreamFramer;
// decoded events wait in a bounded queue (a slow consumer stops the reader, which stops the TCP
// window, instead of growing memory). Cancel() stops the client, which shuts the socket down, so a
// blocked read returns at once.

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/kube/client.h"
#include "common/kube/json_stream.h"
#include "common/kube/resource.h"
#include "httplib.h"

namespace nereid::kube {

// Turns one framed watch document ({"type":...,"object":{...}}) into an event; DataLoss when it is
// not one. Objects that lack apiVersion/kind get those of `resource` (an ERROR event's Status
// keeps its own).
absl::StatusOr<WatchEvent> DecodeWatchEvent(const std::string& document, const Resource& resource);

class HttpWatchStream final : public WatchStream {
 public:
  struct Options {
    size_t max_event_bytes = 16 << 20;
    size_t max_queued_events = 1024;
    Resource resource;  // Fills in apiVersion/kind of objects that lack them; names logs.
    // How long Start() waits for the response headers (real time: this is network I/O).
    absl::Duration header_timeout = absl::Seconds(30);
    // Describes a failed request; called on the reader thread (where TLS errors are known).
    std::function<absl::Status(httplib::Error)> describe_error;
  };

  // Sends the request and waits for the response headers (at most header_timeout). A non-200
  // answer (e.g. 410 Gone when the resourceVersion is too old) becomes the returned error, decoded
  // from its Status body.
  static absl::StatusOr<std::unique_ptr<HttpWatchStream>> Start(
      std::unique_ptr<httplib::ClientImpl> client, std::string path, httplib::Headers headers,
      Options options);

  ~HttpWatchStream() override;

  bool Next(WatchEvent* event) override;
  absl::Status Finish() override;
  void Cancel() override;

 private:
  HttpWatchStream(std::unique_ptr<httplib::ClientImpl> client, Options options);

  void Run(std::string path, httplib::Headers headers);
  absl::Status RequestError(httplib::Error error) const;
  bool OnResponse(const httplib::Response& response);
  bool OnData(const char* data, size_t length);
  // Wait conditions.
  bool StartedOrDone() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  bool CancelledOrRoomInQueue() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  bool CancelledDoneOrEvent() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Turns one framed document into an event; false (with final_status_ set) on malformed input.
  bool Decode(const std::string& document) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::unique_ptr<httplib::ClientImpl> client_;
  const Options options_;
  std::thread reader_;

  absl::Mutex mu_;
  bool headers_received_ ABSL_GUARDED_BY(mu_) = false;
  int http_status_ ABSL_GUARDED_BY(mu_) = 0;
  std::string retry_after_ ABSL_GUARDED_BY(mu_);
  std::string error_body_ ABSL_GUARDED_BY(mu_);
  std::deque<WatchEvent> queue_ ABSL_GUARDED_BY(mu_);
  bool done_ ABSL_GUARDED_BY(mu_) = false;       // The reader has finished.
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status final_status_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> cancel_requested_{false};  // Read by the socket hook, outside mu_.
  JsonStreamFramer framer_;  // Only the reader thread touches it.
};

}  // namespace nereid::kube
