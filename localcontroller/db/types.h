#pragma once

// Plain records stored in the LocalController database. Specs, checkpoints and report payloads are
// opaque bytes here: their owners (the proto contract, the dataset counter) define the encoding.

#include <cstdint>
#include <optional>
#include <string>

#include "absl/time/time.h"

namespace nereid::lc::db {

// An object the GM sent this node. Identity is (kind, ns, name); uid is carried along (stored,
// inventoried, reported) but never part of a lookup, so a recreated object replaces its predecessor.
struct ObjectRef {
  std::string kind;  // "Dataset", "Model", "JointInferenceService", ...
  std::string ns;
  std::string name;
  std::string uid;

  std::string DebugString() const { return kind + " " + ns + "/" + name; }
};

inline constexpr char kDatasetKind[] = "Dataset";

struct DesiredObject {
  ObjectRef ref;
  std::string version;  // the GM's version of the object
  std::string spec;     // serialized protobuf message, opaque here
  absl::Time updated_at;
};

// What the node holds, sent in the Hello so the GM answers with the difference.
struct InventoryEntry {
  ObjectRef ref;
  std::string version;
};

// One file of a dataset: the counter's checkpoint (opaque) for that path.
struct FileCheckpoint {
  std::string path;
  std::string data;
  absl::Time updated_at;
};

// The last result computed for a dataset (what was, or is being, reported).
struct DatasetResult {
  std::optional<int64_t> count;  // unset while an error stands or before the first scan
  std::string error_reason;      // "" when the last scan succeeded
  std::string error_message;
  absl::Time scanned_at = absl::UnixEpoch();
};

// Outbox entries are keyed by (object, report_type, sub_key): the latest state replaces an older
// unsent one, so the outbox stays bounded while the cloud is away.
inline constexpr char kReportDatasetStatus[] = "dataset-status";
inline constexpr char kReportModelStatus[] = "model-status";
inline constexpr char kReportWorker[] = "worker-report";     // sub_key = worker name
inline constexpr char kReportTrigger[] = "trigger-event";    // sub_key = stage

struct OutboxKey {
  ObjectRef object;         // uid is stored with the entry, not part of the key
  std::string report_type;  // kReport*
  std::string sub_key;      // e.g. the worker name; "" when one report per object

  std::string DebugString() const {
    return object.DebugString() + " " + report_type + (sub_key.empty() ? "" : "/" + sub_key);
  }
};

struct OutboxEntry {
  int64_t seq = 0;  // per-node, strictly increasing, never reused
  OutboxKey key;
  std::string observed_version;
  std::string payload;  // serialized report payload, opaque here
  absl::Time enqueued_at;
};

// Lifetime counters, persisted with the entries so they stay consistent across crashes:
// enqueued == replaced + acked + rejected + depth.
struct OutboxStats {
  int64_t depth = 0;
  int64_t last_seq = 0;
  int64_t enqueued = 0;
  int64_t replaced = 0;  // superseded by a newer state before being acked
  int64_t acked = 0;
  int64_t rejected = 0;
};

}  // namespace nereid::lc::db
