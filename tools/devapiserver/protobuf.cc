#include "tools/devapiserver/protobuf.h"

#include <cstdint>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/kube/errors.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"

namespace nereid::devapi {
namespace {

using kube::Json;

enum class Type { kString, kBytes, kInt, kBool, kMessage, kStringMap, kBytesMap, kTime };

struct Message;
struct Field {
  int number;
  const char* name;
  Type type;
  bool repeated = false;
  const Message* message = nullptr;
};
struct Message {
  std::vector<Field> fields;
};

// Field numbers from k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto and
// k8s.io/api/core/v1/generated.proto.
const Message kOwnerReference{{{5, "apiVersion", Type::kString},
                               {1, "kind", Type::kString},
                               {3, "name", Type::kString},
                               {4, "uid", Type::kString},
                               {6, "controller", Type::kBool},
                               {7, "blockOwnerDeletion", Type::kBool}}};
const Message kObjectMeta{{{1, "name", Type::kString},
                           {2, "generateName", Type::kString},
                           {3, "namespace", Type::kString},
                           {5, "uid", Type::kString},
                           {6, "resourceVersion", Type::kString},
                           {7, "generation", Type::kInt},
                           {8, "creationTimestamp", Type::kTime},
                           {11, "labels", Type::kStringMap},
                           {12, "annotations", Type::kStringMap},
                           {13, "ownerReferences", Type::kMessage, true, &kOwnerReference},
                           {14, "finalizers", Type::kString, true}}};
const Message kNamespaceSpec{{{1, "finalizers", Type::kString, true}}};
const Message kNamespace{{{1, "metadata", Type::kMessage, false, &kObjectMeta},
                          {2, "spec", Type::kMessage, false, &kNamespaceSpec}}};
const Message kConfigMap{{{1, "metadata", Type::kMessage, false, &kObjectMeta},
                          {2, "data", Type::kStringMap},
                          {3, "binaryData", Type::kBytesMap},
                          {4, "immutable", Type::kBool}}};
const Message kSecret{{{1, "metadata", Type::kMessage, false, &kObjectMeta},
                       {2, "data", Type::kBytesMap},
                       {3, "type", Type::kString},
                       {4, "stringData", Type::kStringMap},
                       {5, "immutable", Type::kBool}}};
const Message kObjectReference{{{1, "kind", Type::kString},
                                {2, "namespace", Type::kString},
                                {3, "name", Type::kString},
                                {4, "uid", Type::kString},
                                {5, "apiVersion", Type::kString}}};
const Message kLocalObjectReference{{{1, "name", Type::kString}}};
const Message kServiceAccount{{{1, "metadata", Type::kMessage, false, &kObjectMeta},
                               {2, "secrets", Type::kMessage, true, &kObjectReference},
                               {3, "imagePullSecrets", Type::kMessage, true, &kLocalObjectReference},
                               {4, "automountServiceAccountToken", Type::kBool}}};
const Message kTypeMeta{{{1, "apiVersion", Type::kString}, {2, "kind", Type::kString}}};

absl::Status Malformed() { return kube::MakeError("BadRequest", "malformed protobuf request body"); }

class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool done() const { return pos_ >= data_.size(); }

  absl::StatusOr<uint64_t> Varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) return Malformed();
      uint8_t b = static_cast<uint8_t>(data_[pos_++]);
      value |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return value;
    }
    return Malformed();
  }
  absl::StatusOr<std::string_view> Bytes() {
    ASSIGN_OR_RETURN(uint64_t n, Varint());
    if (n > data_.size() - pos_) return Malformed();
    std::string_view out = data_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  absl::Status Skip(int wire_type) {
    switch (wire_type) {
      case 0: return Varint().status();
      case 1: return Advance(8);
      case 2: return Bytes().status();
      case 5: return Advance(4);
      default: return Malformed();
    }
  }

 private:
  absl::Status Advance(size_t n) {
    if (n > data_.size() - pos_) return Malformed();
    pos_ += n;
    return absl::OkStatus();
  }
  std::string_view data_;
  size_t pos_ = 0;
};

absl::StatusOr<Json> Decode(std::string_view data, const Message& message, int depth = 0);

absl::StatusOr<std::pair<std::string, std::string>> MapEntry(std::string_view data) {
  Reader r(data);
  std::pair<std::string, std::string> kv;
  while (!r.done()) {
    ASSIGN_OR_RETURN(uint64_t key, r.Varint());
    int number = static_cast<int>(key >> 3);
    int wire = static_cast<int>(key & 7);
    if (wire == 2 && (number == 1 || number == 2)) {
      ASSIGN_OR_RETURN(std::string_view v, r.Bytes());
      (number == 1 ? kv.first : kv.second) = std::string(v);
    } else {
      RETURN_IF_ERROR(r.Skip(wire));
    }
  }
  return kv;
}

