// SSE2 + POPCNT kernels (every x86-64 CPU has SSE2; POPCNT is checked at run time). Compiled with
// -mpopcnt; same linkage rule as line_scan_avx2.cc.

#include <emmintrin.h>

#include "localcontroller/dataset/line_scan_kernels.h"

namespace nereid::lc::dataset::internal {
namespace {

struct Sse2 {
  static inline uint64_t Bits(__m128i a, __m128i b, __m128i c, __m128i d) {
    return static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(a))) |
           (static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(b))) << 16) |
           (static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(c))) << 32) |
           (static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(d))) << 48);
  }
  static inline __m128i Whitespace(__m128i x) {
    const __m128i d = _mm_sub_epi8(x, _mm_set1_epi8(9));
    const __m128i in_range = _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(4)), d);
    return _mm_or_si128(in_range, _mm_cmpeq_epi8(x, _mm_set1_epi8(' ')));
  }
  template <bool kCsv>
  static inline Masks Load(const uint8_t* p) {
    __m128i v[4];
    for (int i = 0; i < 4; ++i) v[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
    const __m128i nl = _mm_set1_epi8('\n');
    Masks m;
    m.nl = Bits(_mm_cmpeq_epi8(v[0], nl), _mm_cmpeq_epi8(v[1], nl), _mm_cmpeq_epi8(v[2], nl),
                _mm_cmpeq_epi8(v[3], nl));
    m.space = Bits(Whitespace(v[0]), Whitespace(v[1]), Whitespace(v[2]), Whitespace(v[3])) & ~m.nl;
    if constexpr (kCsv) {
      const __m128i q = _mm_set1_epi8('"');
      const __m128i c = _mm_set1_epi8(',');
      m.quote = Bits(_mm_cmpeq_epi8(v[0], q), _mm_cmpeq_epi8(v[1], q), _mm_cmpeq_epi8(v[2], q),
                     _mm_cmpeq_epi8(v[3], q));
      m.comma = Bits(_mm_cmpeq_epi8(v[0], c), _mm_cmpeq_epi8(v[1], c), _mm_cmpeq_epi8(v[2], c),
                     _mm_cmpeq_epi8(v[3], c));
    }
    return m;
  }
  static inline uint64_t PrefixXor(uint64_t x) { return PrefixXorPortable(x); }
};

}  // namespace

uint64_t ScanLinesSse2(const uint8_t* data, size_t size, LineScanState* state) {
  return LinesLoop<Sse2>(data, size, state);
}

uint64_t ScanCsvSse2(const uint8_t* data, size_t size, CsvScanState* state) {
  return CsvLoop<Sse2>(data, size, state);
}

}  // namespace nereid::lc::dataset::internal
