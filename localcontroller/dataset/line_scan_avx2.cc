// AVX2 kernels. This file is compiled with -mavx2 -mpclmul -mpopcnt and only called after a
// runtime CPU check (line_scan.cc), so it must not define anything with external linkage besides
// the two entry points.

#include <immintrin.h>

#include "localcontroller/dataset/line_scan_chunk_avx2.h"
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
  // The vector path of LinesLoop (line_scan_chunk_avx2.h).
  static inline bool LineChunk(const uint8_t* p, uint64_t* count) {
    return LineChunkAvx2(p, count);
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
