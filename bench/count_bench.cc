// Dataset counting benchmark: `localcontroller count` against `wc -l` on the same files, side by
// side in one run, from the page cache; plus the incremental recount of a grown file.
//
//   count_bench --localcontroller PATH [--size BYTES] [--reps N] [--dir DIR] [--enforce]
//
// For each format (txt, jsonl, quoted csv) it writes a file of --size bytes (default 1 GiB) in a
// fresh temporary directory under --dir (default $TMPDIR or /tmp), reads it once to warm the page
// cache, then runs `wc -l FILE`, `localcontroller count` and `localcontroller count --no-mmap`
// alternately --reps times (default 7), checks every count against what the generator wrote, and
// prints the median wall-clock throughput and the ratio to wc -l (the target), plus the ratio of
// median CPU time (user + system), which is steadier on a machine shared with other work. Then it appends 1 MiB to the txt file and
// recounts from the checkpoint, against counting a 1 MiB file alone (in process, so process start-up
// does not hide the difference; the CLI with --checkpoint is shown too). The directory is removed at
// the end. Exit status: 1 if a count is wrong; with --enforce also if a target is missed.
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
};

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Timed {
  double wall = 0;  // seconds
  double cpu = 0;   // user + system seconds of the child
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
  t.cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
          static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
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

bool ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string v;
    if (a == "--localcontroller" && value(&o->localcontroller)) continue;
    if (a == "--dir" && value(&o->dir)) continue;
    if (a == "--size" && value(&v)) {
      o->size = std::strtoull(v.c_str(), nullptr, 10);
      continue;
    }
    if (a == "--reps" && value(&v)) {
      o->reps = std::max(1, std::atoi(v.c_str()));
      continue;
    }
    if (a == "--enforce") {
      o->enforce = true;
      continue;
    }
    if (a == "--kernels") {
      o->kernels = true;
      continue;
    }
    std::cerr << "unknown or incomplete argument " << a << "\n";
    return false;
  }
  if (o->localcontroller.empty() && !o->kernels) {
    std::cerr << "usage: count_bench --localcontroller PATH [--size BYTES] [--reps N] [--dir DIR] "
                 "[--enforce]\n       count_bench --kernels [--dir DIR]\n";
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

double CpuNow() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
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
  const double start = CpuNow();
  double elapsed = 0;
  do {
    for (int i = 0; i < 16; ++i, ++passes) {
      if (scan(data, text.size()) != want) return std::nullopt;
    }
    elapsed = CpuNow() - start;
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

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!ParseArgs(argc, argv, &opt)) return 2;
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
  std::printf("%-6s %6s %11s %14s %8s %18s %10s %7s %7s\n", "format", "MiB", "wc -l MB/s",
              "lc count MB/s", "ratio", "lc --no-mmap MB/s", "cpu ratio", "target", "result");
  Generated txt;
  for (const std::string format : {"txt", "jsonl", "csv"}) {
    const Generated g = Generate(tmp.path + "/data." + format, format, opt.size);
    if (format == "txt") txt = g;
    WarmCache(g.path);
    const std::vector<std::string> wc = {"wc", "-l", g.path};
    const std::vector<std::string> lc = {opt.localcontroller, "count", "--format", format,
                                         "--host-root", "/", g.path};
    std::vector<std::string> lc_read = lc;
    lc_read.insert(lc_read.begin() + 2, "--no-mmap");
    std::vector<double> t_wc, t_lc, t_read, c_wc, c_lc;
    for (int rep = -1; rep < opt.reps; ++rep) {  // rep -1: untimed warm-up of each command
      auto a = RunTimed(wc);
      auto b = RunTimed(lc);
      auto c = RunTimed(lc_read);
      if (!a || !b || !c) {
        std::fprintf(stderr, "%s: a command failed\n", format.c_str());
        return 1;
      }
      if (FirstNumber(a->out) != g.newlines || FirstNumber(b->out) != g.samples ||
          FirstNumber(c->out) != g.samples) {
        std::fprintf(stderr, "%s: wrong count: wc %s lc %s lc --no-mmap %s; expected %lu / %lu\n",
                     format.c_str(), a->out.c_str(), b->out.c_str(), c->out.c_str(),
                     static_cast<unsigned long>(g.newlines),
                     static_cast<unsigned long>(g.samples));
        counts_ok = false;
      }
      if (rep < 0) continue;
      t_wc.push_back(a->wall);
      t_lc.push_back(b->wall);
      t_read.push_back(c->wall);
      c_wc.push_back(a->cpu);
      c_lc.push_back(b->cpu);
    }
    const double mb = static_cast<double>(g.bytes) / 1e6;
    const double wc_mbs = mb / Median(t_wc);
    const double lc_mbs = mb / Median(t_lc);
    const double read_mbs = mb / Median(t_read);
    const double ratio = lc_mbs / wc_mbs;
    const double target = format == "csv" ? 0.5 : 1.5;
    const bool pass = ratio >= target;
    targets_ok = targets_ok && pass;
    const double cpu_ratio = Median(c_wc) / Median(c_lc);
    std::printf("%-6s %6.0f %11.0f %14.0f %7.2fx %18.0f %9.2fx %6.1fx %7s\n", format.c_str(),
                static_cast<double>(g.bytes) / (1 << 20), wc_mbs, lc_mbs, ratio, read_mbs,
                cpu_ratio, target, pass ? "ok" : "MISSED");
  }

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
