#include "localcontroller/dataset/sample_counter.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "localcontroller/dataset/errors.h"
#include "tests/localcontroller/dataset/temp_dir.h"

namespace nereid::lc::dataset {
namespace {

using testing::TempDir;

class Fixture {
 public:
  explicit Fixture(bool use_mmap = true) : Fixture(MappedAlways(use_mmap)) {}
  explicit Fixture(const ReadOptions& read, std::vector<std::string> data_roots = {}) {
    CounterOptions options;
    options.host_root = root.path();
    options.data_roots = DataRoots(data_roots);
    options.read = read;
    counter = std::make_unique<SampleCounter>(options);
  }
  static ReadOptions MappedAlways(bool use_mmap) {
    ReadOptions read;
    read.use_mmap = use_mmap;
    read.mmap_min_bytes = 1;  // exercise the mapped path even for tiny files
    return read;
  }
  absl::StatusOr<CountResult> Count(const std::string& url, const std::string& format,
                                    const Checkpoint* previous = nullptr) {
    CountRequest request;
    request.url = url;
    request.format = format;
    request.previous = previous;
    return counter->Count(request);
  }
  uint64_t CountOk(const std::string& url, const std::string& format) {
    absl::StatusOr<CountResult> result = Count(url, format);
    INFO(url << " " << format << ": " << result.status().ToString());
    REQUIRE(result.ok());
    return result->count;
  }
  std::string Reason(const std::string& url, const std::string& format) {
    absl::StatusOr<CountResult> result = Count(url, format);
    if (result.ok()) return "OK";
    INFO(result.status().ToString());
    CHECK_FALSE(result.status().message().empty());
    return ReasonOf(result.status());
  }

