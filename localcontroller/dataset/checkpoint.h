#pragma once

// What the counter remembers about a dataset between scans, so a file that only grew is counted
// from where the last scan stopped. A plain struct; the caller persists it (the LC's SQLite layer
// stores SerializeCheckpoint() as an opaque string) and hands it back for the next scan.
//
// A file checkpoint is trusted for an incremental count only when the file is the same inode on
// the same device, is at least `offset` bytes long, its size or mtime changed, and the last
// `guard_len` (<= 4 KiB) bytes before `offset` still hash to `guard_hash`. Anything else (replaced by
// rename, truncated, rewritten, another format or source) recounts from scratch.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace nereid::lc::dataset {

struct Checkpoint {
  static constexpr int kVersion = 1;
  static constexpr uint32_t kGuardBytes = 4096;

  std::string format;  // FormatName() of the format counted
  std::string source;  // the host path (or url) that was counted

  // File identity at the last scan (file formats).
  uint64_t dev = 0;
  uint64_t ino = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;

  // Progress of a line format (txt, jsonl, csv): bytes counted, samples started in them (for csv
  // including the header record), and the state at `offset`.
  uint64_t offset = 0;
  uint64_t samples = 0;
  bool in_line = false;   // the line/record at `offset` already has content (was counted)
  uint8_t csv_state = 0;  // CsvState at `offset`
  uint64_t guard_hash = 0;
  uint32_t guard_len = 0;

  // The count reported for this scan (all formats).
  uint64_t count = 0;

  // http(s): validators for a conditional GET.
  std::string etag;
  std::string last_modified;

  bool operator==(const Checkpoint&) const = default;
};

// A compact JSON object with short keys, stable across versions of the LC (unknown keys are
// ignored; a different "v" makes ParseCheckpoint fail, and the caller then recounts).
std::string SerializeCheckpoint(const Checkpoint& checkpoint);
absl::StatusOr<Checkpoint> ParseCheckpoint(std::string_view text);

// Fnv1a64 (common/strings/fnv1a.h): stable across processes and builds (the guard is persisted).
uint64_t GuardHash(const uint8_t* data, size_t size);

}  // namespace nereid::lc::dataset
