#include "tests/support/subprocess.h"

#include <catch2/catch.hpp>

#include <fstream>

namespace nereid::testing {
namespace {

TEST_CASE("RunCommand captures exit code, stdout, stderr, stdin and environment") {
  auto r = RunCommand({"sh", "-c", "read x; echo \"out:$x:$GREETING\"; echo err >&2; exit 3"},
                      absl::Seconds(10), {{"GREETING", "hi"}}, "typed\n");
  REQUIRE(r.ok());
  CHECK(r->exit_code == 3);
  CHECK_FALSE(r->timed_out);
  CHECK(r->out == "out:typed:hi\n");
  CHECK(r->err == "err\n");
  auto missing = RunCommand({"/nonexistent/program"}, absl::Seconds(10));
  REQUIRE(missing.ok());
  CHECK(missing->exit_code == 127);
}

TEST_CASE("RunCommand kills a command that outlives its timeout") {
  absl::Time start = absl::Now();
  auto r = RunCommand({"sleep", "30"}, absl::Milliseconds(200));
  REQUIRE(r.ok());
  CHECK(r->timed_out);
  CHECK(r->exit_code == 128 + 15);  // SIGTERM
  CHECK(absl::Now() - start < absl::Seconds(10));
}

TEST_CASE("Subprocess: read lines, wait for output, stop with SIGTERM then SIGKILL") {
  Subprocess::Options o;
  o.argv = {"sh", "-c", "echo 'listening on http://127.0.0.1:1234'; echo second; trap '' TERM; "
                        "while true; do echo tick; sleep 0.05; done"};
  auto p = Subprocess::Start(std::move(o));
  REQUIRE(p.ok());
  auto first = (*p)->ReadLine(absl::Seconds(10));
  REQUIRE(first.ok());
  CHECK(ListenUrl(*first) == "http://127.0.0.1:1234");
  CHECK(*(*p)->ReadLine(absl::Seconds(10)) == "second");
  CHECK((*p)->WaitForStdoutContaining("tick", absl::Seconds(10)));
  CHECK((*p)->Running());
  // The child ignores SIGTERM, so Stop escalates after the grace period.
  auto code = (*p)->Stop(absl::Milliseconds(200));
  REQUIRE(code.ok());
  CHECK(*code == 128 + 9);
  CHECK_FALSE((*p)->Running());
}

TEST_CASE("Subprocess: ReadLine reports the end of output; WaitFor polls with a deadline") {
  Subprocess::Options o;
  o.argv = {"sh", "-c", "printf 'only\\n'"};
  auto p = Subprocess::Start(std::move(o));
  REQUIRE(p.ok());
  CHECK(*(*p)->ReadLine(absl::Seconds(10)) == "only");
  CHECK(absl::IsNotFound((*p)->ReadLine(absl::Seconds(10)).status()));
  CHECK(*(*p)->Wait(absl::Seconds(10)) == 0);
  int calls = 0;
  CHECK(WaitFor([&] { return ++calls == 3; }, absl::Seconds(10), absl::Milliseconds(1)));
  CHECK_FALSE(WaitFor([] { return false; }, absl::Milliseconds(30), absl::Milliseconds(5)));
  CHECK(ListenUrl("something else").empty());
}

TEST_CASE("TempDir writes files and cleans up") {
  std::string path;
  {
    auto dir = TempDir::Create("support-test-");
    REQUIRE(dir.ok());
    path = dir->path();
    auto file = dir->Write("a.txt", "hello");
    REQUIRE(file.ok());
    std::ifstream in(*file);
    std::string text;
    in >> text;
    CHECK(text == "hello");
  }
  CHECK_FALSE(std::ifstream(path + "/a.txt").good());
}

}  // namespace
}  // namespace nereid::testing
