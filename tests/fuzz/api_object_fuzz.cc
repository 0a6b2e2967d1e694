// The typed sedna.io kinds (common/api, and DistributedJob from common/job) on any object the API
// server hands the controllers, and on any manifest (YAML, which also covers JSON). The first byte
// picks the kind the object is read as (its "kind" and "apiVersion" are set accordingly, so every
// kind sees every shape); the rest is the document.
//
// Properties: FromJson never throws or crashes and errors are InvalidArgument; Validate() runs on
// whatever parsed; ToJson() of a parsed object parses back to an object that serializes the same
// (what the GM writes is what it reads); ValidateObject (the kind-generic entry) agrees.
//
// A new kind is fuzzed by adding one line to kKinds below.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/api/dataset.h"
#include "common/api/federated_learning_job.h"
#include "common/api/incremental_learning_job.h"
#include "common/api/joint_inference_service.h"
#include "common/api/lifelong_learning_job.h"
#include "common/api/model.h"
#include "common/api/object_validation.h"
#include "common/api/sedna_contract.h"
#include "common/api/yaml_json.h"
#include "common/job/distributed_job.h"
#include "tests/fuzz/fuzz_input.h"

namespace nereid {
namespace {

template <typename Kind>
void CheckKind(const kube::Json& object) {
  absl::StatusOr<Kind> parsed = Kind::FromJson(object);
  absl::StatusOr<std::vector<kube::StatusCause>> generic = api::ValidateObject(object);
  if (!parsed.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(parsed.status()));
    FUZZ_CHECK(!generic.ok());
    return;
  }
  const std::vector<kube::StatusCause> causes = parsed->Validate();
  FUZZ_CHECK(generic.ok());
  FUZZ_CHECK(generic->size() == causes.size());
  const kube::Json written = parsed->ToJson();
  absl::StatusOr<Kind> reread = Kind::FromJson(written);
  FUZZ_CHECK(reread.ok());
  FUZZ_CHECK(reread->ToJson() == written);
  (void)written.dump(-1, ' ', false, kube::Json::error_handler_t::replace);
}

struct KindEntry {
  const kube::Resource* resource;
  void (*check)(const kube::Json&);
};

const std::vector<KindEntry>& Kinds() {
  static const std::vector<KindEntry> kinds = {
      {&api::resources::Datasets(), &CheckKind<api::Dataset>},
      {&api::resources::Models(), &CheckKind<api::Model>},
      {&api::resources::JointInferenceServices(), &CheckKind<api::JointInferenceService>},
      {&api::resources::FederatedLearningJobs(), &CheckKind<api::FederatedLearningJob>},
      {&api::resources::IncrementalLearningJobs(), &CheckKind<api::IncrementalLearningJob>},
      {&api::resources::LifelongLearningJobs(), &CheckKind<api::LifelongLearningJob>},
      {&job::DistributedJobs(), &CheckKind<job::DistributedJob>},
  };
  return kinds;
}

}  // namespace
}  // namespace nereid

NEREID_FUZZ_QUIET_INITIALIZE()

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nereid;
  if (size < 1) return 0;
  const KindEntry& kind = Kinds()[data[0] % Kinds().size()];
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  absl::StatusOr<std::vector<kube::Json>> documents = api::YamlToJson(text);
  if (!documents.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(documents.status()));
    return 0;
  }
  for (kube::Json& object : *documents) {
    if (object.is_object()) {
      object["kind"] = kind.resource->kind;
      object["apiVersion"] = kind.resource->ApiVersion();
    }
    kind.check(object);
  }
  return 0;
}
