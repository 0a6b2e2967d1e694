#pragma once

// The one way a controller finds a Model its spec names (and a Dataset, for the kinds that read
// one), and the one behaviour, for every kind, when it does not exist yet:
//   - looked up in the controller's informer cache by namespace/name, typed (ResolveModel,
//     ResolveDataset); one whose spec does not parse reads as empty fields (its own status says
//     why);
//   - missing: the object waits for it, it never fails. Condition SpecValid=False with reason
//     ModelNotFound (DatasetNotFound) and a message naming it, phase Pending where the kind has a
//     phase, nothing new created (children of an earlier spec keep running), and a Warning Event
//     with that reason when this is news (RecordSpecInvalid, or MarkSpecInvalid +
//     AnnounceSpecInvalid inside the kind's own status write: spec_validity.h);
//   - no error retry: each controller's Models (Datasets) informer handler (OnSpecChange,
//     informer_handlers.h) enqueues the objects naming one when it appears, changes or goes, so the
//     object proceeds as soon as it exists.
// Sedna instead fails the create and requeues with backoff (docs/sedna-compatibility.md).

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/api/dataset.h"
#include "common/api/model.h"
#include "common/kube/lister.h"

namespace nereid::gm {

// The SpecValid=False reasons (and Warning Events) of a reference that does not exist yet.
inline constexpr std::string_view kModelNotFound = "ModelNotFound";
inline constexpr std::string_view kDatasetNotFound = "DatasetNotFound";

// What an object waits for: the reason above and the message users see.
struct MissingReference {
  std::string reason;
  std::string message;
};

// The Model `name` in `ns` from `models` (an informer's lister). NotFound, with the message users
// see ("Model \"m\" does not exist in namespace ns; waiting for it to be created"), when there is
// none; other lister errors as they are.
absl::StatusOr<api::Model> ResolveModel(const kube::Lister& models, std::string_view ns,
                                        std::string_view name);
absl::StatusOr<api::Dataset> ResolveDataset(const kube::Lister& datasets, std::string_view ns,
                                            std::string_view name);

// The message of a `kind` ("Model", "Dataset") `name` missing from `ns`.
std::string MissingReferenceMessage(std::string_view kind, std::string_view ns,
                                    std::string_view name);

}  // namespace nereid::gm
