#pragma once

// Where the cloud link puts what the GM sends: the LC's durable desired state (the SQLite database
// in production, see lc_db_adapter.h). Every write must be committed before it returns: the link
// ACKs a change to the GM right after, and the GM then considers the node up to date.

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nereid/edge/v1/sync.pb.h"

namespace nereid::lc {

class DesiredStateStore {
 public:
  virtual ~DesiredStateStore() = default;

  // Every object held, with the version it is held at (sent in the Hello).
  virtual absl::StatusOr<std::vector<edge::v1::InventoryItem>> Inventory() = 0;
  // Stores (or replaces) the object and commits. InvalidArgument / FailedPrecondition mean "this
  // spec cannot be applied" and are NACKed to the GM; any other error is treated as a local
  // failure: the link drops the stream and resyncs after a backoff.
  virtual absl::Status Upsert(const edge::v1::Resource& resource) = 0;
  // Forgets the object and commits; forgetting an absent object is OK.
  virtual absl::Status Remove(const edge::v1::ObjectRef& ref) = 0;
  // The GM finished sending the difference answering our Hello at `time`.
  virtual absl::Status RecordSync(absl::Time time) { return absl::OkStatus(); }
};

}  // namespace nereid::lc
