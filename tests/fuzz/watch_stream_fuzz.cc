// The Kubernetes watch stream as the API server (or anything between it and the GM) sends it:
// bytes split into HTTP chunks anywhere. Input: two bytes seed the chunking, the rest is the body.
// Each framed document is decoded as the watch does (DecodeWatchEvent), ERROR events become a
// Status as the reflector reads them, and the others go into an informer cache (Indexer) under the
// key the reflector files them by.
//
// Properties: framing in random chunks yields the same documents and the same verdict as in one
// piece (the size bound included); decoding never throws; the cache stays consistent (every
// listed key is gettable, every namespace index entry is a cached object).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/kube/errors.h"
#include "common/kube/http_watch_stream.h"
#include "common/kube/indexer.h"
#include "common/kube/json_stream.h"
#include "common/kube/object.h"
#include "common/kube/resource.h"
#include "tests/fuzz/fuzz_input.h"

namespace nereid {
namespace {

constexpr size_t kMaxDocument = 4096;

struct Framed {
  std::vector<std::string> documents;
  absl::Status status;
};

Framed Frame(std::string_view body, uint32_t seed, size_t max_chunk) {
  kube::JsonStreamFramer framer(kMaxDocument);
  Framed framed;
  for (std::string_view chunk : fuzz::Chunks(body, seed, max_chunk)) {
    framed.status = framer.Feed(chunk, &framed.documents);
    if (!framed.status.ok()) break;
  }
  return framed;
}

}  // namespace
}  // namespace nereid

NEREID_FUZZ_QUIET_INITIALIZE()

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nereid;
  if (size < 2) return 0;
  const uint32_t seed = data[0] | (data[1] << 8);
  const std::string_view body(reinterpret_cast<const char*>(data) + 2, size - 2);

  const Framed whole = Frame(body, seed, body.size() + 1);
  const Framed chunked = Frame(body, seed, 1 + seed % 64);
  FUZZ_CHECK(whole.status.ok() == chunked.status.ok());
  FUZZ_CHECK(whole.documents == chunked.documents);

  kube::Resource pods{.group = "", .version = "v1", .resource = "pods", .kind = "Pod"};
  kube::Indexer cache({{kube::kNamespaceIndex, kube::NamespaceIndexFunc},
                       {kube::kControllerUidIndex, kube::ControllerUidIndexFunc},
                       {"node", kube::FieldIndexFunc("spec.nodeName")}});
  for (const std::string& document : whole.documents) {
    FUZZ_CHECK(document.size() <= kMaxDocument);
    absl::StatusOr<kube::WatchEvent> event = kube::DecodeWatchEvent(document, pods);
    if (!event.ok()) {
      FUZZ_CHECK(absl::IsDataLoss(event.status()));
      continue;
    }
    FUZZ_CHECK(event->object.is_object());
    if (event->type == kube::WatchEvent::Type::kError) {
      const kube::Json* code = kube::FindPath(event->object, "code");
      const int http_code = code != nullptr && code->is_number_integer() ? code->get<int>() : 500;
      // As the reflector reads an ERROR event.
      (void)kube::StatusFromResponse(http_code, event->object.dump());
      continue;
    }
    (void)kube::ResourceVersion(event->object);
    if (event->type == kube::WatchEvent::Type::kBookmark || kube::Name(event->object).empty()) {
      continue;
    }
    auto object = std::make_shared<const kube::Json>(std::move(event->object));
    if (event->type == kube::WatchEvent::Type::kDeleted) {
      cache.Remove(kube::Key(*object));
    } else {
      cache.Upsert(object);
    }
  }
  const std::vector<std::string> keys = cache.ListKeys();
  FUZZ_CHECK(keys.size() == cache.Size());
  for (const std::string& key : keys) FUZZ_CHECK(cache.Get(key) != nullptr);
  absl::StatusOr<std::vector<std::string>> namespaces = cache.IndexValues(kube::kNamespaceIndex);
  FUZZ_CHECK(namespaces.ok());
  for (const std::string& ns : *namespaces) {
    absl::StatusOr<std::vector<kube::ObjectPtr>> objects = cache.ByIndex(kube::kNamespaceIndex, ns);
    FUZZ_CHECK(objects.ok());
    for (const kube::ObjectPtr& object : *objects) FUZZ_CHECK(cache.Get(kube::Key(*object)) != nullptr);
  }
  return 0;
}
