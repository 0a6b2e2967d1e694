// Dataset counting benchmark: `localcontroller count` against `wc -l` on the same files, side by
// side in one run, from the page cache, with this machine's floor beside them; plus the
// incremental recount of a grown file.
//
//   count_bench --localcontroller PATH [--size BYTES] [--reps N] [--dir DIR] [--enforce]
//
// For each format (txt, jsonl, quoted csv) it writes a file of --size bytes (default 1 GiB) in a
// fresh temporary directory under --dir (default $TMPDIR or /tmp), reads it once to warm the page
// cache, then runs, alternately, --reps times (default 7) after one untimed warm-up:
//   - `wc -l FILE` and `localcontroller count` (default threads, --scan-threads 1 and 2);
//   - the same count in process (SampleCounter, no process start), with 1 and 2 threads;
//   - the floor of this machine (count_floor.h): read-copy, mmap-touch and mmap-read-all.
// It checks every count against what the generator wrote and prints medians: the ratio to wc -l
// (target >= 1.5x for txt/jsonl, 0.5x for csv) in wall-clock and CPU time (user + system, steadier
// on a shared machine), and the in-process count against the mmap-touch floor (target <= 1.3x for
// txt/jsonl), with the load average at the start and end of each row. Then it appends 1 MiB to the
// txt file and recounts from the checkpoint, against counting a 1 MiB file alone (in process, so
// process start-up does not hide the difference; the CLI with --checkpoint is shown too). The
// directory is removed at the end. Exit status: 1 if a count is wrong; with --enforce also if a
// target is missed.
//
//   count_bench --strategies TXT_FILE [--reps N]
//
// compares ways of reading a cached file for the line kernel (count_strategies.h).
//
//   count_bench --kernels [--dir DIR]
//
// measures the counting kernels alone instead: every instruction set this CPU supports, over
// 256 KiB of generated txt lines (as is, and with every line indented, which takes the block path)
// and of quoted csv, kept in cache, in CPU time; each result is checked against the reference.

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench/count_floor.h"
#include "bench/count_strategies.h"
#include "common/config/option_set.h"
#include "localcontroller/dataset/line_scan.h"
#include "localcontroller/dataset/sample_counter.h"

extern char** environ;

