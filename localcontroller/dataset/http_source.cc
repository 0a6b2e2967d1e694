#include "localcontroller/dataset/http_source.h"

#include <chrono>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/strings/absl_compat.h"
#include "httplib.h"
#include "common/status/macros.h"
#include "localcontroller/dataset/errors.h"

namespace nereid::lc::dataset {
namespace {

struct ParsedUrl {
  std::string scheme;     // "http" | "https"
  std::string authority;  // host[:port], without userinfo
  std::string user;
  std::string password;
  std::string path;       // "/..." including the query
};

absl::StatusOr<ParsedUrl> ParseHttpUrl(std::string_view url) {
  const size_t sep = url.find("://");
  if (sep == std::string_view::npos) {
    return DatasetError(Reason::kInvalidUrl, absl::StrCat("not an http(s) url: ", RedactUrl(url)));
  }
  ParsedUrl parsed;
  parsed.scheme = absl::AsciiStrToLower(ToAbsl(url.substr(0, sep)));
  std::string_view rest = url.substr(sep + 3);
  const size_t slash = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, slash);
  parsed.path = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (!parsed.path.empty() && parsed.path[0] != '/') parsed.path = "/" + parsed.path;
  if (const size_t hash = parsed.path.find('#'); hash != std::string::npos) {
    parsed.path.resize(hash);
  }
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) {
    std::string_view userinfo = authority.substr(0, at);
    authority = authority.substr(at + 1);
    const size_t colon = userinfo.find(':');
    parsed.user = std::string(userinfo.substr(0, colon));
    if (colon != std::string_view::npos) parsed.password = std::string(userinfo.substr(colon + 1));
  }
  if (authority.empty()) {
    return DatasetError(Reason::kInvalidUrl, absl::StrCat("url has no host: ", RedactUrl(url)));
  }
  parsed.authority = std::string(authority);
  return parsed;
}

template <typename Client>
void SetTimeouts(Client& client, const HttpOptions& options) {
  const auto us = [](absl::Duration d) {
    return std::chrono::microseconds(absl::ToInt64Microseconds(d));
  };
  client.set_connection_timeout(us(options.connect_timeout));
  client.set_read_timeout(us(options.read_timeout));
  client.set_write_timeout(us(options.read_timeout));
}

}  // namespace

std::string RedactUrl(std::string_view url) {
  const size_t sep = url.find("://");
  if (sep == std::string_view::npos) return std::string(url);
  const size_t start = sep + 3;
  const size_t end = url.find_first_of("/?#", start);
  const size_t at = url.substr(0, end).rfind('@');
  if (at == std::string_view::npos || at < start) return std::string(url);
  return absl::StrCat(ToAbsl(url.substr(0, start)), "***@", ToAbsl(url.substr(at + 1)));
}

