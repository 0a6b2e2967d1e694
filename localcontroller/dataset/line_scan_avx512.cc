// AVX-512 (F + BW) kernels: 512-bit compares write the 64-bit block masks straight into mask
// registers, about half the instructions of the AVX2 kernel per block. Compiled with -mavx512f
// -mavx512bw -mpclmul -mpopcnt and only called after a runtime CPU check (line_scan.cc); same
// linkage rule as line_scan_avx2.cc.

#include <immintrin.h>

#include "localcontroller/dataset/line_scan_chunk_avx2.h"
#include "localcontroller/dataset/line_scan_kernels.h"

namespace nereid::lc::dataset::internal {
namespace {

// The 16-entry table of line_scan_avx2.cc, once per 128-bit lane.
#define NEREID_WS_TABLE16 \
  ' ', 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, '\t', '\n', '\v', '\f', '\r', 0x8E, 0x8F
alignas(64) constexpr uint8_t kTable[64] = {NEREID_WS_TABLE16, NEREID_WS_TABLE16, NEREID_WS_TABLE16,
                                            NEREID_WS_TABLE16};
#undef NEREID_WS_TABLE16

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
  // The vector path of LinesLoop in AVX2 (line_scan_chunk_avx2.h says why not 512-bit).
  static inline bool LineChunk(const uint8_t* p, uint64_t* count) {
    return LineChunkAvx2(p, count);
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
