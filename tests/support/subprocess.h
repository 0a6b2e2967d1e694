#pragma once

// Helpers for integration tests that run real processes (nereid_test_support):
//   Subprocess  starts a program with arguments and extra environment, collects its stdout (and
//               optionally stderr) on background threads, reads lines or waits for output with a
//               deadline, and stops it with SIGTERM then SIGKILL. The destructor stops it too.
//   RunCommand  runs a command (kubectl, ...) to completion with a timeout and returns its exit
//               code, stdout and stderr.
//   WaitFor     polls a predicate until it holds or a deadline passes (no sleep-and-hope).
//
//   Subprocess::Options options;
//   options.argv = {bin, "--listen", "127.0.0.1:0"};
//   auto server = Subprocess::Start(std::move(options));
//   ASSIGN_OR_RETURN(std::string line, (*server)->ReadLine(absl::Seconds(10)));
//   std::string url = ListenUrl(line);  // "listening on http://127.0.0.1:41233" → the URL

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace nereid::testing {

class Subprocess {
 public:
  struct Options {
    std::vector<std::string> argv;             // argv[0] is looked up in PATH if it has no '/'
    std::map<std::string, std::string> env;    // added to (or replacing in) the inherited environment
    std::string working_dir;                   // empty: inherit
    bool capture_stderr = false;               // false: stderr goes to ours (visible in test logs)
    std::string stdin_data;                    // written to the child's stdin, then closed
  };

  // Also sets SIGPIPE to ignored in this process (writes to a child that exited must not kill
  // the test).
  static absl::StatusOr<std::unique_ptr<Subprocess>> Start(Options options);
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }

  // The next complete stdout line (without '\n'). DeadlineExceeded on timeout; NotFound once the
  // output ended without another line.
  absl::StatusOr<std::string> ReadLine(absl::Duration timeout);
  // Waits until everything printed so far on stdout satisfies `predicate`.
  bool WaitForStdout(const std::function<bool(const std::string&)>& predicate, absl::Duration timeout);
  bool WaitForStdoutContaining(std::string_view needle, absl::Duration timeout);
  std::string Stdout() const;
  std::string Stderr() const;

  // Waits for the process to exit on its own. Returns its exit code (128+N when killed by
  // signal N), DeadlineExceeded if it is still running.
  absl::StatusOr<int> Wait(absl::Duration timeout);
  // SIGTERM, then SIGKILL after `grace`; returns the exit code as Wait does.
  absl::StatusOr<int> Stop(absl::Duration grace = absl::Seconds(5));
  bool Running();

 private:
  Subprocess() = default;
  void ReadLoop(int fd, bool is_stdout);
  // With mu_ held: reaps the child if it exited.
  bool ReapLocked(bool block) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void JoinReaders();

  pid_t pid_ = -1;
  std::thread stdout_reader_;
  std::thread stderr_reader_;
  std::thread stdin_writer_;

  mutable absl::Mutex mu_;
  std::string stdout_ ABSL_GUARDED_BY(mu_);
  std::string stderr_ ABSL_GUARDED_BY(mu_);
  size_t line_pos_ ABSL_GUARDED_BY(mu_) = 0;  // how far ReadLine has consumed stdout_
  int open_streams_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<int> exit_code_ ABSL_GUARDED_BY(mu_);
};

struct CommandResult {
  int exit_code = -1;
  bool timed_out = false;
  std::string out;
  std::string err;
};

// Runs argv to completion; on timeout the process is killed and timed_out is set.
absl::StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                         absl::Duration timeout,
                                         const std::map<std::string, std::string>& env = {},
                                         std::string_view stdin_data = "");

// fakes::Eventually (tests/fakes/eventually.h) with the deadline required and a poll interval
// suited to conditions that ask a child process: true once `predicate` holds, false after
// `timeout`.
bool WaitFor(const std::function<bool()>& predicate, absl::Duration timeout,
             absl::Duration poll = absl::Milliseconds(20));

// "listening on http://127.0.0.1:41233" → "http://127.0.0.1:41233"; "" if the line is not that.
std::string ListenUrl(std::string_view line);

// A fresh directory under $TMPDIR (or /tmp), removed by the destructor.
class TempDir {
 public:
  static absl::StatusOr<TempDir> Create(std::string_view prefix);
  TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  TempDir& operator=(TempDir&&) = delete;
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string File(std::string_view name) const;
  // Writes `content` to File(name) and returns its path.
  absl::StatusOr<std::string> Write(std::string_view name, std::string_view content) const;

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace nereid::testing
