// Informer cache memory per object, as a real API server returns the objects, side by side: the
// cached copy kept whole (what the GM cached before) and with the GM's cache transform
// (common/kube/cache_transform.h: managedFields and, for Sedna kinds, kubectl's last-applied
// annotation dropped). devapiserver keeps no managedFields, so the end-to-end benches cannot show
// this; here each object is built the way kube-apiserver stores one created by `kubectl apply`
// and then given a status by the GM:
//   - metadata: uid, resourceVersion, generation, creationTimestamp, and the
//     `kubectl.kubernetes.io/last-applied-configuration` annotation (the manifest as kubectl
//     writes it: compact JSON);
//   - managedFields: kubectl-client-side-apply's entry (Update, the manifest's field set and the
//     annotation) and the GM's status entry (Update, subresource status, the status's field set).
//     Lists in the field sets are atomic, as in a CRD schema without list-type markers;
//   - status: `--status-json`, or the kind's typical status below.
// Every object is parsed from its JSON text (as a LIST decodes it), transformed or not, and
// upserted into a kube::Indexer with the GM's default indexes; memory is glibc's allocated bytes
// (mallinfo2) before and after, divided by the objects. A last column holds the transformed
// objects packed (CacheEncoding::kCompact, the GM's form for Sedna kinds), with what a read of an
// object nobody holds then costs (a decode), and what a resync's replay costs per object when it
// hands handlers the key instead.
//
//   informer_cache_bench --manifest examples/joint-inference-service.yaml [--objects 10000]

#include <malloc.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/bench_setup.h"
#include "common/api/yaml_json.h"
#include "common/kube/cache_transform.h"
#include "common/kube/indexer.h"
#include "common/status/macros.h"

