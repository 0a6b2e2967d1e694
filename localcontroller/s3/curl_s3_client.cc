#include "localcontroller/s3/curl_s3_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/strings/absl_compat.h"
#include "common/time/backoff.h"
#include "localcontroller/s3/s3_xml.h"

namespace nereid::lc::s3 {
namespace {

namespace s3url = ::nereid::s3;

struct CurlDeleter {
  void operator()(CURL* curl) const { curl_easy_cleanup(curl); }
};
struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using CurlPtr = std::unique_ptr<CURL, CurlDeleter>;
using SlistPtr = std::unique_ptr<curl_slist, SlistDeleter>;

struct Request {
  const char* method = "GET";  // GET, HEAD, PUT, DELETE
  Location location;           // for messages
  std::string url;
  const std::atomic<bool>* cancel = nullptr;
  BodySink* sink = nullptr;  // 2xx GET bodies go here; any other body is kept as the document
  std::string_view upload;
};

struct Response {
  long status = 0;
  ObjectInfo info;
  std::string document;
  uint64_t delivered = 0;  // body bytes handed to the sink
};

// State the libcurl callbacks of one transfer share.
struct Transfer {
  CURL* curl = nullptr;
  const CurlS3Options* options = nullptr;
  Request* request = nullptr;
  Response* response = nullptr;
  std::optional<absl::Status> abort;  // why a callback stopped the transfer
  bool status_known = false;
  bool to_sink = false;
  size_t upload_offset = 0;
};

std::string Where(const Credential& credential, const Location& location) {
  return absl::StrCat(location.Url(), " at ", credential.EndpointUrl());
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const size_t n = size * count;
  std::string_view line(data, n);
  if (absl::StartsWith(ToAbsl(line), "HTTP/")) {  // a new response (e.g. after 100 Continue)
    transfer->response->info = ObjectInfo();
    transfer->status_known = false;
    return n;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return n;
  const std::string name = absl::AsciiStrToLower(ToAbsl(line.substr(0, colon)));
  const std::string value(absl::StripAsciiWhitespace(ToAbsl(line.substr(colon + 1))));
  ObjectInfo& info = transfer->response->info;
  if (name == "etag") {
    info.etag = value;
  } else if (name == "last-modified") {
    info.last_modified = value;
  } else if (name == "content-length") {
    uint64_t length = 0;
    if (absl::SimpleAtoi(value, &length)) info.size = length;
  }
  return n;
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const size_t n = size * count;
  Response& response = *transfer->response;
  if (!transfer->status_known) {
    curl_easy_getinfo(transfer->curl, CURLINFO_RESPONSE_CODE, &response.status);
    transfer->to_sink =
        transfer->request->sink != nullptr && response.status >= 200 && response.status < 300;
    transfer->status_known = true;
  }
  if (transfer->to_sink) {
    if (response.delivered + n > transfer->options->max_object_bytes) {
      transfer->abort = absl::ResourceExhaustedError(
          absl::StrCat("the object is over the limit of ", transfer->options->max_object_bytes,
                       " bytes"));
      return 0;
    }
    (*transfer->request->sink)(reinterpret_cast<const uint8_t*>(data), n);
    response.delivered += n;
    return n;
  }
  if (response.document.size() + n > transfer->options->max_document_bytes) {
    transfer->abort = absl::ResourceExhaustedError(
        absl::StrCat("the response document is over the limit of ",
                     transfer->options->max_document_bytes, " bytes"));
    return 0;
  }
  response.document.append(data, n);
  return n;
}

size_t OnUpload(char* buffer, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const std::string_view body = transfer->request->upload;
  const size_t n = std::min(size * count, body.size() - transfer->upload_offset);
  std::copy_n(body.data() + transfer->upload_offset, n, buffer);
  transfer->upload_offset += n;
  return n;
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* transfer = static_cast<Transfer*>(user);
  const std::atomic<bool>* cancel = transfer->request->cancel;
  if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
    transfer->abort = absl::CancelledError("cancelled");
    return 1;
  }
  return 0;
}

// The status of a failed transfer; *retry says whether another attempt may succeed.
absl::Status CurlError(CURLcode code, const char* detail, const std::string& where, bool* retry) {
  const std::string text =
      absl::StrCat(where, ": ", *detail != '\0' ? detail : curl_easy_strerror(code));
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
      *retry = true;
      return absl::UnavailableError(absl::StrCat(text, " (endpoint unreachable)"));
    case CURLE_OPERATION_TIMEDOUT:
      *retry = true;
      return absl::DeadlineExceededError(text);
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
      *retry = true;
      return absl::UnavailableError(text);
    case CURLE_FILESIZE_EXCEEDED:
      return absl::ResourceExhaustedError(text);
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CERTPROBLEM:
      return absl::UnavailableError(absl::StrCat(text, " (TLS)"));
    default:
      return absl::UnavailableError(text);
  }
}

absl::Status HttpError(const Response& response, const std::string& where, bool* retry) {
  const S3ErrorBody error = ParseErrorBody(response.document);
  const std::string detail =
      error.code.empty() ? absl::StrCat("HTTP ", response.status)
                         : absl::StrCat("HTTP ", response.status, " ", error.code,
                                        error.message.empty() ? "" : ": ", error.message);
  const long status = response.status;
  if (status == 404) {
    const char* what = error.code == "NoSuchBucket" ? "no such bucket"
                       : error.code == "NoSuchKey"  ? "no such key"
                                                    : "no such bucket or key";
    return absl::NotFoundError(absl::StrCat(where, ": ", what, " (", detail, ")"));
  }
  if (status == 401 || status == 403) {
    return absl::PermissionDeniedError(
        absl::StrCat(where, ": access denied, check the credential (", detail, ")"));
  }
  if (status == 429 || status >= 500) {
    *retry = true;
    return absl::UnavailableError(absl::StrCat(where, ": ", detail));
  }
  if (status >= 300 && status < 400) {
    return absl::FailedPreconditionError(absl::StrCat(
        where, ": the endpoint redirects (", detail,
        "); use the bucket's own (regional) endpoint in the Secret's s3-endpoint"));
  }
  return absl::FailedPreconditionError(absl::StrCat(where, ": ", detail));
}

void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

CurlS3Client::CurlS3Client(CurlS3Options options) : options_(std::move(options)) {
  GlobalInitOnce();
}

TransferStats CurlS3Client::stats() const {
  return TransferStats{counters_.requests.load(), counters_.bytes_received.load(),
                       counters_.bytes_sent.load()};
}

namespace {

absl::StatusOr<Response> PerformOnce(const CurlS3Options& options, const Credential& credential,
                                     Request& request, bool* retry, TransferStats* cost) {
  *retry = false;
  const std::string where = Where(credential, request.location);
  CurlPtr curl(curl_easy_init());
  if (!curl) return absl::ResourceExhaustedError("curl_easy_init failed");
  Response response;
  Transfer transfer;
  transfer.curl = curl.get();
  transfer.options = &options;
  transfer.request = &request;
  transfer.response = &response;
  char error_text[CURL_ERROR_SIZE] = {0};
  const std::string sigv4 = absl::StrCat("aws:amz:", options.region, ":s3");
  SlistPtr headers(curl_slist_append(nullptr, "x-amz-content-sha256: UNSIGNED-PAYLOAD"));
  headers.reset(curl_slist_append(headers.release(), "Expect:"));
  SlistPtr resolve;
  for (const std::string& entry : options.resolve) {
    resolve.reset(curl_slist_append(resolve.release(), entry.c_str()));
  }
  const auto ms = [](absl::Duration d) { return static_cast<long>(absl::ToInt64Milliseconds(d)); };
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);  // the path is already S3's canonical encoding
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error_text);
  curl_easy_setopt(c, CURLOPT_AWS_SIGV4, sigv4.c_str());
  curl_easy_setopt(c, CURLOPT_USERNAME, credential.access_key_id.c_str());
  curl_easy_setopt(c, CURLOPT_PASSWORD, credential.secret_access_key.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  if (resolve) curl_easy_setopt(c, CURLOPT_RESOLVE, resolve.get());
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
  if (!options.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, options.ca_file.c_str());
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, ms(options.connect_timeout));
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, ms(options.total_timeout));
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
  const long read_timeout_s = static_cast<long>(absl::ToInt64Seconds(options.read_timeout));
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, std::max<long>(1, read_timeout_s));
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &OnHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &OnBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, &OnProgress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &transfer);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  const std::string_view method = request.method;
  if (method == "HEAD") {
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else if (method == "PUT") {
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, &OnUpload);
    curl_easy_setopt(c, CURLOPT_READDATA, &transfer);
    curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(request.upload.size()));
  } else if (method == "DELETE") {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "DELETE");
  } else if (request.sink != nullptr) {
    curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE,
                     static_cast<curl_off_t>(options.max_object_bytes));
  }

  const CURLcode code = curl_easy_perform(c);
  curl_off_t down = 0;
  curl_off_t up = 0;
  long header_bytes = 0;
  long request_bytes = 0;
  curl_easy_getinfo(c, CURLINFO_SIZE_DOWNLOAD_T, &down);
  curl_easy_getinfo(c, CURLINFO_SIZE_UPLOAD_T, &up);
  curl_easy_getinfo(c, CURLINFO_HEADER_SIZE, &header_bytes);
  curl_easy_getinfo(c, CURLINFO_REQUEST_SIZE, &request_bytes);
  cost->requests += 1;
  cost->bytes_received += static_cast<uint64_t>(down) + static_cast<uint64_t>(header_bytes);
  cost->bytes_sent += static_cast<uint64_t>(up) + static_cast<uint64_t>(request_bytes);

  if (transfer.abort.has_value()) {
    return absl::Status(transfer.abort->code(),
                        absl::StrCat(where, ": ", transfer.abort->message()));
  }
  if (code != CURLE_OK) {
    *retry = response.delivered == 0;
    bool retryable = false;
    absl::Status status = CurlError(code, error_text, where, &retryable);
    *retry = *retry && retryable;
    return status;
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.status);
  if (response.status < 200 || response.status > 299) {
    absl::Status status = HttpError(response, where, retry);
    *retry = *retry && response.delivered == 0;
    return status;
  }
  return response;
}

}  // namespace

