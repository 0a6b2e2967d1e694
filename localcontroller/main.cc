// The LocalController executable. Subcommands:
//   count   print the sample count of a dataset (localcontroller/dataset/count_command.h)
// The daemon mode (cloud link, database, REST) is not wired in yet: without a subcommand this
// prints usage and exits 2 rather than pretending to run.

#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "localcontroller/dataset/count_command.h"

namespace {

void PrintUsage(std::ostream& out) {
  out << "usage: localcontroller <command> [flags]\n"
         "commands:\n"
         "  count   print the number of samples of a dataset (localcontroller count --help)\n"
         "The daemon mode is not available in this build yet.\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "count") {
    args.erase(args.begin());
    if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
      nereid::lc::dataset::PrintCountUsage(std::cout);
      return 0;
    }
    return nereid::lc::dataset::RunCountCommand(args, std::cout, std::cerr);
  }
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h" || args[0] == "help")) {
    PrintUsage(std::cout);
    return 0;
  }
  PrintUsage(std::cerr);
  return 2;
}
