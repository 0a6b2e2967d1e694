#pragma once

// Internal to line_scan*.cc: the per-block logic every instruction set shares. Everything here has
// internal linkage on purpose: line_scan_avx2.cc compiles it with -mavx2, and an inline function
// with external linkage could be merged by the linker into code that runs on any CPU.

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>

#include "localcontroller/dataset/line_scan.h"

namespace nereid::lc::dataset::internal {
namespace {

// ASCII whitespace other than the line end: \t \v \f \r and space.
inline bool IsSpace(uint8_t b) { return b == ' ' || (b >= 9 && b <= 13 && b != '\n'); }

// The reference state machines, one byte at a time. Used for block tails, for CSV blocks the fast
// path cannot decide, and by tests as the ground truth.
inline uint64_t ScalarLines(const uint8_t* p, size_t n, LineScanState* state) {
  uint64_t count = 0;
  bool in_line = state->in_line;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t b = p[i];
    if (b == '\n') {
      in_line = false;
    } else if (!IsSpace(b)) {
      count += in_line ? 0 : 1;
      in_line = true;
    }
  }
  state->in_line = in_line;
  return count;
}

// Advances the CSV machine by one byte; returns whether the byte ends a record.
inline bool CsvStep(CsvState* s, uint8_t b) {
  switch (*s) {
    case CsvState::kFieldStart:
      if (b == '"') {
        *s = CsvState::kQuoted;
      } else if (b == '\n') {
        return true;
      } else if (b != ',') {
        *s = CsvState::kUnquoted;
      }
      return false;
    case CsvState::kUnquoted:
      if (b == ',') {
        *s = CsvState::kFieldStart;
      } else if (b == '\n') {
        *s = CsvState::kFieldStart;
        return true;
      }
      return false;
    case CsvState::kQuoted:
      if (b == '"') *s = CsvState::kQuoteInQuoted;
      return false;
    case CsvState::kQuoteInQuoted:
      if (b == '"') {
        *s = CsvState::kQuoted;
      } else if (b == ',') {
        *s = CsvState::kFieldStart;
      } else if (b == '\n') {
        *s = CsvState::kFieldStart;
        return true;
      } else {
        *s = CsvState::kUnquoted;
      }
      return false;
  }
  return false;
}

inline uint64_t ScalarCsv(const uint8_t* p, size_t n, CsvScanState* state) {
  uint64_t count = 0;
  CsvState s = state->state;
  bool in_record = state->in_record;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t b = p[i];
    if (CsvStep(&s, b)) {
      in_record = false;
    } else if (b == '\n' || !IsSpace(b)) {  // a newline inside quotes is data
      count += in_record ? 0 : 1;
      in_record = true;
    }
  }
  state->state = s;
  state->in_record = in_record;
  return count;
}

// Bit i describes byte i of a 64-byte block.
struct Masks {
  uint64_t nl = 0;     // '\n'
  uint64_t space = 0;  // IsSpace()
  uint64_t quote = 0;  // '"'   (CSV only)
  uint64_t comma = 0;  // ','   (CSV only)
};