namespace {

// Runs `request` with retries and backoff, adding what went over the wire to `counters`.
template <typename Counters>
absl::StatusOr<Response> Perform(const CurlS3Options& options, const Credential& credential,
                                 Request& request, Counters& counters) {
  ExponentialBackoff backoff(ExponentialBackoff::Options{
      options.initial_backoff, 2.0, options.max_backoff, /*jitter=*/0.2});
  absl::Status last;
  for (int attempt = 1;; ++attempt) {
    bool retry = false;
    TransferStats cost;
    absl::StatusOr<Response> response = PerformOnce(options, credential, request, &retry, &cost);
    counters.requests += cost.requests;
    counters.bytes_received += cost.bytes_received;
    counters.bytes_sent += cost.bytes_sent;
    if (response.ok() || !retry || attempt >= options.max_attempts) return response;
    last = response.status();
    // Wait in slices so a cancelled scan (LC shutting down) does not sit out the backoff.
    const absl::Time until = options.clock->Now() + backoff.Next();
    while (options.clock->Now() < until) {
      if (request.cancel != nullptr && request.cancel->load(std::memory_order_relaxed)) {
        return absl::CancelledError(absl::StrCat(last.message(), "; cancelled before a retry"));
      }
      options.clock->SleepFor(std::min(until - options.clock->Now(), absl::Milliseconds(50)));
    }
  }
}

}  // namespace

