#ifndef NEREID_BENCH_RESIDENT_BY_MAPPING_H_
#define NEREID_BENCH_RESIDENT_BY_MAPPING_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace nereid::bench {

// What one mapped thing (the executable, a shared library, the heap, anonymous memory) keeps
// resident in a process, summed over all its mappings in /proc/PID/smaps.
struct MappingResidency {
  std::string name;  // the mapped file's path, or "[heap]", "[stack]", "[anon]"...
  int64_t rss_kb = 0;
  int64_t pss_kb = 0;
};

// Every mapped thing of `pid`, most resident first; empty when smaps cannot be read.
std::vector<MappingResidency> ResidentByMapping(pid_t pid);

// The `top` largest as table rows, the rest summed in a last row: an account of a memory target by
// what each MB is spent on, printed by every run rather than kept by hand.
std::string DescribeResidentByMapping(const std::vector<MappingResidency>& mappings, size_t top);

}  // namespace nereid::bench

#endif  // NEREID_BENCH_RESIDENT_BY_MAPPING_H_