namespace nereid::bench {
namespace {

using kube::Json;

// The field set (fieldsV1) of `value`: an object's keys as "f:<key>", anything else a leaf.
Json FieldSet(const Json& value) {
  Json set = Json::object();
  if (!value.is_object()) return set;
  for (const auto& [key, child] : value.items()) set["f:" + key] = FieldSet(child);
  return set;
}

Json TypicalStatus(const std::string& kind) {
  if (kind == "Dataset") return {{"numberOfSamples", 12345}, {"updateTime", "2026-11-27T10:00:00Z"}};
  Json condition = {{"type", "Running"},
                    {"status", "True"},
                    {"lastHeartbeatTime", "2026-11-27T10:00:00Z"},
                    {"lastTransitionTime", "2026-11-27T10:00:00Z"},
                    {"reason", "WorkersRunning"},
                    {"message", "every worker is running"}};
  return {{"active", 2}, {"failed", 0}, {"startTime", "2026-11-27T09:59:00Z"},
          {"conditions", Json::array({condition, condition})}};
}

// The object `manifest` as the API server returns it, named `name`.
Json ServerCopy(const Json& manifest, const std::string& name, int index) {
  Json applied = manifest;
  applied["metadata"]["name"] = name;
  applied["metadata"]["namespace"] = "default";
  Json object = applied;
  Json& meta = object["metadata"];
  meta["uid"] = absl::StrFormat("6f9619ff-8b86-d011-b42d-%012d", index);
  meta["resourceVersion"] = std::to_string(100000 + index);
  meta["generation"] = 1;
  meta["creationTimestamp"] = "2026-11-27T09:58:00Z";
  meta["annotations"][std::string(kube::kLastAppliedAnnotation)] = applied.dump() + "\n";
  object["status"] = TypicalStatus(manifest.value("kind", ""));
  Json kubectl_fields = {{"f:metadata",
                          {{"f:annotations",
                            {{".", Json::object()},
                             {"f:" + std::string(kube::kLastAppliedAnnotation), Json::object()}}}}},
                         {"f:spec", FieldSet(manifest["spec"])}};
  meta["managedFields"] = Json::array(
      {{{"manager", "kubectl-client-side-apply"},
        {"operation", "Update"},
        {"apiVersion", manifest["apiVersion"]},
        {"time", "2026-11-27T09:58:00Z"},
        {"fieldsType", "FieldsV1"},
        {"fieldsV1", kubectl_fields}},
       {{"manager", "globalmanager"},
        {"operation", "Update"},
        {"apiVersion", manifest["apiVersion"]},
        {"time", "2026-11-27T10:00:00Z"},
        {"fieldsType", "FieldsV1"},
        {"fieldsV1", {{"f:status", FieldSet(object["status"])}}},
        {"subresource", "status"}}});
  return object;
}

size_t AllocatedBytes() { return mallinfo2().uordblks; }

struct Measure {
  double bytes_per_object = 0;
  double text_bytes_per_object = 0;
  double get_micros = 0;  // One Get of an object nobody holds, mean over the cache.
  // One Contains: what a resync's replay costs per key when every handler takes keys only
  // (ResourceEventHandlerFuncs::on_resync) instead of the object.
  double contains_micros = 0;
};

// Caches `texts`, each parsed and passed through `transform` (null: kept whole), in `encoding`.
Measure Cache(const std::vector<std::string>& texts, const kube::ObjectTransform& transform,
              kube::CacheEncoding encoding = kube::CacheEncoding::kDecoded) {
  malloc_trim(0);
  const size_t before = AllocatedBytes();
  double text_bytes = 0;
  kube::Indexer indexer(kube::DefaultIndexers(), encoding);
  for (const std::string& text : texts) {
    Json object = Json::parse(text);
    if (transform) transform(object);
    text_bytes += object.dump().size();
    indexer.Upsert(std::make_shared<const Json>(std::move(object)));
  }
  const size_t after = AllocatedBytes();
  const std::vector<std::string> keys = indexer.ListKeys();
  size_t names = 0;  // Read from each object, so the reads cannot be skipped.
  const absl::Time start = absl::Now();
  for (const std::string& key : keys) names += kube::Name(*indexer.Get(key)).size();
  const double get_micros = absl::ToDoubleMicroseconds(absl::Now() - start) / keys.size();
  if (names == 0) std::cerr << "no names read\n";
  size_t found = 0;
  const absl::Time contains_start = absl::Now();
  for (const std::string& key : keys) found += indexer.Contains(key) ? 1 : 0;
  const double contains_micros =
      absl::ToDoubleMicroseconds(absl::Now() - contains_start) / keys.size();
  if (found != keys.size()) std::cerr << "keys missing\n";
  return {static_cast<double>(after - before) / texts.size(), text_bytes / texts.size(),
          get_micros, contains_micros};
}

absl::Status Run(const std::string& manifest_path, int objects) {
  std::ifstream in(manifest_path);
  std::stringstream yaml;
  yaml << in.rdbuf();
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", manifest_path));
  ASSIGN_OR_RETURN(std::vector<Json> documents, api::YamlToJson(yaml.str()));
  if (documents.empty()) return absl::InvalidArgumentError("the manifest has no document");
  const Json& manifest = documents.front();

  std::vector<std::string> texts;
  texts.reserve(objects);
  for (int i = 0; i < objects; ++i) {
    texts.push_back(ServerCopy(manifest, absl::StrCat("object-", i), i).dump());
  }
  // Whole, transformed, whole again: the repeat shows how steady the figure is.
  const Measure whole = Cache(texts, nullptr);
  const Measure dropped = Cache(texts, kube::DropManagedFieldsAndLastApplied);
  const Measure again = Cache(texts, nullptr);
  const Measure packed =
      Cache(texts, kube::DropManagedFieldsAndLastApplied, kube::CacheEncoding::kCompact);
  const auto mib = [](const Measure& m) { return m.bytes_per_object * 100000 / (1 << 20); };
  std::cout << absl::StrFormat(
      "%s (%s), %d objects\n"
      "  cached whole:        %7.0f bytes/object allocated (repeat: %.0f), JSON text %.0f bytes\n"
      "  GM cache transform:  %7.0f bytes/object allocated, JSON text %.0f bytes\n"
      "  ratio whole / transformed: %.2fx; at 100,000 objects: %.0f MiB -> %.0f MiB\n"
      "  transformed, packed: %7.0f bytes/object allocated; ratio transformed / packed %.2fx;"
      " at 100,000 objects: %.0f MiB\n"
      "  Get of an unheld object: %.2f us decoded, %.2f us packed (a decode)\n"
      "  a resync's replay per object, packed: %.2f us handing out the object (a Get), %.2f us"
      " handing out the key (on_resync)\n",
      manifest.value("kind", "?"), manifest_path, objects, whole.bytes_per_object,
      again.bytes_per_object, whole.text_bytes_per_object, dropped.bytes_per_object,
      dropped.text_bytes_per_object, whole.bytes_per_object / dropped.bytes_per_object, mib(whole),
      mib(dropped), packed.bytes_per_object, dropped.bytes_per_object / packed.bytes_per_object,
      mib(packed), dropped.get_micros, packed.get_micros, packed.get_micros,
      packed.contains_micros);
  if (dropped.text_bytes_per_object >= whole.text_bytes_per_object ||
      dropped.bytes_per_object >= whole.bytes_per_object) {
    return absl::InternalError("the transformed cache is not smaller");
  }
  if (packed.bytes_per_object >= dropped.bytes_per_object) {
    return absl::InternalError("the packed cache is not smaller");
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace nereid::bench

int main(int argc, char** argv) {
  std::string manifest_path;
  int objects = 10000;
  nereid::config::OptionSet options(
      "informer_cache_bench", "usage: informer_cache_bench --manifest FILE [--objects N]", "");
  options.Add("manifest", &manifest_path, "a manifest (YAML) to cache copies of (required)");
  options.Add("objects", &objects, "copies cached", 1);
  if (std::optional<int> exit_code =
          nereid::bench::ReadFlags(options, argc, argv, [&]() -> absl::Status {
            if (!manifest_path.empty()) return absl::OkStatus();
            return absl::InvalidArgumentError("--manifest FILE is required");
          })) {
    return *exit_code;
  }
  absl::Status status = nereid::bench::Run(manifest_path, objects);
  if (!status.ok()) {
    std::cerr << "informer_cache_bench: " << status << "\n";
    return 2;
  }
  return 0;
}
