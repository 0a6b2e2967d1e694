#pragma once

// The counting kernels for line formats. They are resumable: bytes may be fed in chunks of any
// size, and the state between chunks is a few bits that a checkpoint stores, so a file that grew is
// counted from where the last scan stopped.
//
// A sample is counted at its first "content" byte: a byte that is not ASCII whitespace (space, \t,
// \v, \f, \r) and not a line end. So whitespace-only lines never count, a last line without a
// trailing newline counts, CRLF needs no special case, and line length does not matter.
//
// Implementation: per 64-byte block, SIMD compares build bit masks (newline, whitespace, and for
// CSV quote and comma), and a branch-free carry trick finds the first content byte after each line
// end: adding (newline << 1) to the whitespace mask ripples each newline's carry through the
// whitespace run after it, so the carry lands exactly on the next non-whitespace byte. CSV adds
// quote parity (prefix XOR); blocks where a quote is not where RFC 4180 allows it fall back to a
// byte-at-a-time state machine for that block only, so the result is always the state machine's.
// Line formats on AVX2/AVX-512 first try a cheaper vector path per 8 KiB chunk: a sample starts at
// a content byte right after a line end, counted in per-byte vector lanes without building masks;
// a chunk where a line end is followed by whitespace is redone by the block path.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nereid::lc::dataset {

struct LineScanState {
  // The current line already has content (and was counted).
  bool in_line = false;
};

// Where the CSV parser is, as in Python's csv module (with strict=False, no skipinitialspace).
enum class CsvState : uint8_t {
  kFieldStart = 0,      // at the start of a field: a quote here opens a quoted field
  kUnquoted = 1,        // inside an unquoted field: quotes are literal
  kQuoted = 2,          // inside a quoted field: commas and newlines are data
  kQuoteInQuoted = 3,   // just after a quote inside a quoted field: "" is an escaped quote
};

struct CsvScanState {
  CsvState state = CsvState::kFieldStart;
  // The current record already has content (and was counted).
  bool in_record = false;
};

// Return the number of samples that start in [data, data + size) and update `state`.
uint64_t ScanLines(const uint8_t* data, size_t size, LineScanState* state);
uint64_t ScanCsv(const uint8_t* data, size_t size, CsvScanState* state);

// Instruction sets with a kernel; ScanLines/ScanCsv use the best one the CPU supports (AVX-512
// means F + BW; AVX2 also needs POPCNT and PCLMUL; SSE2 also needs POPCNT).
enum class ScanIsa { kScalar, kPortable64, kSse2, kAvx2, kAvx512 };
const char* ScanIsaName(ScanIsa isa);
// The environment variable NEREID_SCAN_ISA=scalar|portable64|sse2|avx2|avx512 picks a lower one
// (for benchmarks, or to step around a suspect kernel); an unsupported name is ignored.
ScanIsa BestScanIsa();
std::vector<ScanIsa> SupportedScanIsas();

// The same kernels with an explicit instruction set (for tests and benchmarks). kScalar is the
// byte-at-a-time reference state machine every other kernel must agree with.
uint64_t ScanLinesWith(ScanIsa isa, const uint8_t* data, size_t size, LineScanState* state);
uint64_t ScanCsvWith(ScanIsa isa, const uint8_t* data, size_t size, CsvScanState* state);

}  // namespace nereid::lc::dataset
