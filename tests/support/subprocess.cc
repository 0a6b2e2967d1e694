#include "tests/support/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "tests/fakes/eventually.h"

extern char** environ;

namespace nereid::testing {
namespace {

absl::Status Errno(std::string_view what) {
  return absl::InternalError(absl::StrCat(std::string(what), ": ", std::strerror(errno)));
}

int DecodeWaitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Subprocess>> Subprocess::Start(Options options) {
  if (options.argv.empty()) return absl::InvalidArgumentError("Subprocess: empty argv");
  // A child that exits before reading its stdin must not kill the test with SIGPIPE.
  signal(SIGPIPE, SIG_IGN);
  // Pipes are created close-on-exec so concurrently started children do not inherit each
  // other's ends (which would keep a reader from ever seeing EOF).
  int out[2], err[2], in[2];
  if (pipe2(out, O_CLOEXEC) != 0) return Errno("pipe");
  if (pipe2(err, O_CLOEXEC) != 0) return Errno("pipe");
  if (pipe2(in, O_CLOEXEC) != 0) return Errno("pipe");
  std::map<std::string, std::string> env_map;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv(*e);
    size_t eq = kv.find('=');
    if (eq != std::string::npos) env_map[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : options.env) env_map[k] = v;
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env_map) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<char*> argv;
  for (std::string& a : options.argv) argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_t pid = fork();
  if (pid < 0) return Errno("fork");
  if (pid == 0) {
    // Child: only async-signal-safe calls from here on.
    dup2(in[0], 0);
    dup2(out[1], 1);
    if (options.capture_stderr) dup2(err[1], 2);
    if (!options.working_dir.empty() && chdir(options.working_dir.c_str()) != 0) _exit(127);
    signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execvpe(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  std::unique_ptr<Subprocess> p(new Subprocess());
  p->pid_ = pid;
  {
    absl::MutexLock lock(&p->mu_);
    p->open_streams_ = 2;
  }
  Subprocess* raw = p.get();
  p->stdout_reader_ = std::thread([raw, fd = out[0]] { raw->ReadLoop(fd, true); });
  p->stderr_reader_ = std::thread([raw, fd = err[0]] { raw->ReadLoop(fd, false); });
  p->stdin_writer_ = std::thread([fd = in[1], data = std::move(options.stdin_data)] {
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = write(fd, data.data() + done, data.size() - done);
      if (n <= 0) break;  // the child closed stdin (EPIPE is ignored by the test binary)
      done += static_cast<size_t>(n);
    }
    close(fd);
  });
  return p;
}

void Subprocess::ReadLoop(int fd, bool is_stdout) {
  char buf[4096];
  while (true) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    absl::MutexLock lock(&mu_);
    (is_stdout ? stdout_ : stderr_).append(buf, static_cast<size_t>(n));
  }
  close(fd);
  absl::MutexLock lock(&mu_);
  --open_streams_;
}

Subprocess::~Subprocess() {
  if (pid_ > 0) (void)Stop(absl::Seconds(5));
  JoinReaders();
}

void Subprocess::JoinReaders() {
  // Readers end at EOF, which comes when the child (and anything it forked that kept the pipe)
  // has exited.
  if (stdout_reader_.joinable()) stdout_reader_.join();
  if (stderr_reader_.joinable()) stderr_reader_.join();
  if (stdin_writer_.joinable()) stdin_writer_.join();
}

absl::StatusOr<std::string> Subprocess::ReadLine(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stdout_.find('\n', line_pos_) != std::string::npos || open_streams_ == 0;
  };
  mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
  size_t nl = stdout_.find('\n', line_pos_);
  if (nl == std::string::npos) {
    if (open_streams_ == 0) return absl::NotFoundError("output ended without another line");
    return absl::DeadlineExceededError("no complete stdout line in time");
  }
  std::string line = stdout_.substr(line_pos_, nl - line_pos_);
  line_pos_ = nl + 1;
  return line;
}

