#include "localcontroller/dataset/sample_counter.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "localcontroller/dataset/dir_counter.h"
#include "localcontroller/dataset/errors.h"
#include "localcontroller/dataset/file_counter.h"
#include "localcontroller/dataset/s3_source.h"
#include "localcontroller/dataset/stream_counter.h"

namespace nereid::lc::dataset {

UrlKind ClassifyUrl(std::string_view url, std::string* path) {
  const size_t sep = url.find("://");
  if (sep == std::string_view::npos) {
    *path = std::string(url);
    return UrlKind::kLocal;
  }
  const std::string scheme = absl::AsciiStrToLower(ToAbsl(url.substr(0, sep)));
  if (scheme == "file") {
    *path = std::string(url.substr(sep + 3));
    return UrlKind::kLocal;
  }
  if (scheme == "http" || scheme == "https") return UrlKind::kHttp;
  if (scheme == "s3") return UrlKind::kS3;
  return UrlKind::kUnsupported;
}

absl::StatusOr<CountResult> SampleCounter::Count(const CountRequest& request) const {
  ASSIGN_OR_RETURN(const Format format, ParseFormat(request.format));
  if (request.url.empty()) return DatasetError(Reason::kInvalidUrl, "dataset url is empty");
  std::string path;
  switch (ClassifyUrl(request.url, &path)) {
    case UrlKind::kLocal:
      return CountLocal(path, format, request);
    case UrlKind::kHttp:
      return CountHttp(request.url, format, request);
    case UrlKind::kS3:
      if (options_.s3 != nullptr) return CountS3Dataset(*options_.s3, request.url, format, request);
      break;
    case UrlKind::kUnsupported:
      break;
  }
  const std::string shown = RedactUrl(request.url);
  const std::string scheme = shown.substr(0, shown.find("://"));
  return DatasetError(Reason::kUnsupported,
                      absl::StrCat("url scheme \"", scheme, "\" is not supported (", shown,
                                   "); use a host path, http(s) or s3"));
}

absl::StatusOr<CountResult> SampleCounter::CountLocal(const std::string& path, Format format,
                                                      const CountRequest& request) const {
  ASSIGN_OR_RETURN(HostRoot root, HostRoot::Open(options_.host_root, options_.data_roots));
  // A rename between resolving and opening shows up as FileChanged: resolve again, a few times.
  absl::Status last;
  for (int attempt = 0; attempt < 3; ++attempt) {
    ASSIGN_OR_RETURN(HostRoot::Entry entry, root.Resolve(path));
    CountResult result;
    result.source = entry.host_path;
    if (IsDirectoryFormat(format)) {
      ASSIGN_OR_RETURN(result.count, CountDirectory(root, entry, format, request.cancel));
      result.checkpoint.format = std::string(FormatName(format));
      result.checkpoint.source = entry.host_path;
      result.checkpoint.count = result.count;
      return result;
    }
    absl::StatusOr<UniqueFd> fd = root.OpenFile(entry);
    if (!fd.ok()) {
      last = fd.status();
      if (ReasonOf(last) == "FileChanged") continue;
      return last;
    }
    struct stat st;
    if (fstat(fd->get(), &st) != 0) return ErrnoError(errno, absl::StrCat("stat ", entry.host_path));
    ReadOptions read = options_.read;
    read.cancel = request.cancel;
    absl::StatusOr<FileCount> counted =
        CountFile(fd->get(), st, format, entry.host_path, request.previous, read);
    if (!counted.ok()) {
      last = counted.status();
      if (ReasonOf(last) == "FileChanged") continue;  // truncated under us: count again
      return last;
    }
    result.count = counted->count;
    result.bytes_read = counted->bytes_read;
    result.incremental = counted->incremental;
    result.checkpoint = std::move(counted->checkpoint);
    return result;
  }
  return last;
}

absl::StatusOr<CountResult> SampleCounter::CountHttp(const std::string& url, Format format,
                                                     const CountRequest& request) const {
  const std::string shown = RedactUrl(url);
  if (IsDirectoryFormat(format)) {
    return DatasetError(Reason::kUnsupported,
                        absl::StrCat("format ", ToAbsl(FormatName(format)),
                                     " needs a directory; an http(s) url can only be a file (",
                                     shown, ")"));
  }
  const Checkpoint* previous = request.previous;
  const bool reuse = previous != nullptr && previous->format == FormatName(format) &&
                     previous->source == shown;
  StreamCounter counter(format);
  ASSIGN_OR_RETURN(
      HttpFetch fetch,
      FetchHttp(url, options_.http, reuse ? previous->etag : "",
                reuse ? previous->last_modified : "", options_.clock, request.cancel,
                [&](const uint8_t* data, size_t size) { counter.Feed(data, size); }));
  CountResult result;
  result.source = shown;
  result.bytes_read = fetch.bytes;
  if (fetch.not_modified) {
    result.count = previous->count;
    result.incremental = true;
    result.checkpoint = *previous;
    return result;
  }
  ASSIGN_OR_RETURN(result.count, counter.Finish());
  result.checkpoint.format = std::string(FormatName(format));
  result.checkpoint.source = shown;
  result.checkpoint.count = result.count;
  result.checkpoint.etag = fetch.etag;
  result.checkpoint.last_modified = fetch.last_modified;
  return result;
}

absl::StatusOr<HostRoot::WatchTarget> SampleCounter::WatchTargetFor(std::string_view url) const {
  std::string path;
  if (ClassifyUrl(url, &path) != UrlKind::kLocal) {
    return DatasetError(Reason::kUnsupported, "only host paths can be watched");
  }
  ASSIGN_OR_RETURN(HostRoot root, HostRoot::Open(options_.host_root, options_.data_roots));
  return root.WatchTargetFor(path);
}

}  // namespace nereid::lc::dataset
