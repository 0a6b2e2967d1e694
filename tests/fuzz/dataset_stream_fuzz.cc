// The LC's sample counters for file formats (txt, jsonl, csv, coco): bytes users control, arriving
// in chunks of any size (mapped windows of a file, network chunks of an http body). Input: one byte
// picks the format, two bytes seed the chunking, the rest is the file.
//
// Properties:
//   - StreamCounter gives the same result (count or error) fed in one piece, in random chunks, and
//     resumed from a checkpoint taken at a random offset (the incremental path after a file grew);
//   - every line/csv kernel this CPU runs agrees, in random chunks, with the byte-at-a-time
//     reference machine (ScanIsa::kScalar) fed in one piece, count and end state;
//   - coco: when the file is JSON that nlohmann/json accepts (the reference), the counter agrees
//     with it: the size of the top-level "images" array, or an error when there is none.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "localcontroller/dataset/checkpoint.h"
#include "localcontroller/dataset/coco_scanner.h"
#include "localcontroller/dataset/format.h"
#include "localcontroller/dataset/line_scan.h"
#include "localcontroller/dataset/stream_counter.h"
#include "nlohmann/json.hpp"
#include "tests/fuzz/fuzz_input.h"

namespace nereid {
namespace {

using lc::dataset::Format;

const uint8_t* Bytes(std::string_view s) { return reinterpret_cast<const uint8_t*>(s.data()); }

absl::StatusOr<uint64_t> CountInChunks(Format format, std::string_view file, uint32_t seed,
                                       size_t max_chunk) {
  lc::dataset::StreamCounter counter(format);
  for (std::string_view chunk : fuzz::Chunks(file, seed, max_chunk)) {
    counter.Feed(Bytes(chunk), chunk.size());
  }
  return counter.Finish();
}

void CheckSameResult(const absl::StatusOr<uint64_t>& a, const absl::StatusOr<uint64_t>& b) {
  FUZZ_CHECK(a.ok() == b.ok());
  if (a.ok()) {
    FUZZ_CHECK(*a == *b);
  } else {
    FUZZ_CHECK(a.status() == b.status());
  }
}

// Counted up to `split`, checkpointed, and resumed by a fresh counter, as a scan after growth.
absl::StatusOr<uint64_t> CountResumed(Format format, std::string_view file, size_t split,
                                      uint32_t seed) {
  lc::dataset::Checkpoint checkpoint;
  {
    lc::dataset::StreamCounter first(format);
    first.Feed(Bytes(file), split);
    first.SaveProgress(&checkpoint);
  }
  lc::dataset::StreamCounter resumed(format);
  resumed.Resume(checkpoint);
  for (std::string_view chunk : fuzz::Chunks(file.substr(split), seed, 97)) {
    resumed.Feed(Bytes(chunk), chunk.size());
  }
  return resumed.Finish();
}

void CheckKernels(std::string_view file, uint32_t seed) {
  lc::dataset::LineScanState ref_lines;
  lc::dataset::CsvScanState ref_csv;
  using lc::dataset::ScanIsa;
  const uint64_t want_lines =
      lc::dataset::ScanLinesWith(ScanIsa::kScalar, Bytes(file), file.size(), &ref_lines);
  const uint64_t want_csv =
      lc::dataset::ScanCsvWith(ScanIsa::kScalar, Bytes(file), file.size(), &ref_csv);
  for (ScanIsa isa : lc::dataset::SupportedScanIsas()) {
    lc::dataset::LineScanState lines;
    lc::dataset::CsvScanState csv;
    uint64_t got_lines = 0;
    uint64_t got_csv = 0;
    for (std::string_view chunk : fuzz::Chunks(file, seed, 1 + seed % 300)) {
      got_lines += lc::dataset::ScanLinesWith(isa, Bytes(chunk), chunk.size(), &lines);
      got_csv += lc::dataset::ScanCsvWith(isa, Bytes(chunk), chunk.size(), &csv);
    }
    FUZZ_CHECK(got_lines == want_lines);
    FUZZ_CHECK(lines.in_line == ref_lines.in_line);
    FUZZ_CHECK(got_csv == want_csv);
    FUZZ_CHECK(csv.state == ref_csv.state);
    FUZZ_CHECK(csv.in_record == ref_csv.in_record);
  }
}

void CheckCocoAgainstJson(std::string_view file, const absl::StatusOr<uint64_t>& counted) {
  // Nesting beyond the counter's bound is refused by design; nlohmann would accept it.
  if (static_cast<size_t>(std::count_if(file.begin(), file.end(), [](char c) {
        return c == '[' || c == '{';
      })) >= lc::dataset::CocoImagesCounter::kMaxDepth) {
    return;
  }
  // nlohmann/json stops at a NUL byte as if the input ended there; Python's json does not.
  if (file.find('\0') != std::string_view::npos) return;
  const nlohmann::json doc = nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return;  // not JSON: the counter is lenient about numbers and literals
  const auto images = doc.is_object() ? doc.find("images") : doc.end();
  if (doc.is_object() && images != doc.end() && images->is_array()) {
    FUZZ_CHECK(counted.ok());
    FUZZ_CHECK(*counted == images->size());
  } else {
    FUZZ_CHECK(!counted.ok());
  }
}

}  // namespace
}  // namespace nereid

NEREID_FUZZ_QUIET_INITIALIZE()

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nereid;
  if (size < 3) return 0;
  constexpr Format kFormats[] = {Format::kTxt, Format::kJsonl, Format::kCsv, Format::kCoco};
  const Format format = kFormats[data[0] % 4];
  const uint32_t seed = data[1] | (data[2] << 8);
  const std::string_view file(reinterpret_cast<const char*>(data) + 3, size - 3);

  const absl::StatusOr<uint64_t> whole = CountInChunks(format, file, seed, file.size() + 1);
  CheckSameResult(whole, CountInChunks(format, file, seed, 1 + seed % 257));
  CheckSameResult(whole, CountInChunks(format, file, seed + 1, 1));
  if (lc::dataset::IsLineFormat(format)) {
    // Past the first 3 bytes: a checkpoint is never taken inside a byte order mark.
    if (file.size() > 3) CheckSameResult(whole, CountResumed(format, file, 3 + seed % (file.size() - 3), seed));
    CheckKernels(file, seed);
  } else {
    CheckCocoAgainstJson(file, whole);
  }
  return 0;
}
