#pragma once

// Helpers the fuzz targets share: a deterministic split of an input into chunks (the same input
// always splits the same way, so a crash reproduces), and the check that aborts on a violated
// property (libFuzzer records the input as a crash).

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string_view>
#include <vector>

#include "common/log/log.h"

namespace nereid::fuzz {

// Chunks of `data` with sizes in [1, max_chunk] drawn from `seed`.
inline std::vector<std::string_view> Chunks(std::string_view data, uint32_t seed,
                                            size_t max_chunk) {
  std::minstd_rand rng(seed == 0 ? 1 : seed);
  std::vector<std::string_view> chunks;
  while (!data.empty()) {
    const size_t n = std::min<size_t>(data.size(), 1 + rng() % max_chunk);
    chunks.push_back(data.substr(0, n));
    data.remove_prefix(n);
  }
  return chunks;
}

// Only errors reach stderr: warnings about the malformed input are the expected case here.
inline void QuietLogs() { log::SetMinLevel(log::Level::kError); }

}  // namespace nereid::fuzz

// The libFuzzer set-up hook of a target that needs nothing else.
#define NEREID_FUZZ_QUIET_INITIALIZE()                  \
  extern "C" int LLVMFuzzerInitialize(int*, char***) { \
    nereid::fuzz::QuietLogs();                          \
    return 0;                                           \
  }

// Like assert(), also in release builds: a property the production code must keep.
#define FUZZ_CHECK(cond)                                                          \
  do {                                                                            \
    if (!(cond)) {                                                                \
      std::fprintf(stderr, "%s:%d: property violated: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                               \
    }                                                                             \
  } while (false)