absl::StatusOr<Json> Decode(std::string_view data, const Message& message, int depth) {
  if (depth > 8) return Malformed();
  Json out = Json::object();
  Reader r(data);
  while (!r.done()) {
    ASSIGN_OR_RETURN(uint64_t key, r.Varint());
    int number = static_cast<int>(key >> 3);
    int wire = static_cast<int>(key & 7);
    const Field* field = nullptr;
    for (const Field& f : message.fields) {
      if (f.number == number) field = &f;
    }
    if (field == nullptr) {
      RETURN_IF_ERROR(r.Skip(wire));
      continue;
    }
    Json value;
    bool is_varint_type = field->type == Type::kInt || field->type == Type::kBool;
    if (is_varint_type != (wire == 0)) return Malformed();
    switch (field->type) {
      case Type::kInt: {
        ASSIGN_OR_RETURN(uint64_t v, r.Varint());
        value = static_cast<int64_t>(v);
        break;
      }
      case Type::kBool: {
        ASSIGN_OR_RETURN(uint64_t v, r.Varint());
        value = v != 0;
        break;
      }
      case Type::kString: {
        ASSIGN_OR_RETURN(std::string_view v, r.Bytes());
        value = std::string(v);
        break;
      }
      case Type::kBytes: {
        ASSIGN_OR_RETURN(std::string_view v, r.Bytes());
        value = absl::Base64Escape(ToAbsl(v));
        break;
      }
      case Type::kMessage: {
        ASSIGN_OR_RETURN(std::string_view v, r.Bytes());
        ASSIGN_OR_RETURN(value, Decode(v, *field->message, depth + 1));
        break;
      }
      case Type::kTime: {
        ASSIGN_OR_RETURN(std::string_view v, r.Bytes());
        Reader t(v);
        int64_t seconds = 0;
        while (!t.done()) {
          ASSIGN_OR_RETURN(uint64_t k, t.Varint());
          if ((k & 7) != 0) return Malformed();
          ASSIGN_OR_RETURN(uint64_t n, t.Varint());
          if ((k >> 3) == 1) seconds = static_cast<int64_t>(n);
        }
        value = kube::FormatTimestamp(absl::FromUnixSeconds(seconds));
        break;
      }
      case Type::kStringMap:
      case Type::kBytesMap: {
        ASSIGN_OR_RETURN(std::string_view v, r.Bytes());
        ASSIGN_OR_RETURN(auto kv, MapEntry(v));
        Json& map = out[field->name];
        if (!map.is_object()) map = Json::object();
        map[kv.first] = field->type == Type::kBytesMap ? absl::Base64Escape(kv.second) : kv.second;
        continue;
      }
    }
    if (field->repeated) {
      out[field->name].push_back(std::move(value));
    } else {
      out[field->name] = std::move(value);
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<Json> DecodeKubeProtobuf(std::string_view body) {
  constexpr std::string_view kMagic("k8s\0", 4);
  if (body.substr(0, 4) != kMagic) return Malformed();
  // runtime.Unknown: typeMeta = 1, raw = 2, contentEncoding = 3, contentType = 4.
  Reader r(body.substr(4));
  Json type_meta;
  std::string_view raw;
  while (!r.done()) {
    ASSIGN_OR_RETURN(uint64_t key, r.Varint());
    int number = static_cast<int>(key >> 3);
    int wire = static_cast<int>(key & 7);
    if (wire == 2 && number == 1) {
      ASSIGN_OR_RETURN(std::string_view v, r.Bytes());
      ASSIGN_OR_RETURN(type_meta, Decode(v, kTypeMeta));
    } else if (wire == 2 && number == 2) {
      ASSIGN_OR_RETURN(raw, r.Bytes());
    } else {
      RETURN_IF_ERROR(r.Skip(wire));
    }
  }
  std::string api_version = type_meta.value("apiVersion", "");
  std::string kind = type_meta.value("kind", "");
  const Message* message = nullptr;
  if (api_version == "v1" && kind == "Namespace") message = &kNamespace;
  if (api_version == "v1" && kind == "ConfigMap") message = &kConfigMap;
  if (api_version == "v1" && kind == "Secret") message = &kSecret;
  if (api_version == "v1" && kind == "ServiceAccount") message = &kServiceAccount;
  if (message == nullptr) {
    return kube::MakeError(
        "UnsupportedMediaType",
        absl::StrCat("devapiserver decodes protobuf bodies only for v1 Namespace, ConfigMap, Secret "
                     "and ServiceAccount (got ", api_version, " ", kind, "); send JSON instead, "
                     "e.g. `kubectl create ... --dry-run=client -o yaml | kubectl apply -f -`"));
  }
  ASSIGN_OR_RETURN(Json object, Decode(raw, *message));
  object["apiVersion"] = api_version;
  object["kind"] = kind;
  return object;
}

}  // namespace nereid::devapi
