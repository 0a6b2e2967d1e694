#include "localcontroller/dataset/count_command.h"

#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/strings/absl_compat.h"
#include "common/config/option_set.h"
#include "common/version/version.h"
#include "localcontroller/dataset/errors.h"
#include "localcontroller/dataset/sample_counter.h"
#include "nlohmann/json.hpp"

namespace nereid::lc::dataset {

config::OptionSet RegisterCountOptions(CountFlags& f) {
  config::OptionSet options(
      "localcontroller count", "usage: localcontroller count --format FORMAT [flags] URL",
      "Prints the number of samples the LocalController would report for a Dataset with\n"
      "spec.url URL and spec.format FORMAT. A host path is resolved under --host-root (use / on\n"
      "the host itself).\n",
      "Exit status: 0 ok, 1 the dataset has an error (reason on stderr), 2 usage.");
  options.Add("format", &f.format, "txt, csv, jsonl, dir, voc, xml or coco (required)");
  options.Add("host-root", &f.counter.host_root, "where the host's filesystem is mounted");
  options.AddCustom("data-roots", "DIR,DIR", "",
                    "host directories the URL must lie in, comma-separated (empty: anywhere)",
                    [&f](std::string_view value, std::string*) -> absl::Status {
                      f.counter.data_roots = DataRoots(
                          absl::StrSplit(ToAbsl(value), ',', absl::SkipEmpty()));
                      return absl::OkStatus();
                    });
  options.Add("checkpoint", &f.checkpoint_file,
              "resume from and update this checkpoint file (incremental counting)");
  options.AddSwitch("json", &f.json, true,
                    "print count, bytes read, incremental and source as JSON");
  options.AddSwitch("no-mmap", &f.counter.read.use_mmap, false, "read files without mmap");
  options.Add("max-bytes", &f.counter.http.max_bytes, "download limit for http(s) urls", 0);
  options.Add("timeout", &f.counter.http.total_timeout, "download time limit for http(s) urls",
              absl::Nanoseconds(1));
  options.AddCustom("scan-threads", "auto|1|2", "auto",
                    "threads for a large txt/jsonl file (auto: 2 when a CPU is idle)",
                    [&f](std::string_view value, std::string*) -> absl::Status {
                      if (value == "auto" || value == "1" || value == "2") {
                        f.counter.read.scan_threads = value == "auto" ? 0 : value == "1" ? 1 : 2;
                        return absl::OkStatus();
                      }
                      return absl::InvalidArgumentError("needs auto, 1 or 2");
                    });
  options.AddPositional("URL", &f.urls, "the dataset's spec.url");
  return options;
}

namespace {

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
  CountFlags defaults;
  out << RegisterCountOptions(defaults).Help();
}

int RunCountCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CountFlags flags;
  config::OptionSet options = RegisterCountOptions(flags);
  absl::StatusOr<config::OptionSet::Loaded> loaded = options.Load(args, config::NoEnv());
  std::string usage_error;
  if (!loaded.ok()) {
    usage_error = std::string(loaded.status().message());
  } else if (loaded->help) {
    out << options.Help();
    return 0;
  } else if (loaded->version) {
    out << version::VersionLine("localcontroller") << "\n";
    return 0;
  } else if (flags.format.empty()) {
    usage_error = "--format is required";
  } else if (flags.urls.size() != 1) {
    usage_error =
        flags.urls.empty() ? "the dataset url is missing" : "exactly one dataset url expected";
  }
  if (!usage_error.empty()) {
    err << "error: " << usage_error << "\n";
    PrintCountUsage(err);
    return 2;
  }
  for (const std::string& warning : loaded->warnings) err << "warning: " << warning << "\n";
  SampleCounter counter(flags.counter);

  std::optional<Checkpoint> previous;
  if (!flags.checkpoint_file.empty()) previous = LoadCheckpoint(flags.checkpoint_file, err);
  CountRequest request;
  request.url = flags.urls[0];
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