  TempDir root;
  std::unique_ptr<SampleCounter> counter;
};

TEST_CASE("txt and jsonl count non-empty lines", "[counter]") {
  for (bool mmap : {true, false}) {
    Fixture f(mmap);
    f.root.Write("data/a.txt", "one\ntwo\n\n   \nthree");  // blank, whitespace-only, no trailing \n
    f.root.Write("data/crlf.txt", "one\r\ntwo\r\n\r\n \r\nthree\r\n");
    f.root.Write("data/empty.txt", "");
    f.root.Write("data/long.txt", std::string(100000, 'x') + "\n" + std::string(70000, 'y') + "\n");
    f.root.Write("data/bom.txt", "\xEF\xBB\xBF\nline\n");
    f.root.Write("data/a.jsonl", "{\"a\": 1}\n{\"a\": 2}\n\n{\"a\": 3}\n");
    CHECK(f.CountOk("/data/a.txt", "txt") == 3);
    CHECK(f.CountOk("/data/crlf.txt", "txt") == 3);
    CHECK(f.CountOk("/data/empty.txt", "txt") == 0);
    CHECK(f.CountOk("/data/long.txt", "TXT") == 2);
    CHECK(f.CountOk("/data/bom.txt", "txt") == 1);
    CHECK(f.CountOk("/data/a.jsonl", "JsonL") == 3);
    CHECK(f.CountOk("data/a.txt", "txt") == 3);           // relative to the host root
    CHECK(f.CountOk("file:///data/a.txt", "txt") == 3);   // file:// url
  }
}

TEST_CASE("csv counts records after the header with RFC 4180 quoting", "[counter]") {
  Fixture f;
  f.root.Write("d/plain.csv", "id,text\n1,a\n2,b\n");
  f.root.Write("d/quoted.csv",
               "id,text\r\n1,\"multi\r\nline\"\r\n2,\"say \"\"hi\"\"\nand \"\"bye\"\"\"\r\n3,x");
  f.root.Write("d/header_only.csv", "id,text\n");
  f.root.Write("d/header_no_newline.csv", "id,text");
  f.root.Write("d/empty.csv", "");
  f.root.Write("d/blank_lines.csv", "id\n\n1\n   \n2\n\n");
  f.root.Write("d/open_quote.csv", "id,text\n1,\"never closed\n2,x\n");
  CHECK(f.CountOk("/d/plain.csv", "csv") == 2);
  CHECK(f.CountOk("/d/quoted.csv", "CSV") == 3);
  CHECK(f.CountOk("/d/header_only.csv", "csv") == 0);
  CHECK(f.CountOk("/d/header_no_newline.csv", "csv") == 0);
  CHECK(f.CountOk("/d/empty.csv", "csv") == 0);
  CHECK(f.CountOk("/d/blank_lines.csv", "csv") == 2);
  CHECK(f.Reason("/d/open_quote.csv", "csv") == "Malformed");
}

TEST_CASE("coco counts top-level images from a file", "[counter]") {
  Fixture f;
  f.root.Write("ann/instances.json",
               "\xEF\xBB\xBF{\"info\": {\"images\": [1, 2]}, \"images\": [{\"id\": 1, \"file_name\": "
               "\"a[1].jpg\"}, {\"id\": 2}], \"annotations\": []}");
  f.root.Write("ann/broken.json", "{\"images\": [{\"id\": 1}");
  CHECK(f.CountOk("/ann/instances.json", "coco") == 2);
  CHECK(f.Reason("/ann/broken.json", "coco") == "Malformed");
}

TEST_CASE("dir and voc count files below a directory", "[counter]") {
  Fixture f;
  f.root.Write("imgs/a.jpg", "x");
  f.root.Write("imgs/b.jpg", "x");
  f.root.Write("imgs/.hidden", "x");
  f.root.Write("imgs/sub/c.jpg", "x");
  f.root.Write("imgs/sub/deeper/d.jpg", "x");
  f.root.Mkdir("imgs/empty_sub");
  f.root.Write("outside/e.jpg", "x");
  f.root.Symlink("../outside/e.jpg", "imgs/link_to_file.jpg");   // inside the root: counts
  f.root.Symlink("/outside", "imgs/link_to_dir");                // directories are not followed
  f.root.Symlink("../../../../../../etc/passwd", "imgs/escape.jpg");  // escapes: not counted
  f.root.Symlink("missing.jpg", "imgs/dangling.jpg");
  CHECK(f.CountOk("/imgs", "dir") == 6);

  f.root.Write("voc/Annotations/1.xml", "<a/>");
  f.root.Write("voc/Annotations/2.XML", "<a/>");
  f.root.Write("voc/Annotations/sub/3.xml", "<a/>");
  f.root.Write("voc/JPEGImages/1.jpg", "x");
  f.root.Write("voc/readme.txt", "x");
  CHECK(f.CountOk("/voc", "voc") == 3);
  CHECK(f.CountOk("/voc/", "xml") == 3);
  f.root.Mkdir("nothing");
  CHECK(f.CountOk("/nothing", "dir") == 0);
}

TEST_CASE("errors carry a reason and a message", "[counter]") {
  Fixture f;
  f.root.Write("data/a.txt", "x\n");
  f.root.Mkdir("data/dir");
  CHECK(f.Reason("/data/a.txt", "parquet") == "UnknownFormat");
  CHECK(f.Reason("/data/missing.txt", "txt") == "PathNotFound");
  CHECK(f.Reason("/nope/a.txt", "txt") == "PathNotFound");
  CHECK(f.Reason("/data/dir", "txt") == "NotAFile");
  CHECK(f.Reason("/data/a.txt", "dir") == "NotADirectory");
  CHECK(f.Reason("/data/a.txt/more", "txt") == "NotADirectory");
  CHECK(f.Reason("s3://bucket/a.txt", "txt") == "Unsupported");
  CHECK(f.Reason("ftp://host/a.txt", "txt") == "Unsupported");
  CHECK(f.Reason("http://127.0.0.1:1/x", "dir") == "Unsupported");
  CHECK(f.Reason("", "txt") == "InvalidURL");

  SECTION("a missing host root is reported, not treated as empty") {
    CounterOptions options;
    options.host_root = f.root.Path("no-such-root");
    SampleCounter counter(options);
    CountRequest request;
    request.url = "/data/a.txt";
    request.format = "txt";
    absl::StatusOr<CountResult> result = counter.Count(request);
    REQUIRE_FALSE(result.ok());
    CHECK(ReasonOf(result.status()) == "PathNotFound");
  }
}

// Root bypasses file permissions through CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH. Capabilities are
// per thread, so the test drops those two from this thread's effective set while it runs.
class DropDacCapabilities {
 public:
  DropDacCapabilities() {
    header_.version = _LINUX_CAPABILITY_VERSION_3;
    header_.pid = 0;
    if (syscall(SYS_capget, &header_, saved_) != 0) return;
    __user_cap_data_struct reduced[2] = {saved_[0], saved_[1]};
    reduced[0].effective &= ~((1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH));
    active_ = syscall(SYS_capset, &header_, reduced) == 0;
  }
  ~DropDacCapabilities() {
    if (active_) syscall(SYS_capset, &header_, saved_);
  }
  bool active() const { return active_; }

