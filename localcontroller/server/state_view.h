#pragma once

// What the operator API shows, as plain structs: the server asks a StateView (implemented by the
// daemon over its database, dataset monitor, model keeper and cloud link) and renders JSON.
// Methods are called on HTTP threads concurrently and must not block for long.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "prometheus/metric_family.h"

namespace nereid::lc::server {

struct LinkInfo {
  std::string state;  // idle | connecting | connected | backoff | stopped
  bool synced = false;
  absl::Time last_connected = absl::InfinitePast();
  absl::Time last_sync = absl::InfinitePast();  // last completed sync (persisted across restarts)
  absl::Time last_error_at = absl::InfinitePast();
  std::string last_error;
  absl::Time next_attempt = absl::InfinitePast();
  int attempts = 0;
  std::string server;  // the GM address the current (or last) stream dialed
  int redirects = 0;   // streams sent on to the GM replica serving this node
  uint64_t changes_applied = 0;
  uint64_t changes_nacked = 0;
  uint64_t reports_sent = 0;
  uint64_t reports_acked = 0;
  uint64_t reports_rejected = 0;
  uint64_t reports_retried = 0;
};

struct StatusInfo {
  std::string node;
  std::string version;
  std::string gm_address;
  absl::Time started = absl::InfinitePast();
  LinkInfo link;
  int64_t outbox_depth = 0;
  size_t datasets = 0;
  size_t models = 0;
  size_t workers = 0;
  size_t objects = 0;  // every desired object held (all kinds)
};

struct DatasetInfo {
  std::string ns;
  std::string name;
  std::string uid;
  std::string version;
  std::string url;
  std::string format;
  std::string node_name;
  // spec.credentialName and whether the GM sent its credential (the values are never shown).
  std::string credential_name;
  bool credential_received = false;
  bool scanned = false;          // a result exists (this run or persisted)
  std::optional<int64_t> count;  // the last good count; unset before the first one
  bool stale = false;            // an error stands: `count` is the last good one, not current
  absl::Time last_scan = absl::InfinitePast();
  std::string error_reason;
  std::string error_message;
};

struct ModelInfo {
  std::string ns;
  std::string name;
  std::string uid;
  std::string version;
  std::string url;
  std::string format;
  std::string expected_sha256;
  std::string credential_name;
  bool credential_received = false;
  bool checked = false;
  bool present = false;
  bool verified = false;
  std::string sha256;
  std::optional<uint64_t> size;
  absl::Time last_check = absl::InfinitePast();
  std::string error_reason;
  std::string error_message;
};

class StateView {
 public:
  virtual ~StateView() = default;

  // OK when the LC can do its work (database open, dataset monitor running); Unavailable with
  // the reason otherwise.
  virtual absl::Status Ready() = 0;
  virtual absl::StatusOr<StatusInfo> Status() = 0;
  virtual absl::StatusOr<std::vector<DatasetInfo>> Datasets() = 0;
  // NotFound when the node does not hold that Dataset.
  virtual absl::StatusOr<DatasetInfo> Dataset(std::string_view ns, std::string_view name) = 0;
  virtual absl::StatusOr<std::vector<ModelInfo>> Models() = 0;
  virtual absl::StatusOr<ModelInfo> Model(std::string_view ns, std::string_view name) = 0;
  // State gauges and counters, read at scrape time.
  virtual std::vector<prometheus::MetricFamily> CollectMetrics() = 0;
};

}  // namespace nereid::lc::server
