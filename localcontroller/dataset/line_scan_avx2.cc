// AVX2 kernels. This file is compiled with -mavx2 -mpclmul -mpopcnt and only called after a
// runtime CPU check (line_scan.cc), so it must not define anything with external linkage besides
// the two entry points.

#include <immintrin.h>

#include "localcontroller/dataset/line_scan_kernels.h"

namespace nereid::lc::dataset::internal {
namespace {

struct Avx2 {
  static inline uint64_t Bits(__m256i lo, __m256i hi) {
    return static_cast<uint32_t>(_mm256_movemask_epi8(lo)) |
           (static_cast<uint64_t>(static_cast<uint32_t>(_mm256_movemask_epi8(hi))) << 32);
  }
  // 0xFF where the byte is \t \n \v \f \r or a space, with one table lookup: each of those has
  // its own low nibble, so table[x & 15] == x exactly for them (vpshufb yields 0 for bytes with
  // the high bit set, and the other entries hold values no byte with that low nibble can equal).
  static inline __m256i WhitespaceOrNewline(__m256i x) {
    const __m256i table = _mm256_setr_epi8(
        ' ', -127, -126, -125, -124, -123, -122, -121, -120, '\t', '\n', '\v', '\f', '\r', -114, -113,
        ' ', -127, -126, -125, -124, -123, -122, -121, -120, '\t', '\n', '\v', '\f', '\r', -114, -113);
    return _mm256_cmpeq_epi8(_mm256_shuffle_epi8(table, x), x);
  }
  template <bool kCsv>
  static inline Masks Load(const uint8_t* p) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
    const __m256i nl = _mm256_set1_epi8('\n');
    Masks m;
    m.nl = Bits(_mm256_cmpeq_epi8(a, nl), _mm256_cmpeq_epi8(b, nl));
    m.space = Bits(WhitespaceOrNewline(a), WhitespaceOrNewline(b)) & ~m.nl;
    if constexpr (kCsv) {
      const __m256i quote = _mm256_set1_epi8('"');
      const __m256i comma = _mm256_set1_epi8(',');
      m.quote = Bits(_mm256_cmpeq_epi8(a, quote), _mm256_cmpeq_epi8(b, quote));
      m.comma = Bits(_mm256_cmpeq_epi8(a, comma), _mm256_cmpeq_epi8(b, comma));
    }
    return m;
  }
  // 0xFF where the byte is \t \v \f \r or a space (not \n): the table above with its \n entry
  // replaced by a value no byte with that low nibble can equal.
  static inline __m256i Whitespace(__m256i x) {
    const __m256i table = _mm256_setr_epi8(
        ' ', -127, -126, -125, -124, -123, -122, -121, -120, '\t', -118, '\v', '\f', '\r', -114, -113,
        ' ', -127, -126, -125, -124, -123, -122, -121, -120, '\t', -118, '\v', '\f', '\r', -114, -113);
    return _mm256_cmpeq_epi8(_mm256_shuffle_epi8(table, x), x);
  }
  // The vector path of LinesLoop (line_scan_kernels.h). A sample starts at a content byte whose
  // previous byte is a line end: one compare on a load one byte back, no masks. Each byte lane
  // counts in 8 bits; a chunk adds at most kLineChunk / 64 = 128 to a lane of each accumulator.
  static inline bool LineChunk(const uint8_t* p, uint64_t* count) {
    static_assert(kLineChunk / 64 <= 255);
    const __m256i nl = _mm256_set1_epi8('\n');
    __m256i starts_lo = _mm256_setzero_si256();
    __m256i starts_hi = _mm256_setzero_si256();
    __m256i bad = _mm256_setzero_si256();  // a line end followed by whitespace
    for (size_t i = 0; i < kLineChunk; i += 64) {
      const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
      const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 32));
      const __m256i after_nl_a =
          _mm256_cmpeq_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i - 1)), nl);
      const __m256i after_nl_b =
          _mm256_cmpeq_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 31)), nl);
      const __m256i space_a = Whitespace(a);
      const __m256i space_b = Whitespace(b);
      const __m256i not_content_a = _mm256_or_si256(space_a, _mm256_cmpeq_epi8(a, nl));
      const __m256i not_content_b = _mm256_or_si256(space_b, _mm256_cmpeq_epi8(b, nl));
      // 0xFF is -1: subtracting it counts one.
      starts_lo = _mm256_sub_epi8(starts_lo, _mm256_andnot_si256(not_content_a, after_nl_a));
      starts_hi = _mm256_sub_epi8(starts_hi, _mm256_andnot_si256(not_content_b, after_nl_b));
      bad = _mm256_or_si256(bad, _mm256_or_si256(_mm256_and_si256(after_nl_a, space_a),
                                                 _mm256_and_si256(after_nl_b, space_b)));
    }
    if (!_mm256_testz_si256(bad, bad)) return false;
    // Each lane holds at most 128; the sum of absolute differences against zero adds them up.
    const __m256i zero = _mm256_setzero_si256();
    const __m256i sums =
        _mm256_add_epi64(_mm256_sad_epu8(starts_lo, zero), _mm256_sad_epu8(starts_hi, zero));
    const __m128i sum2 =
        _mm_add_epi64(_mm256_castsi256_si128(sums), _mm256_extracti128_si256(sums, 1));
    *count += static_cast<uint64_t>(_mm_cvtsi128_si64(sum2)) +
              static_cast<uint64_t>(_mm_extract_epi64(sum2, 1));
    return true;
  }
  // Carry-less multiplication by all ones is a prefix XOR.
  static inline uint64_t PrefixXor(uint64_t x) {
    const __m128i product = _mm_clmulepi64_si128(_mm_set_epi64x(0, static_cast<int64_t>(x)),
                                                 _mm_set1_epi8(static_cast<char>(0xFF)), 0);
    return static_cast<uint64_t>(_mm_cvtsi128_si64(product));
  }
};

}  // namespace

uint64_t ScanLinesAvx2(const uint8_t* data, size_t size, LineScanState* state) {
  return LinesLoop<Avx2>(data, size, state);
}

uint64_t ScanCsvAvx2(const uint8_t* data, size_t size, CsvScanState* state) {
  return CsvLoop<Avx2>(data, size, state);
}

}  // namespace nereid::lc::dataset::internal
