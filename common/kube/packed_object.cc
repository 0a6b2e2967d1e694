#include "common/kube/packed_object.h"

#include <utility>

namespace nereid::kube {
namespace {

std::vector<uint8_t> Pack(const Json& object) {
  std::vector<uint8_t> bytes = Json::to_msgpack(object);
  bytes.shrink_to_fit();  // The encoder grows its buffer by doubling.
  return bytes;
}

}  // namespace

PackedObject::PackedObject(const ObjectPtr& object) : bytes_(Pack(*object)), decoded_(object) {}

ObjectPtr PackedObject::Unpack() const {
  {
    absl::MutexLock lock(&mu_);
    if (ObjectPtr held = decoded_.lock()) return held;
  }
  // Decoded outside the lock: two first readers may both decode, and the later keeps the other's.
  // The bytes are our own encoding of a valid object, so decoding cannot fail.
  auto decoded = std::make_shared<const Json>(Json::from_msgpack(bytes_));
  absl::MutexLock lock(&mu_);
  if (ObjectPtr held = decoded_.lock()) return held;
  decoded_ = decoded;
  return decoded;
}

}  // namespace nereid::kube