inline uint64_t PrefixXorPortable(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

// Counts the bytes that start a sample: content bytes (neither space nor a line end in `ends`)
// whose previous non-space byte is a line end. `carry` is 1 when the block starts at the beginning
// of a line (no content since the last line end). Adding (ends << 1) to `space` sends a carry from
// every line end through the whitespace run that follows it; the carry stops on the first
// non-space byte, which is exactly the byte whose previous non-space byte was a line end.
//
// The block is evaluated as if `carry` were 0, so consecutive blocks do not wait for each other;
// the incoming carry only decides whether the block's first non-space byte starts a sample, and
// it passes through a block that is all whitespace. That leaves one select on the loop-carried
// path instead of an add and a flag.
inline uint64_t LineStarts(uint64_t ends, uint64_t space, uint64_t* carry) {
  const uint64_t content = ~(space | ends);
  uint64_t sum;
  const bool overflow = __builtin_add_overflow(space, ends << 1, &sum);
  const uint64_t starts = static_cast<uint64_t>(__builtin_popcountll(sum & content));
  const uint64_t nonspace = ~space;
  const uint64_t first = nonspace & (0 - nonspace);  // lowest non-space byte, if any
  // Written without conditionals: the compiler otherwise emits data-dependent branches here.
  const uint64_t first_is_content = static_cast<uint64_t>((first & content) != 0);
  const uint64_t all_space = static_cast<uint64_t>(nonspace == 0);  // 1: carry passes through
  const uint64_t carry_in = *carry;
  const uint64_t carry_out = static_cast<uint64_t>(overflow) | (ends >> 63);
  *carry = (carry_out & (all_space - 1)) | (carry_in & (0 - all_space));
  return starts + (carry_in & first_is_content);
}

// The CSV machine state as block carries.
struct CsvCarry {
  uint64_t in_quote = 0;      // all ones inside a quoted field
  uint64_t field_start = 1;   // 1: the next byte starts a field
  uint64_t after_closer = 0;  // 1: the previous byte closed a quoted field
  uint64_t line_carry = 1;    // LineStarts carry: 1 when the record has no content yet
};

inline CsvCarry ToCarry(const CsvScanState& s) {
  CsvCarry c;
  c.in_quote = s.state == CsvState::kQuoted ? ~uint64_t{0} : 0;
  c.field_start = s.state == CsvState::kFieldStart ? 1 : 0;
  c.after_closer = s.state == CsvState::kQuoteInQuoted ? 1 : 0;
  c.line_carry = s.in_record ? 0 : 1;
  return c;
}

inline CsvState StateOf(const CsvCarry& c) {
  if (c.in_quote) return CsvState::kQuoted;
  if (c.after_closer) return CsvState::kQuoteInQuoted;
  if (c.field_start) return CsvState::kFieldStart;
  return CsvState::kUnquoted;
}

inline void SetState(CsvState s, CsvCarry* c) {
  c->in_quote = s == CsvState::kQuoted ? ~uint64_t{0} : 0;
  c->field_start = s == CsvState::kFieldStart ? 1 : 0;
  c->after_closer = s == CsvState::kQuoteInQuoted ? 1 : 0;
}

// One 64-byte CSV block. Fast path: quote parity (prefix XOR) gives the quoted regions; it is exact
// when every opening quote sits at a field start or right after a closing quote (an escaped "").
// Otherwise (a literal quote inside an unquoted field) this block runs the state machine.
template <typename PrefixXor>
inline uint64_t CsvBlock(const uint8_t* p, const Masks& m, CsvCarry* c, PrefixXor prefix_xor) {
  const uint64_t inside = prefix_xor(m.quote) ^ c->in_quote;  // bit set: inside after this byte
  const uint64_t openers = m.quote & inside;
  const uint64_t closers = m.quote & ~inside;
  const uint64_t separators = (m.nl | m.comma) & ~inside;
  const uint64_t allowed = (separators << 1) | c->field_start | (closers << 1) | c->after_closer;
  uint64_t ends;
  if ((openers & ~allowed) == 0) {
    ends = m.nl & ~inside;
    c->in_quote = (inside >> 63) ? ~uint64_t{0} : 0;
    c->field_start = separators >> 63;
    c->after_closer = closers >> 63;
  } else {
    CsvState s = StateOf(*c);
    ends = 0;
    for (int i = 0; i < 64; ++i) {
      if (CsvStep(&s, p[i])) ends |= uint64_t{1} << i;
    }
    SetState(s, c);
  }
  return LineStarts(ends, m.space, &c->line_carry);
}

// Bytes per vector-path chunk of LinesLoop: a multiple of 64, small enough to stay in L1 when the
// block path redoes a chunk.
inline constexpr size_t kLineChunk = 8192;
// After a chunk fails, the block path takes over for this many chunks, doubling up to the maximum
// while chunks keep failing, so a file of indented lines pays for few futile attempts.
inline constexpr size_t kLineChunkBackoffMin = 8;
inline constexpr size_t kLineChunkBackoffMax = 256;

// An instruction set may provide a vector path for line formats:
//   static bool LineChunk(const uint8_t* p, uint64_t* count)
// which counts the samples starting in [p, p + kLineChunk), reading p[-1] too, under the
// assumption that a line has no content yet exactly when the byte before it is a line end. That
// holds unless a line end is followed by whitespace (an indented or whitespace-only line); the
// chunk then returns false without touching *count and the block path redoes it. Typical datasets
// have no such lines, and the vector path is then about twice as fast as the block path (no mask
// extraction, no scalar carry chain): it only compares bytes and accumulates per-byte counts.
template <typename Isa>
concept HasLineChunk = requires(const uint8_t* p, uint64_t* count) {
  { Isa::LineChunk(p, count) } -> std::same_as<bool>;
};

// The block loops. `Isa` provides `template <bool kCsv> static Masks Load(const uint8_t*)` and
// `static uint64_t PrefixXor(uint64_t)`.
template <typename Isa>
inline uint64_t LinesLoop(const uint8_t* p, size_t n, LineScanState* state) {
  uint64_t carry = state->in_line ? 0 : 1;
  uint64_t count = 0;
  size_t i = 0;
  // The first block goes through the block path, so p[i - 1] is readable for the vector path.
  size_t blocks_until = 64;
  size_t backoff = kLineChunkBackoffMin;
  const size_t blocks_end = n - n % 64;
  for (;;) {
    if constexpr (HasLineChunk<Isa>) {
      // The vector path's assumption at its first byte: no content yet iff p[i - 1] is a line end.
      while (i >= blocks_until && n - i >= kLineChunk &&
             carry == static_cast<uint64_t>(p[i - 1] == '\n')) {
        if (!Isa::LineChunk(p + i, &count)) {
          // Indented or whitespace-only lines: stay on the block path for a while.
          blocks_until = i + backoff * kLineChunk;
          backoff = std::min(2 * backoff, kLineChunkBackoffMax);
          break;
        }
        backoff = kLineChunkBackoffMin;
        i += kLineChunk;
        carry = static_cast<uint64_t>(p[i - 1] == '\n');
      }
    }
    size_t stop = blocks_end;
    if constexpr (HasLineChunk<Isa>) {
      // At least one block, then on to where the vector path may be tried again.
      stop = std::min(blocks_end, std::max(blocks_until, i + 64));
    }
    if (stop <= i) break;
    for (; i < stop; i += 64) {
      const Masks m = Isa::template Load<false>(p + i);
      count += LineStarts(m.nl, m.space, &carry);
    }
  }
  state->in_line = carry == 0;
  return count + ScalarLines(p + i, n - i, state);
}

template <typename Isa>
inline uint64_t CsvLoop(const uint8_t* p, size_t n, CsvScanState* state) {
  CsvCarry carry = ToCarry(*state);
  uint64_t count = 0;
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const Masks m = Isa::template Load<true>(p + i);
    count += CsvBlock(p + i, m, &carry, &Isa::PrefixXor);
  }
  state->state = StateOf(carry);
  state->in_record = carry.line_carry == 0;
  return count + ScalarCsv(p + i, n - i, state);
}

}  // namespace
}  // namespace nereid::lc::dataset::internal
