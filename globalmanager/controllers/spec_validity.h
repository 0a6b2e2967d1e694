#pragma once

// How every GM controller reports a spec it cannot act on: a condition with reason and message,
// an Event, and no children — never a crash, and no retry storm (the user's edit re-reconciles):
//   RecordSpecInvalid → condition SpecValid=False with the reason (InvalidSpec, or a kind's own
//                       "waiting" reason such as DatasetNotFound) and the causes as message,
//                       status.reason/status.message the same, observedGeneration, and a Warning
//                       Event with that reason when this is news (not on every resync);
//   RecordSpecValid   → once the user fixed it: SpecValid=True, the reason/message the invalid
//                       spec set cleared. Writes nothing for an object that was never invalid.
//   MarkSpecValid     → the same change inside a status write the caller makes anyway.
// Both Record* go through the status subresource with conflict retries (WriteStatus); an object
// that vanished meanwhile is not an error. SpecValidityOptions cover kinds whose status has no
// top-level reason/message, or whose status.conditions is a history of another schema (the
// SpecValid condition then lives in another list, e.g. status.jobConditions).
//
// Every kind but one: DistributedJob is the common job library as a kind, and the library fails a
// job whose spec it refuses (Failed/InvalidSpec, finished: common/job/README.md "Invalid specs"),
// so its controller does that for a spec that does not parse too, rather than wait on
// SpecValid=False for an edit.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/api/common_types.h"
#include "common/kube/errors.h"
#include "common/kube/object.h"
#include "common/kube/resource.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/status_writer.h"

namespace nereid::gm {

inline constexpr std::string_view kSpecValidCondition = "SpecValid";
inline constexpr std::string_view kInvalidSpecReason = "InvalidSpec";
inline constexpr std::string_view kValidReason = "Valid";

struct SpecValidityOptions {
  // The status field holding the list the SpecValid condition is kept in.
  std::string_view conditions_field = "conditions";
  // Whether status.reason/status.message mirror the problem.
  bool top_level_reason = true;
};

absl::Status RecordSpecInvalid(const ControllerContext& context, const kube::Resource& resource,
                               const kube::ObjectPtr& object,
                               const std::vector<kube::StatusCause>& causes,
                               bool top_level_reason = true);
// With a reason of the kind's own (e.g. a referenced object that does not exist yet).
absl::Status RecordSpecInvalid(const ControllerContext& context, const kube::Resource& resource,
                               const kube::ObjectPtr& object, std::string_view reason,
                               std::string_view message, const SpecValidityOptions& options = {});
absl::Status RecordSpecValid(const ControllerContext& context, const kube::Resource& resource,
                             const kube::ObjectPtr& object, bool top_level_reason = true);

// T::FromJson of `object` without its status (a malformed status is ours to rewrite, and must
// never make a spec unreadable).
template <typename T>
absl::StatusOr<T> ParseWithoutStatus(const kube::Json& object) {
  kube::Json spec_only = object;
  if (spec_only.is_object()) spec_only.erase("status");
  return T::FromJson(spec_only);
}

// Parses `object` into its typed common/api struct T once (its status ignored: a malformed status
// is ours to rewrite) and checks it: the type errors (with field paths), else T::Validate()'s
// problems, are appended to `causes`. nullopt when it does not parse; the parsed object otherwise,
// valid only if no cause was added.
template <typename T>
std::optional<T> ParseSpec(const kube::Json& object, std::vector<kube::StatusCause>* causes) {
  absl::StatusOr<T> parsed = ParseWithoutStatus<T>(object);
  if (!parsed.ok()) {
    std::vector<kube::StatusCause> found = kube::Causes(parsed.status());
    if (found.empty()) {
      found.push_back({"FieldValueInvalid", std::string(parsed.status().message()), ""});
    }
    causes->insert(causes->end(), found.begin(), found.end());
    return std::nullopt;
  }
  std::vector<kube::StatusCause> invalid = parsed->Validate();
  causes->insert(causes->end(), invalid.begin(), invalid.end());
  return *std::move(parsed);
}

// `object` parsed into T as ParseSpec does, without checking it: nullopt when it does not parse.
// For readers that need a field or two of an object they do not reconcile here (an index, a
// referenced Dataset or Model, a report): a malformed spec is reported by the object's own
// Reconcile, and reads as empty fields here.
template <typename T>
std::optional<T> ReadSpec(const kube::Json& object) {
  absl::StatusOr<T> parsed = ParseWithoutStatus<T>(object);
  if (!parsed.ok()) return std::nullopt;
  return *std::move(parsed);
}

// After a status write that set SpecValid=False with `reason`/`message` itself (a kind whose
// status layout RecordSpecInvalid cannot write, e.g. JointInferenceService's phase history with
// SpecValid first): the log line and Warning Event RecordSpecInvalid gives, when this is news.
void AnnounceSpecInvalid(const ControllerContext& context, const kube::Resource& resource,
                         const StatusWrite& write, std::string_view reason,
                         std::string_view message, const SpecValidityOptions& options = {});

// Sets SpecValid=False with `reason`/`message` in `status` (and status.reason/message when the
// options say so), inside a status write the caller makes anyway; AnnounceSpecInvalid after it.
void MarkSpecInvalid(kube::Json* status, std::string_view reason, std::string_view message,
                     absl::Time now, const SpecValidityOptions& options = {});

// Sets SpecValid=True in `status` if it says False (clearing the reason/message it set); returns
// whether it changed.
bool MarkSpecValid(kube::Json* status, absl::Time now, const SpecValidityOptions& options = {});

// The SpecValid condition of `status`, if any.
std::optional<api::Condition> FindSpecValid(const kube::Json& status,
                                            const SpecValidityOptions& options = {});

}  // namespace nereid::gm
