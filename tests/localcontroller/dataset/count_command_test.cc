#include "localcontroller/dataset/count_command.h"

#include <catch2/catch.hpp>

#include <sstream>

#include "nlohmann/json.hpp"
#include "tests/localcontroller/dataset/temp_dir.h"

namespace nereid::lc::dataset {
namespace {

struct Run {
  int code;
  std::string out;
  std::string err;
};

Run Count(const std::vector<std::string>& args) {
  std::ostringstream out;
  std::ostringstream err;
  const int code = RunCountCommand(args, out, err);
  return {code, out.str(), err.str()};
}

TEST_CASE("count prints the count or the error", "[cli]") {
  testing::TempDir root;
  root.Write("data/a.csv", "h\n1\n\"2\n2\"\n");
  Run ok = Count({"--format", "csv", "--host-root", root.path(), "/data/a.csv"});
  CHECK(ok.code == 0);
  CHECK(ok.out == "2\n");
  CHECK(ok.err.empty());

  Run eq = Count({"--format=CSV", "--host-root=" + root.path(), "/data/a.csv"});
  CHECK(eq.code == 0);
  CHECK(eq.out == "2\n");

  root.Write("data/a.txt", "a\n\n b\nc");
  for (const std::string threads : {"auto", "1", "2"}) {
    Run txt = Count({"--format", "txt", "--scan-threads", threads, "--host-root", root.path(),
                     "/data/a.txt"});
    CHECK(txt.code == 0);
    CHECK(txt.out == "3\n");
  }

  Run missing = Count({"--format", "csv", "--host-root", root.path(), "/data/b.csv"});
  CHECK(missing.code == 1);
  CHECK(missing.out.empty());
  CHECK(missing.err.rfind("error: PathNotFound: ", 0) == 0);

  Run escape = Count({"--format", "csv", "--host-root", root.path(), "/../etc/passwd"});
  CHECK(escape.code == 1);
  CHECK(escape.err.rfind("error: PathEscapesHostRoot: ", 0) == 0);

  Run json_error =
      Count({"--json", "--format", "parquet", "--host-root", root.path(), "/data/a.csv"});
  CHECK(json_error.code == 1);
  nlohmann::json j = nlohmann::json::parse(json_error.out);
  CHECK(j["error"]["reason"] == "UnknownFormat");
}

TEST_CASE("count with a checkpoint file counts incrementally", "[cli]") {
  testing::TempDir root;
  root.Write("d.txt", std::string(10000, 'x') + "\n");
  const std::string cp = root.Path("cp.json");
  const std::vector<std::string> args = {"--json", "--format", "txt", "--host-root", root.path(),
                                         "--checkpoint", cp, "/d.txt"};
  Run first = Count(args);
  REQUIRE(first.code == 0);
  nlohmann::json a = nlohmann::json::parse(first.out);
  CHECK(a["count"] == 1);
  CHECK(a["incremental"] == false);
  CHECK(a["bytesRead"] == 10001);
  root.Append("d.txt", "y\n");
  Run second = Count(args);
  REQUIRE(second.code == 0);
  nlohmann::json b = nlohmann::json::parse(second.out);
  CHECK(b["count"] == 2);
  CHECK(b["incremental"] == true);
  CHECK(b["bytesRead"] == 2 + 4096);
  CHECK(b["source"] == "/d.txt");

  root.Write("cp.json", "garbage");  // a bad checkpoint: warned about, then a full count
  Run third = Count(args);
  REQUIRE(third.code == 0);
  CHECK(third.err.find("warning: ignoring checkpoint") != std::string::npos);
  CHECK(nlohmann::json::parse(third.out)["incremental"] == false);
}

TEST_CASE("count usage errors exit 2", "[cli]") {
  CHECK(Count({}).code == 2);
  CHECK(Count({"/x"}).code == 2);                              // no --format
  CHECK(Count({"--format", "txt"}).code == 2);                  // no url
  CHECK(Count({"--format", "txt", "/a", "/b"}).code == 2);      // two urls
  CHECK(Count({"--format"}).code == 2);                         // missing value
  CHECK(Count({"--format", "txt", "--bogus", "1", "/a"}).code == 2);
  CHECK(Count({"--format", "txt", "--json=1", "/a"}).code == 2);
  CHECK(Count({"--format", "txt", "--timeout", "-1", "/a"}).code == 2);
  CHECK(Count({"--format", "txt", "--scan-threads", "3", "/a"}).code == 2);
  Run r = Count({"--format", "txt"});
  CHECK(r.err.find("usage: localcontroller count") != std::string::npos);
}

}  // namespace
}  // namespace nereid::lc::dataset
