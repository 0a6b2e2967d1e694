// AVX-512 (F + BW) kernels: 512-bit compares write the 64-bit block masks straight into mask
// registers, about half the instructions of the AVX2 kernel per block. Compiled with -mavx512f
// -mavx512bw -mpclmul -mpopcnt and only called after a runtime CPU check (line_scan.cc); same
// linkage rule as line_scan_avx2.cc.

#include <immintrin.h>

#include "localcontroller/dataset/line_scan_kernels.h"

namespace nereid::lc::dataset::internal {
namespace {

// The 16-entry table of line_scan_avx2.cc, once per 128-bit lane.
#define NEREID_WS_TABLE16 \
  ' ', 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, '\t', '\n', '\v', '\f', '\r', 0x8E, 0x8F
alignas(64) constexpr uint8_t kTable[64] = {NEREID_WS_TABLE16, NEREID_WS_TABLE16, NEREID_WS_TABLE16,
                                            NEREID_WS_TABLE16};
#undef NEREID_WS_TABLE16
// The same without \n: table[x & 15] == x only for \t \v \f \r and space.
#define NEREID_SPACE_TABLE16 \
  ' ', 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, '\t', 0x8A, '\v', '\f', '\r', 0x8E, 0x8F
alignas(64) constexpr uint8_t kSpaceTable[64] = {NEREID_SPACE_TABLE16, NEREID_SPACE_TABLE16,
                                                 NEREID_SPACE_TABLE16, NEREID_SPACE_TABLE16};
#undef NEREID_SPACE_TABLE16

struct Avx512 {
  template <bool kCsv>
  static inline Masks Load(const uint8_t* p) {
    const __m512i v = _mm512_loadu_si512(p);
    Masks m;
    m.nl = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('\n'));
    // Same table trick as line_scan_avx2.cc: table[x & 15] == x only for \t..\r and space.
    const __m512i table = _mm512_loadu_si512(kTable);
    m.space = _mm512_cmpeq_epi8_mask(_mm512_shuffle_epi8(table, v), v) & ~m.nl;
    if constexpr (kCsv) {
      m.quote = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('"'));
      m.comma = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(','));
    }
    return m;
  }
  // The vector path of LinesLoop (line_scan_kernels.h); see line_scan_avx2.cc. A masked
  // subtract counts into byte lanes: at most kLineChunk / 64 = 128 per lane per chunk.
  static inline bool LineChunk(const uint8_t* p, uint64_t* count) {
    static_assert(kLineChunk / 64 <= 255);
    const __m512i nl = _mm512_set1_epi8('\n');
    const __m512i minus_one = _mm512_set1_epi8(-1);
    const __m512i table = _mm512_loadu_si512(kSpaceTable);
    __m512i starts = _mm512_setzero_si512();
    __mmask64 bad = 0;  // a line end followed by whitespace
    for (size_t i = 0; i < kLineChunk; i += 64) {
      const __m512i v = _mm512_loadu_si512(p + i);
      const __mmask64 after_nl = _mm512_cmpeq_epi8_mask(_mm512_loadu_si512(p + i - 1), nl);
      const __mmask64 space = _mm512_cmpeq_epi8_mask(_mm512_shuffle_epi8(table, v), v);
      const __mmask64 content = ~(space | _mm512_cmpeq_epi8_mask(v, nl));
      starts = _mm512_mask_sub_epi8(starts, after_nl & content, starts, minus_one);
      bad |= after_nl & space;
    }
    if (bad != 0) return false;
    // (Summed through memory: GCC 12's 512-bit extract intrinsics warn about an undefined operand.)
    alignas(64) uint64_t sums[8];
    _mm512_store_si512(sums, _mm512_sad_epu8(starts, _mm512_setzero_si512()));
    for (const uint64_t sum : sums) *count += sum;
    return true;
  }
  static inline uint64_t PrefixXor(uint64_t x) {
    const __m128i product = _mm_clmulepi64_si128(_mm_set_epi64x(0, static_cast<int64_t>(x)),
                                                 _mm_set1_epi8(static_cast<char>(0xFF)), 0);
    return static_cast<uint64_t>(_mm_cvtsi128_si64(product));
  }
};

}  // namespace

uint64_t ScanLinesAvx512(const uint8_t* data, size_t size, LineScanState* state) {
  return LinesLoop<Avx512>(data, size, state);
}

uint64_t ScanCsvAvx512(const uint8_t* data, size_t size, CsvScanState* state) {
  return CsvLoop<Avx512>(data, size, state);
}

}  // namespace nereid::lc::dataset::internal
