#pragma once

// Internal to line_scan_avx2.cc and line_scan_avx512.cc: the vector path of LinesLoop
// (line_scan_kernels.h) in 256-bit AVX2. The AVX-512 kernel uses it too: a 512-bit version measured
// slower (32-37 vs 44-45 GB/s in cache), since its 64-byte load one byte back always splits a
// cache line. Same linkage rule as line_scan_kernels.h: everything here has internal linkage.

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "localcontroller/dataset/line_scan_kernels.h"

namespace nereid::lc::dataset::internal {
namespace {

// 0xFF where the byte is \t \v \f \r or a space (not \n): table[x & 15] == x only for those
// (vpshufb yields 0 for bytes with the high bit set, and the other entries, \n's included, hold
// values no byte with that low nibble can equal).
inline __m256i SpaceBytes(__m256i x) {
  const __m256i table = _mm256_setr_epi8(
      ' ', -127, -126, -125, -124, -123, -122, -121, -120, '\t', -118, '\v', '\f', '\r', -114, -113,
      ' ', -127, -126, -125, -124, -123, -122, -121, -120, '\t', -118, '\v', '\f', '\r', -114, -113);
  return _mm256_cmpeq_epi8(_mm256_shuffle_epi8(table, x), x);
}

// A sample starts at a content byte whose previous byte is a line end: one compare on a load one
// byte back, no masks. Each byte lane counts in 8 bits; a chunk adds at most kLineChunk / 64 = 128
// to a lane of each accumulator.
inline bool LineChunkAvx2(const uint8_t* p, uint64_t* count) {
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
    const __m256i space_a = SpaceBytes(a);
    const __m256i space_b = SpaceBytes(b);
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

}  // namespace
}  // namespace nereid::lc::dataset::internal