namespace {

struct Attempt {
  std::string redirect;  // non-empty: follow this location
};

// One request. cpp-httplib's own redirect handling treats 304 as a redirect, so redirects are
// followed by FetchHttp instead.
absl::StatusOr<Attempt> FetchOnce(const ParsedUrl& parsed, const std::string& shown,
                                  const HttpOptions& options, bool send_auth,
                                  const std::string& etag, const std::string& last_modified,
                                  Clock* clock, absl::Time deadline,
                                  const std::atomic<bool>* cancel,
                                  absl::FunctionRef<void(const uint8_t*, size_t)> sink,
                                  HttpFetch* fetch) {
  httplib::Client client(absl::StrCat(parsed.scheme, "://", parsed.authority));
  if (!client.is_valid()) {
    return DatasetError(Reason::kInvalidUrl, absl::StrCat("cannot use url ", shown));
  }
  SetTimeouts(client, options);
  client.set_follow_location(false);
  client.enable_server_certificate_verification(true);
  if (!options.ca_file.empty()) client.set_ca_cert_path(options.ca_file);
  if (send_auth && !parsed.user.empty()) client.set_basic_auth(parsed.user, parsed.password);

  httplib::Headers headers;
  if (!etag.empty()) headers.emplace("If-None-Match", etag);
  if (!last_modified.empty()) headers.emplace("If-Modified-Since", last_modified);

  const absl::Time start = clock->Now();
  Attempt attempt;
  int http_status = 0;
  std::optional<absl::Status> abort;  // why we stopped the transfer ourselves
  httplib::Result result = client.Get(
      parsed.path, headers,
      [&](const httplib::Response& response) {
        http_status = response.status;
        if (response.status == 304) {
          fetch->not_modified = true;
          return false;
        }
        if (response.status >= 300 && response.status <= 399 &&
            response.has_header("Location")) {
          attempt.redirect = response.get_header_value("Location");
          return false;
        }
        if (response.status < 200 || response.status > 299) return false;
        fetch->etag = response.get_header_value("ETag");
        fetch->last_modified = response.get_header_value("Last-Modified");
        if (response.has_header("Content-Length")) {
          uint64_t n = 0;
          if (absl::SimpleAtoi(response.get_header_value("Content-Length"), &n) &&
              n > options.max_bytes) {
            abort = DatasetError(Reason::kDownloadTooLarge,
                                 absl::StrCat(shown, ": Content-Length ", n, " is over the limit of ",
                                              options.max_bytes, " bytes"));
            return false;
          }
        }
        return true;
      },
      [&](const char* data, size_t size) {
        if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
          abort = DatasetError(Reason::kCancelled, "scan cancelled");
          return false;
        }
        if (fetch->bytes + size > options.max_bytes) {
          abort = DatasetError(Reason::kDownloadTooLarge,
                               absl::StrCat(shown, ": body is over the limit of ", options.max_bytes,
                                            " bytes"));
          return false;
        }
        if (clock->Now() > deadline) {
          abort = DatasetError(Reason::kTimeout,
                               absl::StrCat(shown, ": download took longer than ",
                                            absl::FormatDuration(options.total_timeout)));
          return false;
        }
        sink(reinterpret_cast<const uint8_t*>(data), size);
        fetch->bytes += size;
        return true;
      });
  if (abort.has_value()) return *abort;
  if (fetch->not_modified || !attempt.redirect.empty()) return attempt;
  if (http_status != 0 && (http_status < 200 || http_status > 299)) {
    return DatasetError(Reason::kDownloadFailed, absl::StrCat(shown, ": HTTP ", http_status));
  }
  if (!result) {
    const httplib::Error error = result.error();
    const absl::Duration elapsed = clock->Now() - start;
    if (error == httplib::Error::ConnectionTimeout ||
        (error == httplib::Error::Read && elapsed >= options.read_timeout)) {
      return DatasetError(Reason::kTimeout,
                          absl::StrCat(shown, ": timed out after ", absl::FormatDuration(elapsed),
                                       " (", httplib::to_string(error), ")"));
    }
    return DatasetError(Reason::kDownloadFailed,
                        absl::StrCat(shown, ": ", httplib::to_string(error)));
  }
  return attempt;
}

}  // namespace

absl::StatusOr<HttpFetch> FetchHttp(std::string_view url, const HttpOptions& options,
                                    const std::string& etag, const std::string& last_modified,
                                    Clock* clock, const std::atomic<bool>* cancel,
                                    absl::FunctionRef<void(const uint8_t*, size_t)> sink) {
  constexpr int kMaxRedirects = 10;
  absl::StatusOr<ParsedUrl> first = ParseHttpUrl(url);
  if (!first.ok()) return first.status();
  ParsedUrl parsed = *first;
  std::string current(url);
  const absl::Time deadline = clock->Now() + options.total_timeout;
  for (int redirects = 0; redirects <= kMaxRedirects; ++redirects) {
    if (parsed.scheme != "http" && parsed.scheme != "https") {
      return DatasetError(Reason::kUnsupported,
                          absl::StrCat("url scheme ", parsed.scheme, " is not http(s)"));
    }
    // Credentials go only to the host they were given for.
    const bool send_auth = parsed.authority == first->authority && parsed.scheme == first->scheme;
    HttpFetch fetch;
    ASSIGN_OR_RETURN(Attempt attempt,
                     FetchOnce(parsed, RedactUrl(current), options, send_auth, etag,
                               last_modified, clock, deadline, cancel, sink, &fetch));
    if (attempt.redirect.empty()) return fetch;
    if (attempt.redirect.find("://") != std::string::npos) {
      current = attempt.redirect;
    } else if (!attempt.redirect.empty() && attempt.redirect[0] == '/') {
      current = absl::StrCat(parsed.scheme, "://", parsed.authority, attempt.redirect);
    } else {
      const size_t slash = parsed.path.rfind('/');
      current = absl::StrCat(parsed.scheme, "://", parsed.authority,
                             parsed.path.substr(0, slash + 1), attempt.redirect);
    }
    ASSIGN_OR_RETURN(ParsedUrl next, ParseHttpUrl(current));
    if (next.user.empty() && next.authority == parsed.authority) {
      next.user = parsed.user;
      next.password = parsed.password;
    }
    parsed = std::move(next);
  }
  return DatasetError(Reason::kDownloadFailed,
                      absl::StrCat(RedactUrl(url), ": more than ", kMaxRedirects, " redirects"));
}

}  // namespace nereid::lc::dataset
