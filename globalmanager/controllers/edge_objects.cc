#include "globalmanager/controllers/edge_objects.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/strings/absl_compat.h"

namespace nereid::gm {
namespace {

uint64_t Fnv1a64(std::string_view data) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : data) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

}  // namespace

std::string EdgeVersion(const kube::Json& object) {
  if (int64_t generation = kube::Generation(object); generation > 0) {
    return absl::StrCat(generation);
  }
  const kube::Json* spec = kube::FindPath(object, "spec");
  // nlohmann's dump of an object is ordered by key, so equal specs hash equally.
  return absl::StrFormat("h%016x", Fnv1a64(spec != nullptr ? spec->dump() : "null"));
}

std::optional<int64_t> GenerationOfVersion(std::string_view version) {
  int64_t generation = 0;
  if (version.empty() || !absl::SimpleAtoi(ToAbsl(version), &generation) || generation <= 0) {
    return std::nullopt;
  }
  return generation;
}

edge::v1::ObjectRef EdgeRef(std::string_view kind, const kube::Json& object) {
  edge::v1::ObjectRef ref;
  ref.set_kind(std::string(kind));
  ref.set_namespace_(kube::Namespace(object));
  ref.set_name(kube::Name(object));
  ref.set_uid(kube::Uid(object));
  return ref;
}

}  // namespace nereid::gm
