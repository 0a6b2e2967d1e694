#include "localcontroller/dataset/count_command.h"

#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "localcontroller/dataset/errors.h"
#include "localcontroller/dataset/sample_counter.h"
#include "nlohmann/json.hpp"

namespace nereid::lc::dataset {
namespace {

struct Flags {
  std::string format;
  std::string host_root = "/rootfs";
  std::vector<std::string> data_roots;
  std::string checkpoint_file;
  std::string url;
  bool json = false;
  bool use_mmap = true;
  std::optional<uint64_t> max_bytes;
  std::optional<double> timeout_seconds;
  int scan_threads = 0;
};

// Parses "--name value" and "--name=value"; returns false with a message on error.
bool ParseFlags(const std::vector<std::string>& args, Flags* flags, std::string* error) {
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg == "--") {
      positional.insert(positional.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
      positional.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::optional<std::string> value;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    if (name == "json" || name == "no-mmap") {
      if (value.has_value()) {
        *error = "--" + name + " takes no value";
        return false;
      }
      (name == "json" ? flags->json : flags->use_mmap) = name == "json";
      continue;
    }
    if (!value.has_value()) {
      if (i + 1 >= args.size()) {
        *error = "--" + name + " needs a value";
        return false;
      }
      value = args[++i];
    }
    if (name == "format") {
      flags->format = *value;
    } else if (name == "host-root") {
      flags->host_root = *value;
    } else if (name == "data-roots") {
      flags->data_roots = absl::StrSplit(*value, ',', absl::SkipEmpty());
    } else if (name == "checkpoint") {
      flags->checkpoint_file = *value;
    } else if (name == "max-bytes") {
      uint64_t n = 0;
      if (!absl::SimpleAtoi(*value, &n)) {
        *error = "--max-bytes needs a number of bytes";
        return false;
      }
      flags->max_bytes = n;
    } else if (name == "scan-threads") {
      if (*value == "auto") {
        flags->scan_threads = 0;
      } else if (*value == "1" || *value == "2") {
        flags->scan_threads = *value == "1" ? 1 : 2;
      } else {
        *error = "--scan-threads needs auto, 1 or 2";
        return false;
      }
    } else if (name == "timeout") {
      double s = 0;
      if (!absl::SimpleAtod(*value, &s) || s <= 0) {
        *error = "--timeout needs a positive number of seconds";
        return false;
      }
      flags->timeout_seconds = s;
    } else {
      *error = "unknown flag --" + name;
      return false;
    }
  }
  if (flags->format.empty()) {
    *error = "--format is required";
    return false;
  }
  if (positional.size() != 1) {
    *error = positional.empty() ? "the dataset url is missing" : "exactly one dataset url expected";
    return false;
  }
  flags->url = positional[0];
  return true;
}

std::optional<Checkpoint> LoadCheckpoint(const std::string& file, std::ostream& err) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;  // first run
  std::stringstream buffer;
  buffer << in.rdbuf();
  absl::StatusOr<Checkpoint> checkpoint = ParseCheckpoint(buffer.str());
  if (!checkpoint.ok()) {
    err << "warning: ignoring checkpoint " << file << ": " << checkpoint.status().message()
        << "\n";
    return std::nullopt;
  }
  return *checkpoint;
}

bool SaveCheckpoint(const std::string& file, const Checkpoint& checkpoint, std::ostream& err) {
  const std::string tmp = file + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << SerializeCheckpoint(checkpoint) << "\n";
    if (!out.flush()) {
      err << "error: cannot write checkpoint " << tmp << "\n";
      return false;
    }
  }
  if (std::rename(tmp.c_str(), file.c_str()) != 0) {
    err << "error: cannot replace checkpoint " << file << "\n";
    return false;
  }
  return true;
}

}  // namespace

void PrintCountUsage(std::ostream& out) {
  out << "usage: localcontroller count --format FORMAT [--host-root DIR] [--data-roots D1,D2]\n"
         "                             [--checkpoint FILE]\n"
         "                             [--json] [--no-mmap] [--max-bytes N] [--timeout SECONDS]\n"
         "                             [--scan-threads auto|1|2] URL\n"
         "  Prints the number of samples the LocalController would report for a Dataset with\n"
         "  spec.url URL and spec.format FORMAT (txt, csv, jsonl, dir, voc, xml, coco).\n"
         "  A host path is resolved under --host-root (default /rootfs; use / on the host)\n"
         "  and must lie in one of --data-roots (host paths; default: anywhere).\n"
         "  --checkpoint FILE  resume from and update a checkpoint (incremental counting)\n"
         "  --json             print count, bytes read, incremental and source as JSON\n"
         "  --scan-threads N   threads for a large txt/jsonl file (auto: 2 when a CPU is idle)\n"
         "  Exit status: 0 ok, 1 the dataset has an error (reason on stderr), 2 usage.\n";
}

int RunCountCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  Flags flags;
  std::string usage_error;
  if (!ParseFlags(args, &flags, &usage_error)) {
    err << "error: " << usage_error << "\n";
    PrintCountUsage(err);
    return 2;
  }
  CounterOptions options;
  options.host_root = flags.host_root;
  options.data_roots = DataRoots(flags.data_roots);
  options.read.use_mmap = flags.use_mmap;
  options.read.scan_threads = flags.scan_threads;
  if (flags.max_bytes.has_value()) options.http.max_bytes = *flags.max_bytes;
  if (flags.timeout_seconds.has_value()) {
    options.http.total_timeout = absl::Seconds(*flags.timeout_seconds);
  }
  SampleCounter counter(options);

  std::optional<Checkpoint> previous;
  if (!flags.checkpoint_file.empty()) previous = LoadCheckpoint(flags.checkpoint_file, err);
  CountRequest request;
  request.url = flags.url;
  request.format = flags.format;
  request.previous = previous.has_value() ? &*previous : nullptr;
  absl::StatusOr<CountResult> result = counter.Count(request);
  if (!result.ok()) {
    if (flags.json) {
      out << nlohmann::json{{"error", {{"reason", ReasonOf(result.status())},
                                       {"message", std::string(result.status().message())}}}}
                 .dump()
          << "\n";
    }
    err << "error: " << ReasonOf(result.status()) << ": " << result.status().message() << "\n";
    return 1;
  }
  if (!flags.checkpoint_file.empty() &&
      !SaveCheckpoint(flags.checkpoint_file, result->checkpoint, err)) {
    return 1;
  }
  if (flags.json) {
    out << nlohmann::json{{"count", result->count},
                          {"bytesRead", result->bytes_read},
                          {"incremental", result->incremental},
                          {"source", result->source}}
               .dump()
        << "\n";
  } else {
    out << result->count << "\n";
  }
  return 0;
}

}  // namespace nereid::lc::dataset
