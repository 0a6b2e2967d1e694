#pragma once

// `localcontroller count`: prints the sample count the LC would report for a dataset url, for
// operators checking a dataset and for the benchmarks.
//
//   localcontroller count --format F [--host-root DIR] [--checkpoint FILE] [--json] [--no-mmap]
//                         [--max-bytes N] [--timeout 30s] [--scan-threads auto|1|2] URL
// (flags on the configuration layer, common/config/option_set.h: `localcontroller count --help`
// lists each with its default; a new flag is one line in RegisterOptions of count_command.cc).
//
// URL is a dataset url exactly as in spec.url: a host path is resolved under --host-root (default
// /rootfs, as in the LC container; use --host-root / on the host itself), http(s) is downloaded.
// --checkpoint FILE reads the previous checkpoint from FILE (if it exists) and writes the new one,
// so repeated runs count incrementally like the LC does.
// Exit status: 0 with the count on stdout; 1 with "error: <Reason>: <message>" on stderr when the
// LC would report an error; 2 for a usage error. --help and --version print to `out` and return 0.

#include <ostream>
#include <string>
#include <vector>

#include "common/config/option_set.h"
#include "localcontroller/dataset/sample_counter.h"

namespace nereid::lc::dataset {

struct CountFlags {
  std::string format;
  std::string checkpoint_file;
  std::vector<std::string> urls;
  bool json = false;
  CounterOptions counter;  // the LC's defaults
};

// The command's flags, bound to the fields of `flags` (whose values are the defaults --help shows).
config::OptionSet RegisterCountOptions(CountFlags& flags);

int RunCountCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
void PrintCountUsage(std::ostream& out);

}  // namespace nereid::lc::dataset