 private:
  __user_cap_header_struct header_ = {};
  __user_cap_data_struct saved_[2] = {};
  bool active_ = false;
};

TEST_CASE("permission problems are reported", "[counter]") {
  DropDacCapabilities drop;
  if (geteuid() == 0 && !drop.active()) {
    WARN("root and cannot drop CAP_DAC_OVERRIDE: skipping");
    return;
  }
  Fixture f;
  f.root.Write("data/secret.txt", "x\n");
  f.root.Write("locked/inner/a.txt", "x\n");
  f.root.Write("tree/open/a.jpg", "x");
  f.root.Mkdir("tree/closed");
  chmod(f.root.Path("data/secret.txt").c_str(), 0);
  chmod(f.root.Path("locked").c_str(), 0);
  chmod(f.root.Path("tree/closed").c_str(), 0);
  CHECK(f.Reason("/data/secret.txt", "txt") == "PermissionDenied");
  CHECK(f.Reason("/locked/inner/a.txt", "txt") == "PermissionDenied");
  CHECK(f.Reason("/tree", "dir") == "PermissionDenied");  // never a silent undercount
}

TEST_CASE("paths are confined to the host root", "[counter][confinement]") {
  TempDir outside;
  outside.Write("secret.txt", "a\nb\nc\n");
  Fixture f;
  f.root.Write("data/a.txt", "x\n");
  f.root.Symlink(outside.Path("secret.txt"), "data/abs_link.txt");  // absolute: a host path
  f.root.Symlink("../../../../../../../../" + outside.Path("secret.txt"), "data/rel_escape.txt");
  f.root.Symlink("../..", "data/up");
  f.root.Symlink("/data/a.txt", "data/abs_inside.txt");
  f.root.Symlink("loop2", "data/loop1");
  f.root.Symlink("loop1", "data/loop2");

  CHECK(f.Reason("/../" + outside.Path("secret.txt"), "txt") == "PathEscapesHostRoot");
  CHECK(f.Reason("/data/../../secret.txt", "txt") == "PathEscapesHostRoot");
  CHECK(f.Reason("/data/rel_escape.txt", "txt") == "PathEscapesHostRoot");
  CHECK(f.Reason("/data/up/a.txt", "txt") == "PathEscapesHostRoot");
  // An absolute symlink target is a host path: it is looked up under the host root, where the
  // outside file does not exist.
  CHECK(f.Reason("/data/abs_link.txt", "txt") == "PathNotFound");
  CHECK(f.Reason("/data/loop1", "txt") == "TooManySymlinks");
  // Inside the root, `..` and symlinks work and the canonical path is reported.
  CHECK(f.CountOk("/data/../data/./a.txt", "txt") == 1);
  absl::StatusOr<CountResult> via_link = f.Count("/data/abs_inside.txt", "txt");
  REQUIRE(via_link.ok());
  CHECK(via_link->count == 1);
  CHECK(via_link->source == "/data/a.txt");
}

TEST_CASE("paths are confined to the data roots", "[counter][confinement]") {
  Fixture f(ReadOptions{}, {"/data/", "/srv/models"});
  f.root.Write("data/a.txt", "x\n");
  f.root.Write("srv/models/m/b.txt", "x\ny\n");
  f.root.Write("secret.key", "key\n");
  f.root.Write("var/lib/kubelet/pods/p/token", "token\n");
  f.root.Write("srv/other.txt", "x\n");
  f.root.Symlink("/secret.key", "data/to_secret");
  f.root.Symlink("../secret.key", "data/up_secret");
  f.root.Symlink("/srv/models/m/b.txt", "data/to_model");

  CHECK(f.CountOk("/data/a.txt", "txt") == 1);
  CHECK(f.CountOk("data/a.txt", "txt") == 1);  // relative: from the host root
  CHECK(f.CountOk("/srv/models/m/b.txt", "txt") == 2);
  CHECK(f.CountOk("/data/to_model", "txt") == 2);  // a link from one data root to another
  CHECK(f.CountOk("/srv/models", "dir") == 1);
  for (const char* url : {"/secret.key", "/var/lib/kubelet/pods/p/token", "/srv/other.txt",
                          "/data/../secret.key", "/data/to_secret", "/data/up_secret",
                          "/datasets/a.txt", "/srv", "/"}) {
    INFO(url);
    CHECK(f.Reason(url, "txt") == "OutsideDataRoots");
  }
  absl::StatusOr<CountResult> outside = f.Count("/secret.key", "txt");
  CHECK(outside.status().message() ==
        "host path /secret.key is outside the LC's data roots (/data, /srv/models); mount its "
        "directory as a data root (deploy/README.md, \"Data roots\")");
  // The change watcher is not pointed outside either.
  CHECK(ReasonOf(f.counter->WatchTargetFor("/var/lib/kubelet").status()) == "OutsideDataRoots");

  // "/" among the data roots is the whole host root.
  Fixture all(ReadOptions{}, {"/data", "/"});
  all.root.Write("secret.key", "key\n");
  CHECK(all.CountOk("/secret.key", "txt") == 1);
}

TEST_CASE("a grown file is counted from the checkpoint", "[counter][incremental]") {
  for (bool mmap : {true, false}) {
    for (const std::string format : {"txt", "csv"}) {
      INFO("format " << format << " mmap " << mmap);
      Fixture f(mmap);
      std::string body = format == "csv" ? "id,text\n" : "";
      for (int i = 0; i < 20000; ++i) body += "line " + std::to_string(i) + ",x\n";
      body += "partial";  // a last line without newline
      f.root.Write("d/f", body);
      absl::StatusOr<CountResult> first = f.Count("/d/f", format);
      REQUIRE(first.ok());
      CHECK(first->count == 20001);
      CHECK_FALSE(first->incremental);
      CHECK(first->bytes_read == body.size());

      // Unchanged: nothing is read.
      absl::StatusOr<CountResult> same = f.Count("/d/f", format, &first->checkpoint);
      REQUIRE(same.ok());
      CHECK(same->count == 20001);
      CHECK(same->bytes_read == 0);
      CHECK(same->incremental);

      // The partial line continues, then new lines (a quoted newline for csv) arrive.
      const std::string appended =
          format == "csv" ? " more\n\"quoted\nnewline\",y\n\nlast,z\n" : " more\nnew one\n\nnew two\n";
      f.root.Append("d/f", appended);
      absl::StatusOr<CountResult> grown = f.Count("/d/f", format, &same->checkpoint);
      REQUIRE(grown.ok());
      CHECK(grown->count == 20003);
      CHECK(grown->incremental);
      // Only the appended bytes plus the 4 KiB guard before the old end were read.
      CHECK(grown->bytes_read == appended.size() + Checkpoint::kGuardBytes);
      // And the result equals a full count.
      CHECK(f.CountOk("/d/f", format) == 20003);

      // Tiny appends keep the guard consistent too.
      absl::StatusOr<CountResult> cur = std::move(grown);
      for (int i = 0; i < 5; ++i) {
        f.root.Append("d/f", "z");
        f.root.Append("d/f", "\n");
        absl::StatusOr<CountResult> next = f.Count("/d/f", format, &cur->checkpoint);
        REQUIRE(next.ok());
        CHECK(next->incremental);
        CHECK(next->bytes_read == 2 + Checkpoint::kGuardBytes);
        cur = std::move(next);
      }
      CHECK(cur->count == 20008);
    }
  }
}

// Two threads count the halves of a file and settle the line at the boundary; the count, the bytes
// read and the checkpoint (line state and guard) must be those of one thread, and a later
// incremental count must continue correctly from that checkpoint.
TEST_CASE("a file counted by two threads gives what one thread gives", "[counter][split]") {
  std::mt19937_64 rng(99);
  std::vector<std::string> bodies = {
      "\xEF\xBB\xBF" "abc",  // the first half is exactly the BOM
      "\xEF\xBB\xBF" + std::string(30'000, 'q'),              // one long line across the middle
      std::string(20'000, '\n') + " x " + std::string(20'000, ' '),
  };
  for (int i = 0; i < 12; ++i) {
    std::string body = i % 3 == 0 ? "\xEF\xBB\xBF" : "";
    const size_t size = 6 + rng() % 200'000;
    while (body.size() < size) body += " \t\nab\r\n\n"[rng() % 8];
    bodies.push_back(body);
  }
  ReadOptions one = Fixture::MappedAlways(true);
  one.scan_threads = 1;
  one.mmap_window = 4096 * (1 + rng() % 4);
  Fixture f(one);
  CounterOptions two;
  two.host_root = f.root.path();
  two.read = one;
  two.read.scan_threads = 2;
  two.read.split_min_bytes = 1;
  const SampleCounter split(two);
  auto count_split = [&](const std::string& format, const Checkpoint* previous) {
    CountRequest request;
    request.url = "/f";
    request.format = format;
    request.previous = previous;
    return split.Count(request);
  };
  for (size_t i = 0; i < bodies.size(); ++i) {
    INFO("body " << i << " size " << bodies[i].size());
    for (const std::string format : {"txt", "jsonl"}) {
      f.root.Write("f", bodies[i]);
      absl::StatusOr<CountResult> want = f.Count("/f", format);
      absl::StatusOr<CountResult> got = count_split(format, nullptr);
      REQUIRE(want.ok());
      REQUIRE(got.ok());
      CHECK(got->count == want->count);
      CHECK(got->bytes_read == want->bytes_read);
      CHECK(got->checkpoint == want->checkpoint);
      f.root.Append("f", std::string(rng() % 3, ' ') + "tail\n");
      absl::StatusOr<CountResult> next = count_split(format, &got->checkpoint);
      REQUIRE(next.ok());
      CHECK(next->incremental);
      CHECK(next->count == f.CountOk("/f", format));
    }
  }
}

TEST_CASE("truncation, rewrites and replacement recount from scratch", "[counter][incremental]") {
  Fixture f;
  f.root.Write("d/f.txt", "a\nb\nc\nd\n");
  absl::StatusOr<CountResult> first = f.Count("/d/f.txt", "txt");
  REQUIRE(first.ok());
  CHECK(first->count == 4);

  SECTION("truncated and rewritten shorter") {
    f.root.Write("d/f.txt", "x\n");
    absl::StatusOr<CountResult> r = f.Count("/d/f.txt", "txt", &first->checkpoint);
    REQUIRE(r.ok());
    CHECK(r->count == 1);
    CHECK_FALSE(r->incremental);
  }
  SECTION("rewritten longer with different bytes before the old end (guard mismatch)") {
    f.root.Write("d/f.txt", "\n\n\n\n\n\n\n\nq\nr\n");
    absl::StatusOr<CountResult> r = f.Count("/d/f.txt", "txt", &first->checkpoint);
    REQUIRE(r.ok());
    CHECK(r->count == 2);
    CHECK_FALSE(r->incremental);
  }
  SECTION("same size, new content") {
    f.root.Write("d/f.txt", "a\n\n\n\nd\n\n");  // 8 bytes like before
    struct timespec times[2] = {{0, UTIME_OMIT}, {first->checkpoint.mtime_ns / 1000000000 + 5, 0}};
    utimensat(AT_FDCWD, f.root.Path("d/f.txt").c_str(), times, 0);
    absl::StatusOr<CountResult> r = f.Count("/d/f.txt", "txt", &first->checkpoint);
    REQUIRE(r.ok());
    CHECK(r->count == 2);
    CHECK_FALSE(r->incremental);
  }
  SECTION("replaced by rename (new inode) with the old content plus more") {
    f.root.Write("d/new.txt", "a\nb\nc\nd\ne\n");
    REQUIRE(std::rename(f.root.Path("d/new.txt").c_str(), f.root.Path("d/f.txt").c_str()) == 0);
    absl::StatusOr<CountResult> r = f.Count("/d/f.txt", "txt", &first->checkpoint);
    REQUIRE(r.ok());
    CHECK(r->count == 5);
    CHECK_FALSE(r->incremental);
    CHECK(r->bytes_read == 10);
  }
  SECTION("a checkpoint of another format is not used") {
    f.root.Append("d/f.txt", "e\n");
    absl::StatusOr<CountResult> r = f.Count("/d/f.txt", "jsonl", &first->checkpoint);
    REQUIRE(r.ok());
    CHECK(r->count == 5);
    CHECK_FALSE(r->incremental);
  }
}

}  // namespace
}  // namespace nereid::lc::dataset
