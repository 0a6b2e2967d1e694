#include "bench/resident_by_mapping.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/str_format.h"

namespace nereid::bench {
namespace {

// The name of a mapping header line ("addr perms offset dev inode   name"), "[anon]" when none.
std::string MappingName(const std::string& header) {
  std::istringstream fields(header);
  std::string field;
  for (int i = 0; i < 5; ++i) fields >> field;
  std::string name;
  std::getline(fields >> std::ws, name);
  return name.empty() ? "[anon]" : name;
}

}  // namespace

std::vector<MappingResidency> ResidentByMapping(pid_t pid) {
  std::ifstream smaps("/proc/" + std::to_string(pid) + "/smaps");
  std::map<std::string, MappingResidency> by_name;
  MappingResidency* current = nullptr;
  std::string line;
  while (std::getline(smaps, line)) {
    long long kb = 0;
    if (std::sscanf(line.c_str(), "Rss: %lld kB", &kb) == 1) {
      if (current != nullptr) current->rss_kb += kb;
    } else if (std::sscanf(line.c_str(), "Pss: %lld kB", &kb) == 1) {
      if (current != nullptr) current->pss_kb += kb;
    } else if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) &&
               line.find('-') < line.find(' ')) {
      const std::string name = MappingName(line);
      current = &by_name[name];
      current->name = name;
    }
  }
  std::vector<MappingResidency> out;
  for (auto& [name, mapping] : by_name) out.push_back(std::move(mapping));
  std::sort(out.begin(), out.end(), [](const MappingResidency& a, const MappingResidency& b) {
    return a.rss_kb != b.rss_kb ? a.rss_kb > b.rss_kb : a.name < b.name;
  });
  return out;
}

std::string DescribeResidentByMapping(const std::vector<MappingResidency>& mappings, size_t top) {
  std::string out = absl::StrFormat("  %8s %8s  %s\n", "RSS kB", "Pss kB", "mapped");
  int64_t rest_rss = 0, rest_pss = 0, total = 0;
  for (size_t i = 0; i < mappings.size(); ++i) {
    total += mappings[i].rss_kb;
    if (i < top) {
      out += absl::StrFormat("  %8d %8d  %s\n", mappings[i].rss_kb, mappings[i].pss_kb,
                             mappings[i].name);
    } else {
      rest_rss += mappings[i].rss_kb;
      rest_pss += mappings[i].pss_kb;
    }
  }
  if (mappings.size() > top) {
    out += absl::StrFormat("  %8d %8d  the other %d mappings\n", rest_rss, rest_pss,
                           mappings.size() - top);
  }
  out += absl::StrFormat("  %8d %8s  in all\n", total, "");
  return out;
}

}  // namespace nereid::bench
