#include "globalmanager/controllers/edge_objects.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/strings/absl_compat.h"
#include "globalmanager/controllers/content_hash.h"

namespace nereid::gm {

std::string EdgeVersion(const kube::Json& object) {
  if (int64_t generation = kube::Generation(object); generation > 0) {
    return absl::StrCat(generation);
  }
  const kube::Json* spec = kube::FindPath(object, "spec");
  // nlohmann's dump of an object is ordered by key, so equal specs hash equally.
  return absl::StrCat("h", HexHash(spec != nullptr ? spec->dump() : "null"));
}

std::string EdgeVersion(const kube::Json& object,
                        const google::protobuf::MessageLite& node_spec) {
  std::string bytes;
  {
    // Deterministic bytes (map fields in key order), so equal specs have equal versions.
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    node_spec.SerializeToCodedStream(&coded);
  }
  return absl::StrCat(EdgeVersion(object), "-", HexHash(bytes));
}

std::optional<int64_t> GenerationOfVersion(std::string_view version) {
  // A version that carries a Secret's resourceVersion (s3_credentials.h): "<generation>/s<rv>".
  version = version.substr(0, version.find("/s"));
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