bool Subprocess::WaitForStdout(const std::function<bool(const std::string&)>& predicate,
                               absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return predicate(stdout_); };
  return mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
}

bool Subprocess::WaitForStdoutContaining(std::string_view needle, absl::Duration timeout) {
  return WaitForStdout([&](const std::string& out) { return out.find(needle) != std::string::npos; },
                       timeout);
}

std::string Subprocess::Stdout() const {
  absl::MutexLock lock(&mu_);
  return stdout_;
}

std::string Subprocess::Stderr() const {
  absl::MutexLock lock(&mu_);
  return stderr_;
}

bool Subprocess::ReapLocked(bool block) {
  if (exit_code_) return true;
  if (pid_ <= 0) return true;
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, block ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) {
    exit_code_ = DecodeWaitStatus(status);
    return true;
  }
  return false;
}

bool Subprocess::Running() {
  absl::MutexLock lock(&mu_);
  return !ReapLocked(false);
}

absl::StatusOr<int> Subprocess::Wait(absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (ReapLocked(false)) {
        int code = *exit_code_;
        // Collect the remaining output before reporting.
        auto drained = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return open_streams_ == 0; };
        mu_.AwaitWithTimeout(absl::Condition(&drained), absl::Seconds(5));
        return code;
      }
    }
    if (absl::Now() >= deadline) return absl::DeadlineExceededError("process still running");
    absl::SleepFor(absl::Milliseconds(5));
  }
}

absl::StatusOr<int> Subprocess::Stop(absl::Duration grace) {
  {
    absl::MutexLock lock(&mu_);
    if (!ReapLocked(false)) kill(pid_, SIGTERM);
  }
  absl::StatusOr<int> code = Wait(grace);
  if (code.ok()) return code;
  {
    absl::MutexLock lock(&mu_);
    if (!ReapLocked(false)) {
      kill(pid_, SIGKILL);
      ReapLocked(true);
    }
  }
  return Wait(absl::Seconds(5));
}

absl::StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                         absl::Duration timeout,
                                         const std::map<std::string, std::string>& env,
                                         std::string_view stdin_data) {
  Subprocess::Options o;
  o.argv = argv;
  o.env = env;
  o.capture_stderr = true;
  o.stdin_data = std::string(stdin_data);
  auto p = Subprocess::Start(std::move(o));
  if (!p.ok()) return p.status();
  CommandResult result;
  absl::StatusOr<int> code = (*p)->Wait(timeout);
  if (!code.ok()) {
    result.timed_out = true;
    code = (*p)->Stop(absl::Seconds(2));
  }
  result.exit_code = code.ok() ? *code : -1;
  result.out = (*p)->Stdout();
  result.err = (*p)->Stderr();
  return result;
}

bool WaitFor(const std::function<bool()>& predicate, absl::Duration timeout, absl::Duration poll) {
  return fakes::Eventually(predicate, timeout, poll);
}

std::string ListenUrl(std::string_view line) {
  constexpr std::string_view kPrefix = "listening on ";
  if (line.substr(0, kPrefix.size()) != kPrefix) return "";
  std::string url(line.substr(kPrefix.size()));
  while (!url.empty() && (url.back() == '\r' || url.back() == ' ')) url.pop_back();
  return url;
}

absl::StatusOr<TempDir> TempDir::Create(std::string_view prefix) {
  const char* base = getenv("TMPDIR");
  std::string tmpl = absl::StrCat(base != nullptr && *base ? base : "/tmp", "/", std::string(prefix),
                                  "XXXXXX");
  if (mkdtemp(tmpl.data()) == nullptr) return Errno("mkdtemp");
  return TempDir(tmpl);
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string TempDir::File(std::string_view name) const { return absl::StrCat(path_, "/", std::string(name)); }

absl::StatusOr<std::string> TempDir::Write(std::string_view name, std::string_view content) const {
  std::string path = File(name);
  std::ofstream out(path, std::ios::trunc | std::ios::binary);
  out << content;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return path;
}

}  // namespace nereid::testing