namespace {

using nereid::lc::dataset::Checkpoint;
using nereid::lc::dataset::CountRequest;
using nereid::lc::dataset::CountResult;
using nereid::lc::dataset::CounterOptions;
using nereid::lc::dataset::SampleCounter;

struct Options {
  std::string localcontroller;
  bool kernels = false;
  uint64_t size = uint64_t{1} << 30;
  int reps = 7;
  std::string dir;
  bool enforce = false;
  std::string strategies;  // a txt file: compare ways of reading it instead
};

using nereid::bench::ProcessCpuNow;
double Now() { return nereid::bench::WallNow(); }

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Timed {
  double wall = 0;  // seconds
  double cpu = 0;   // user + system seconds of the child
  double user = 0;
  double sys = 0;
  std::string out;
};

// Runs argv; nullopt if it did not exit 0.
std::optional<Timed> RunTimed(const std::vector<std::string>& args) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return std::nullopt;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const double start = Now();
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(pipe_fds[0], buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  close(pipe_fds[0]);
  if (rc != 0) return std::nullopt;
  int status = 0;
  rusage usage = {};
  wait4(pid, &status, 0, &usage);
  Timed t;
  t.wall = Now() - start;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  t.user = static_cast<double>(usage.ru_utime.tv_sec) +
           static_cast<double>(usage.ru_utime.tv_usec) / 1e6;
  t.sys = static_cast<double>(usage.ru_stime.tv_sec) +
          static_cast<double>(usage.ru_stime.tv_usec) / 1e6;
  t.cpu = t.user + t.sys;
  t.out = std::move(out);
  return t;
}

uint64_t FirstNumber(const std::string& s) { return std::strtoull(s.c_str(), nullptr, 10); }

// What a generator wrote: bytes, newline characters (what wc -l counts) and samples.
struct Generated {
  std::string path;
  uint64_t bytes = 0;
  uint64_t newlines = 0;
  uint64_t samples = 0;
};

// Builds a ~1 MiB block of the format, then repeats it up to `size` bytes (whole blocks, the last
// one cut at a record boundary so the expected counts stay exact).
Generated Generate(const std::string& path, const std::string& format, uint64_t size) {
  std::mt19937_64 rng(42);
  std::vector<std::string> records;
  uint64_t block_bytes = 0;
  const char* words[] = {"edge", "cloud", "model", "sample", "camera", "frame", "label", "infer",
                         "train", "node", "sedna", "nereid", "image", "helmet", "person", "car"};
  while (block_bytes < (1u << 20)) {
    std::string r;
    const uint64_t id = rng() % 10'000'000;
    if (format == "txt") {
      r = "images/train/" + std::to_string(id) + ".jpg " + std::to_string(rng() % 80) + "\n";
    } else if (format == "jsonl") {
      r = "{\"id\": " + std::to_string(id) + ", \"text\": \"";
      const int n = 6 + static_cast<int>(rng() % 10);
      for (int i = 0; i < n; ++i) r += std::string(words[rng() % 16]) + " ";
      r += "\", \"label\": " + std::to_string(rng() % 10) + "}\n";
    } else {  // csv with quoted fields, embedded commas, newlines and escaped quotes
      r = std::to_string(id) + ",\"";
      const int n = 4 + static_cast<int>(rng() % 8);
      for (int i = 0; i < n; ++i) {
        r += words[rng() % 16];
        const uint64_t k = rng() % 10;
        r += k == 0 ? "\n" : k == 1 ? ", " : k == 2 ? " \"\"quoted\"\" " : " ";
      }
      r += "\"," + std::to_string(rng() % 10) + ",\"" + words[rng() % 16] + "\"\n";
    }
    block_bytes += r.size();
    records.push_back(std::move(r));
  }
  Generated g;
  g.path = path;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (format == "csv") {
    const std::string header = "id,text,label,tag\n";
    out << header;
    g.bytes += header.size();
    g.newlines += 1;
  }
  std::string block;
  uint64_t block_newlines = 0;
  for (const std::string& r : records) {
    block += r;
    block_newlines += static_cast<uint64_t>(std::count(r.begin(), r.end(), '\n'));
  }
  while (g.bytes + block.size() <= size) {
    out.write(block.data(), static_cast<std::streamsize>(block.size()));
    g.bytes += block.size();
    g.newlines += block_newlines;
    g.samples += records.size();
  }
  for (const std::string& r : records) {
    if (g.bytes + r.size() > size) break;
    out << r;
    g.bytes += r.size();
    g.newlines += static_cast<uint64_t>(std::count(r.begin(), r.end(), '\n'));
    g.samples += 1;
  }
  out.close();
  return g;
}

void WarmCache(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  std::vector<char> buf(1 << 20);
  while (read(fd, buf.data(), buf.size()) > 0) {
  }
  close(fd);
}

struct TempDirGuard {
  std::string path;
  ~TempDirGuard() {
    if (!path.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  }
};

// Every flag, bound to the fields of `o` (whose values are the defaults --help shows).
nereid::config::OptionSet RegisterOptions(Options& o) {
  nereid::config::OptionSet options(
      "count_bench",
      "usage: count_bench --localcontroller PATH [--size BYTES] [--reps N] [--dir DIR] "
      "[--enforce]\n"
      "       count_bench --kernels [--dir DIR]\n"
      "       count_bench --strategies TXT_FILE [--reps N]",
      "");
  options.Add("localcontroller", &o.localcontroller, "the localcontroller binary");
  options.Add("size", &o.size, "bytes of each generated file", 1);
  options.Add("reps", &o.reps, "timed runs of each", 1);
  options.Add("dir", &o.dir, "where the files go (empty: $TMPDIR or /tmp)");
  options.AddSwitch("enforce", &o.enforce, true, "exit 1 when a target is missed");
  options.AddSwitch("kernels", &o.kernels, true, "time the line-scan kernels only");
  options.Add("strategies", &o.strategies, "a txt file: compare ways of reading it instead");
  return options;
}

// false: exit (with 0 after --help or --version, else 2).
bool ParseArgs(int argc, char** argv, Options* o, int* exit_code) {
  nereid::config::OptionSet options = RegisterOptions(*o);
  absl::StatusOr<nereid::config::OptionSet::Loaded> loaded =
      options.Load(std::vector<std::string>(argv + 1, argv + argc), nereid::config::NoEnv());
  *exit_code = 2;
  if (!loaded.ok()) {
    std::cerr << "count_bench: " << loaded.status().message() << "\n";
    return false;
  }
  if (loaded->help || loaded->version) {
    std::cout << options.Help();
    *exit_code = 0;
    return false;
  }
  if (o->localcontroller.empty() && !o->kernels && o->strategies.empty()) {
    std::cerr << options.Help();
    return false;
  }
  return true;
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// GB/s of CPU time for `scan` over `text`, repeated for about 0.3 s; nullopt if a pass disagrees
// with `want`.
template <typename Scan>
std::optional<double> KernelRate(const std::string& text, uint64_t want, Scan scan) {
  const auto* data = reinterpret_cast<const uint8_t*>(text.data());
  uint64_t passes = 0;
  const double start = ProcessCpuNow();
  double elapsed = 0;
  do {
    for (int i = 0; i < 16; ++i, ++passes) {
      if (scan(data, text.size()) != want) return std::nullopt;
    }
    elapsed = ProcessCpuNow() - start;
  } while (elapsed < 0.3);
  return static_cast<double>(text.size()) * static_cast<double>(passes) / elapsed / 1e9;
}

// The kernels alone, from cache (RESULTS.md, "Kernel throughput alone").
int RunKernels(const std::string& dir) {
  using nereid::lc::dataset::CsvScanState;
  using nereid::lc::dataset::LineScanState;
  using nereid::lc::dataset::ScanIsa;
  constexpr uint64_t kBytes = 256 * 1024;
  const std::string txt = ReadAll(Generate(dir + "/kernels.txt", "txt", kBytes).path);
  const std::string csv = ReadAll(Generate(dir + "/kernels.csv", "csv", kBytes).path);
  std::string indented = "  ";  // every line starts with whitespace: the vector path never holds
  for (const char c : txt) {
    indented += c;
    if (c == '\n') indented += "  ";
  }
  auto lines = [](ScanIsa isa) {
    return [isa](const uint8_t* p, size_t n) {
      LineScanState state;
      return nereid::lc::dataset::ScanLinesWith(isa, p, n, &state);
    };
  };
  auto records = [](ScanIsa isa) {
    return [isa](const uint8_t* p, size_t n) {
      CsvScanState state;
      return nereid::lc::dataset::ScanCsvWith(isa, p, n, &state);
    };
  };
  auto bytes = [](const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); };
  const uint64_t want_txt = lines(ScanIsa::kScalar)(bytes(txt), txt.size());
  const uint64_t want_indented = lines(ScanIsa::kScalar)(bytes(indented), indented.size());
  const uint64_t want_csv = records(ScanIsa::kScalar)(bytes(csv), csv.size());
  std::printf("kernels alone: 256 KiB in cache, GB/s of CPU time\n%-11s %10s %15s %11s\n",
              "kernel", "txt lines", "indented lines", "quoted csv");
  bool ok = true;
  for (const ScanIsa isa : nereid::lc::dataset::SupportedScanIsas()) {
    const std::optional<double> a = KernelRate(txt, want_txt, lines(isa));
    const std::optional<double> b = KernelRate(indented, want_indented, lines(isa));
    const std::optional<double> c = KernelRate(csv, want_csv, records(isa));
    const bool right = a.has_value() && b.has_value() && c.has_value();
    ok = ok && right;
    std::printf("%-11s %10.1f %15.1f %11.1f%s\n", nereid::lc::dataset::ScanIsaName(isa),
                a.value_or(0), b.value_or(0), c.value_or(0), right ? "" : "  WRONG COUNT");
  }
  return ok ? 0 : 1;
}

// Medians of repeated measurements of one command or function.
struct Series {
  std::vector<double> wall, cpu, user, sys, faults;
  void Add(double w, double c, double u, double s, double f = 0) {
    wall.push_back(w);
    cpu.push_back(c);
    user.push_back(u);
    sys.push_back(s);
    faults.push_back(f);
  }
  void Add(const Timed& t) { Add(t.wall, t.cpu, t.user, t.sys); }
  void Add(const nereid::bench::FloorTiming& t) { Add(t.wall, t.cpu, 0, 0); }
  double Wall() const { return Median(wall); }
  double Cpu() const { return Median(cpu); }
  double User() const { return Median(user); }
  double Sys() const { return Median(sys); }
  double Faults() const { return Median(faults); }
};

struct FormatResult {
  std::string format;
  uint64_t bytes = 0;
  double load_start = 0;
  double load_end = 0;
  Series wc, lc, lc1, lc2;          // the CLI: default threads, --scan-threads 1 and 2
  Series in_auto, in1, in2;         // SampleCounter in this process
  Series copy, touch, read_all;     // the floor (count_floor.h)
};

double LoadNow() {
  double load[3] = {0, 0, 0};
  getloadavg(load, 3);
  return load[0];
}

double SecondsOf(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
}

// One count in this process, timed like a child: wall, CPU, user, system and minor faults.
std::optional<std::pair<Timed, uint64_t>> CountInProcess(const std::string& path,
                                                         const std::string& format, int threads,
                                                         double* faults) {
  CounterOptions options;
  options.host_root = "/";
  options.read.scan_threads = threads;
  const SampleCounter counter(options);
  CountRequest request;
  request.url = path;
  request.format = format;
  rusage before = {};
  rusage after = {};
  getrusage(RUSAGE_SELF, &before);
  const double start = Now();
  absl::StatusOr<CountResult> result = counter.Count(request);
  Timed t;
  t.wall = Now() - start;
  getrusage(RUSAGE_SELF, &after);
  if (!result.ok()) return std::nullopt;
  t.user = SecondsOf(after.ru_utime) - SecondsOf(before.ru_utime);
  t.sys = SecondsOf(after.ru_stime) - SecondsOf(before.ru_stime);
  t.cpu = t.user + t.sys;
  *faults = static_cast<double>(after.ru_minflt - before.ru_minflt);
  return std::make_pair(t, result->count);
}

// Runs every command, in-process count and floor of one format alternately, checking counts.
std::optional<FormatResult> MeasureFormat(const Options& opt, const std::string& format,
                                          const Generated& g, bool* counts_ok) {
  FormatResult r;
  r.format = format;
  r.bytes = g.bytes;
  WarmCache(g.path);
  const std::vector<std::string> wc = {"wc", "-l", g.path};
  const std::vector<std::string> lc = {opt.localcontroller, "count", "--format", format,
                                       "--host-root", "/", g.path};
  std::vector<std::string> lc1 = lc;
  lc1.insert(lc1.begin() + 2, {"--scan-threads", "1"});
  std::vector<std::string> lc2 = lc;
  lc2.insert(lc2.begin() + 2, {"--scan-threads", "2"});
  auto check = [&](const char* what, uint64_t got, uint64_t want) {
    if (got == want) return;
    std::fprintf(stderr, "%s: wrong count from %s: %lu, expected %lu\n", format.c_str(), what,
                 static_cast<unsigned long>(got), static_cast<unsigned long>(want));
    *counts_ok = false;
  };
  r.load_start = LoadNow();
  for (int rep = -1; rep < opt.reps; ++rep) {  // rep -1: untimed warm-up of each
    const auto a = RunTimed(wc);
    const auto b = RunTimed(lc);
    const auto b1 = RunTimed(lc1);
    const auto b2 = RunTimed(lc2);
    double faults[3] = {0, 0, 0};
    const auto c0 = CountInProcess(g.path, format, 0, &faults[0]);
    const auto c1 = CountInProcess(g.path, format, 1, &faults[1]);
    const auto c2 = CountInProcess(g.path, format, 2, &faults[2]);
    const auto copy = nereid::bench::ReadCopyFloor(g.path);
    const auto touch = nereid::bench::MmapTouchFloor(g.path, g.bytes);
    const auto read_all = nereid::bench::MmapReadAllFloor(g.path, g.bytes);
    if (!a || !b || !b1 || !b2 || !c0 || !c1 || !c2 || !copy || !touch || !read_all) {
      std::fprintf(stderr, "%s: a command or count failed\n", format.c_str());
      return std::nullopt;
    }
    check("wc -l", FirstNumber(a->out), g.newlines);
    check("localcontroller count", FirstNumber(b->out), g.samples);
    check("localcontroller count --scan-threads 1", FirstNumber(b1->out), g.samples);
    check("localcontroller count --scan-threads 2", FirstNumber(b2->out), g.samples);
    check("in process", c0->second, g.samples);
    check("in process, 1 thread", c1->second, g.samples);
    check("in process, 2 threads", c2->second, g.samples);
    if (rep < 0) continue;
    r.wc.Add(*a);
    r.lc.Add(*b);
    r.lc1.Add(*b1);
    r.lc2.Add(*b2);
    r.in_auto.Add(c0->first.wall, c0->first.cpu, c0->first.user, c0->first.sys, faults[0]);
    r.in1.Add(c1->first.wall, c1->first.cpu, c1->first.user, c1->first.sys, faults[1]);
    r.in2.Add(c2->first.wall, c2->first.cpu, c2->first.user, c2->first.sys, faults[2]);
    r.copy.Add(*copy);
    r.touch.Add(*touch);
    r.read_all.Add(*read_all);
  }
  r.load_end = LoadNow();
  return r;
}

// Prints the three tables; false if a target was missed.
bool PrintResults(const std::vector<FormatResult>& results) {
  bool ok = true;
  auto ms = [](double s) { return s * 1e3; };
  std::printf("localcontroller count (process start included) vs wc -l, wall-clock medians:\n");
  std::printf("%-6s %5s %13s %8s %8s %6s %6s %8s %8s %7s %7s\n", "format", "MiB", "load", "wc ms",
              "lc ms", "ratio", "cpu", "1 thread", "2 thread", "target", "result");
  for (const FormatResult& r : results) {
    const double ratio = r.wc.Wall() / r.lc.Wall();
    const double target = r.format == "csv" ? 0.5 : 1.5;
    ok = ok && ratio >= target;
    std::printf("%-6s %5.0f %6.2f-%-6.2f %8.1f %8.1f %5.2fx %5.2fx %7.2fx %7.2fx %6.1fx %7s\n",
                r.format.c_str(), static_cast<double>(r.bytes) / (1 << 20), r.load_start,
                r.load_end, ms(r.wc.Wall()), ms(r.lc.Wall()), ratio, r.wc.Cpu() / r.lc.Cpu(),
                r.wc.Wall() / r.lc1.Wall(), r.wc.Wall() / r.lc2.Wall(), target,
                ratio >= target ? "ok" : "MISSED");
  }
  std::printf("\nthe floor of this machine, and the count in process against it (wall-clock ms;\n"
              "/touch and /read-all: the default count against those floors, cpu: in CPU time):\n");
  std::printf("%-6s %14s %7s %8s %7s %8s %8s %7s %9s %7s %7s %7s\n", "format", "read-copy GB/s",
              "touch", "read-all", "count", "1 thread", "2 thread", "/touch", "/read-all", "cpu",
              "target", "result");
  for (const FormatResult& r : results) {
    const double gb = static_cast<double>(r.bytes) / 1e9;
    const double vs_touch = r.in_auto.Wall() / r.touch.Wall();
    const bool line = r.format != "csv";
    const bool pass = !line || vs_touch <= 1.3;
    ok = ok && pass;
    std::printf("%-6s %7.1f (%4.1f) %7.1f %8.1f %7.1f %8.1f %8.1f %6.2fx %8.2fx %6.2fx %7s %7s\n",
                r.format.c_str(), ms(r.copy.Wall()), gb / r.copy.Wall(), ms(r.touch.Wall()),
                ms(r.read_all.Wall()), ms(r.in_auto.Wall()), ms(r.in1.Wall()), ms(r.in2.Wall()),
                vs_touch, r.in_auto.Wall() / r.read_all.Wall(), r.in_auto.Cpu() / r.read_all.Cpu(),
                line ? "1.3x" : "-", line ? (pass ? "ok" : "MISSED") : "-");
  }
  std::printf("\nwhere the time goes (CPU ms, medians; faults are minor page faults):\n");
  std::printf("%-6s %15s %15s %22s %22s %10s %10s\n", "format", "wc -l usr/sys",
              "lc usr/sys", "in process 1 thr u/s", "2 threads u/s faults", "touch cpu",
              "read-all");
  for (const FormatResult& r : results) {
    std::printf("%-6s %7.1f/%-7.1f %7.1f/%-7.1f %7.1f/%-6.1f %7.0f %7.1f/%-6.1f %7.0f %10.1f "
                "%10.1f\n",
                r.format.c_str(), ms(r.wc.User()), ms(r.wc.Sys()), ms(r.lc.User()),
                ms(r.lc.Sys()), ms(r.in1.User()), ms(r.in1.Sys()), r.in1.Faults(),
                ms(r.in2.User()), ms(r.in2.Sys()), r.in2.Faults(), ms(r.touch.Cpu()),
                ms(r.read_all.Cpu()));
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (int exit_code = 0; !ParseArgs(argc, argv, &opt, &exit_code)) return exit_code;
  if (!opt.strategies.empty()) {
    WarmCache(opt.strategies);
    return nereid::bench::RunStrategies(opt.strategies, opt.reps);
  }
  if (opt.dir.empty()) opt.dir = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp";
  TempDirGuard tmp;
  std::string pattern = opt.dir + "/nereid-count-bench-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    std::perror("mkdtemp");
    return 2;
  }
  tmp.path = pattern;
  if (opt.kernels) return RunKernels(tmp.path);

  utsname u;
  uname(&u);
  std::printf("count_bench: %s, %ld cpus, kernel %s, kernel of choice %s\n", CpuModel().c_str(),
              sysconf(_SC_NPROCESSORS_ONLN), u.release,
              nereid::lc::dataset::ScanIsaName(nereid::lc::dataset::BestScanIsa()));
  double load[3] = {0, 0, 0};
  getloadavg(load, 3);
  std::printf("files: %.0f MiB each, %d alternating runs each, median shown, page cache warm; "
              "load average at start %.2f\n\n",
              static_cast<double>(opt.size) / (1 << 20), opt.reps, load[0]);

  bool counts_ok = true;
  bool targets_ok = true;
  std::vector<FormatResult> results;
  Generated txt;
  for (const std::string format : {"txt", "jsonl", "csv"}) {
    const Generated g = Generate(tmp.path + "/data." + format, format, opt.size);
    if (format == "txt") txt = g;
    std::optional<FormatResult> r = MeasureFormat(opt, format, g, &counts_ok);
    if (!r.has_value()) return 1;
    results.push_back(std::move(*r));
  }
  targets_ok = PrintResults(results) && targets_ok;

  // Incremental: append 1 MiB to the txt file and recount from the checkpoint, vs a 1 MiB file.
  CounterOptions counter_options;
  counter_options.host_root = "/";
  SampleCounter counter(counter_options);
  auto count = [&](const std::string& path, const Checkpoint* previous) {
    CountRequest request;
    request.url = path;
    request.format = "txt";
    request.previous = previous;
    return counter.Count(request);
  };
  const uint64_t append_size = 1 << 20;
  const Generated small = Generate(tmp.path + "/small.txt", "txt", append_size);
  std::string appendix;
  {
    std::ifstream in(small.path, std::ios::binary);
    appendix.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  absl::StatusOr<CountResult> base = count(txt.path, nullptr);
  if (!base.ok() || base->count != txt.samples) {
    std::fprintf(stderr, "txt: full count failed or wrong\n");
    return 1;
  }
  Checkpoint checkpoint = base->checkpoint;
  uint64_t expected = txt.samples;
  std::vector<double> t_inc, t_small, t_inc_cli, t_small_cli;
  const std::string cp_file = tmp.path + "/checkpoint.json";
  const std::vector<std::string> cli_inc = {opt.localcontroller, "count",       "--format", "txt",
                                            "--host-root",        "/",           "--checkpoint",
                                            cp_file,              txt.path};
  const std::vector<std::string> cli_small = {opt.localcontroller, "count", "--format", "txt",
                                              "--host-root", "/", small.path};
  if (!RunTimed(cli_inc)) return 1;  // creates the CLI checkpoint (full count)
  for (int rep = -1; rep < opt.reps; ++rep) {
    {
      std::ofstream out(txt.path, std::ios::binary | std::ios::app);
      out << appendix;
    }
    expected += small.samples;
    const double t0 = Now();
    absl::StatusOr<CountResult> inc = count(txt.path, &checkpoint);
    const double t1 = Now();
    absl::StatusOr<CountResult> alone = count(small.path, nullptr);
    const double t2 = Now();
    auto cli_a = RunTimed(cli_inc);
    auto cli_b = RunTimed(cli_small);
    if (!inc.ok() || !alone.ok() || !cli_a || !cli_b || inc->count != expected ||
        !inc->incremental || alone->count != small.samples || FirstNumber(cli_a->out) != expected ||
        FirstNumber(cli_b->out) != small.samples) {
      std::fprintf(stderr, "incremental: wrong count or not incremental\n");
      counts_ok = false;
      break;
    }
    checkpoint = inc->checkpoint;
    if (rep < 0) continue;
    t_inc.push_back(t1 - t0);
    t_small.push_back(t2 - t1);
    t_inc_cli.push_back(cli_a->wall);
    t_small_cli.push_back(cli_b->wall);
  }
  if (!t_inc.empty()) {
    const double ratio = Median(t_inc) / Median(t_small);
    const double cli_ratio = Median(t_inc_cli) / Median(t_small_cli);
    targets_ok = targets_ok && ratio <= 2.0;
    std::printf("\nappend 1 MiB to the %.0f MiB txt file and recount from the checkpoint:\n",
                static_cast<double>(txt.bytes) / (1 << 20));
    std::printf("  in process: incremental %.0f us, 1 MiB file alone %.0f us, ratio %.2fx "
                "(target <= 2x) %s\n",
                Median(t_inc) * 1e6, Median(t_small) * 1e6, ratio, ratio <= 2.0 ? "ok" : "MISSED");
    std::printf("  CLI (--checkpoint, includes process start): %.0f us vs %.0f us, ratio %.2fx\n",
                Median(t_inc_cli) * 1e6, Median(t_small_cli) * 1e6, cli_ratio);
  }
  if (!counts_ok) {
    std::printf("\nFAILED: a count was wrong\n");
    return 1;
  }
  if (opt.enforce && !targets_ok) {
    std::printf("\nFAILED: a target was missed\n");
    return 1;
  }
  getloadavg(load, 3);
  std::printf("\ncounts verified%s; load average at end %.2f\n",
              targets_ok ? "; all targets met" : "; some targets missed", load[0]);
  return 0;
}