absl::StatusOr<ObjectInfo> CurlS3Client::Head(const Credential& credential,
                                              const Location& location) const {
  Request request;
  request.method = "HEAD";
  request.location = location;
  request.url = s3url::ObjectUrl(credential.use_https, credential.endpoint, location,
                                 options_.addressing);
  absl::StatusOr<Response> response = Perform(options_, credential, request, counters_);
  if (!response.ok()) return response.status();
  return response->info;
}

absl::StatusOr<ObjectInfo> CurlS3Client::Get(const Credential& credential,
                                             const Location& location,
                                             const std::atomic<bool>* cancel,
                                             BodySink sink) const {
  Request request;
  request.location = location;
  request.url = s3url::ObjectUrl(credential.use_https, credential.endpoint, location,
                                 options_.addressing);
  request.cancel = cancel;
  request.sink = &sink;
  absl::StatusOr<Response> response = Perform(options_, credential, request, counters_);
  if (!response.ok()) return response.status();
  ObjectInfo info = response->info;
  info.size = response->delivered;
  return info;
}

absl::StatusOr<ListPage> CurlS3Client::List(const Credential& credential, const Location& prefix,
                                            std::string_view continuation_token,
                                            const std::atomic<bool>* cancel) const {
  Request request;
  request.location = prefix;
  // Parameters sorted and encoded as SigV4's canonical query string, so the signed string and
  // the sent one are the same whatever libcurl's version does with query strings.
  std::string query;
  if (!continuation_token.empty()) {
    query = absl::StrCat("continuation-token=", s3url::UriEncode(continuation_token, false), "&");
  }
  absl::StrAppend(&query, "list-type=2&");
  if (options_.list_page_size > 0) {
    absl::StrAppend(&query, "max-keys=", options_.list_page_size, "&");
  }
  absl::StrAppend(&query, "prefix=", s3url::UriEncode(prefix.key, false));
  request.url = absl::StrCat(
      s3url::ObjectUrl(credential.use_https, credential.endpoint, Location{prefix.bucket, ""},
                       options_.addressing),
      "?", query);
  request.cancel = cancel;
  absl::StatusOr<Response> response = Perform(options_, credential, request, counters_);
  if (!response.ok()) return response.status();
  absl::StatusOr<ListPage> page = ParseListObjectsV2(response->document);
  if (!page.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(Where(credential, prefix), ": ", page.status().message()));
  }
  return page;
}

absl::Status CurlS3Client::Put(const Credential& credential, const Location& location,
                               std::string_view body) const {
  Request request;
  request.method = "PUT";
  request.location = location;
  request.url = s3url::ObjectUrl(credential.use_https, credential.endpoint, location,
                                 options_.addressing);
  request.upload = body;
  return Perform(options_, credential, request, counters_).status();
}

absl::Status CurlS3Client::Delete(const Credential& credential, const Location& location) const {
  Request request;
  request.method = "DELETE";
  request.location = location;
  request.url = s3url::ObjectUrl(credential.use_https, credential.endpoint, location,
                                 options_.addressing);
  return Perform(options_, credential, request, counters_).status();
}

}  // namespace nereid::lc::s3
