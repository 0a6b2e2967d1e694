#include "localcontroller/dataset/file_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <string>

#include "localcontroller/dataset/errors.h"
#include "common/process/unique_fd.h"
#include "tests/localcontroller/dataset/temp_dir.h"

namespace nereid::lc::dataset {
namespace {

std::string Pattern(size_t size) {
  std::string s(size, '\0');
  for (size_t i = 0; i < size; ++i) s[i] = static_cast<char>('a' + i % 26);
  return s;
}

TEST_CASE("ReadRange delivers exactly the range, mapped or buffered", "[reader]") {
  testing::TempDir dir;
  const std::string content = Pattern(3 * 1024 * 1024 + 123);
  dir.Write("f", content);
  UniqueFd fd(open(dir.Path("f").c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(fd.valid());
  for (bool mmap : {true, false}) {
    ReadOptions options;
    options.use_mmap = mmap;
    options.mmap_min_bytes = 1;
    options.mmap_window = 1024 * 1024;
    options.buffer_size = 256 * 1024;
    for (auto [begin, end] : {std::pair<uint64_t, uint64_t>{0, content.size()},
                              {4095, 4097},
                              {1000, 2 * 1024 * 1024 + 5},
                              {content.size() - 1, content.size()},
                              {7, 7}}) {
      std::string got;
      uint64_t bytes = 0;
      absl::Status status = ReadRange(
          fd.get(), begin, end, options,
          [&](const uint8_t* data, size_t n) { got.append(reinterpret_cast<const char*>(data), n); },
          &bytes);
      INFO("mmap " << mmap << " range " << begin << ".." << end);
      REQUIRE(status.ok());
      CHECK(bytes == end - begin);
      CHECK(got == content.substr(begin, end - begin));
    }
  }
}

TEST_CASE("a file truncated while mapped gives FileChanged instead of SIGBUS", "[reader]") {
  testing::TempDir dir;
  dir.Write("f", Pattern(8 * 1024 * 1024));
  UniqueFd fd(open(dir.Path("f").c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(fd.valid());
  ReadOptions options;
  options.mmap_min_bytes = 1;
  uint64_t bytes = 0;
  int calls = 0;
  volatile uint8_t sum = 0;
  absl::Status status = ReadRange(
      fd.get(), 0, 8 * 1024 * 1024, options,
      [&](const uint8_t* data, size_t n) {
        ++calls;
        REQUIRE(truncate(dir.Path("f").c_str(), 0) == 0);
        sum = sum + data[n - 1];  // past the new end of file: SIGBUS, caught by the guard
      },
      &bytes);
  CHECK(calls == 1);
  CHECK(ReasonOf(status) == "FileChanged");
  CHECK(bytes == 0);

  // The guard is per call: reading again works (the file is now empty), and so does another file.
  dir.Write("g", "abc");
  UniqueFd g(open(dir.Path("g").c_str(), O_RDONLY | O_CLOEXEC));
  std::string got;
  REQUIRE(ReadRange(g.get(), 0, 3, options,
                    [&](const uint8_t* data, size_t n) {
                      got.append(reinterpret_cast<const char*>(data), n);
                    },
                    &bytes)
              .ok());
  CHECK(got == "abc");
}

TEST_CASE("a file truncated before a buffered read gives FileChanged", "[reader]") {
  testing::TempDir dir;
  dir.Write("f", Pattern(1000));
  UniqueFd fd(open(dir.Path("f").c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(truncate(dir.Path("f").c_str(), 10) == 0);
  ReadOptions options;
  options.use_mmap = false;
  uint64_t bytes = 0;
  absl::Status status =
      ReadRange(fd.get(), 0, 1000, options, [](const uint8_t*, size_t) {}, &bytes);
  CHECK(ReasonOf(status) == "FileChanged");
}

TEST_CASE("a cancelled read stops with Cancelled", "[reader]") {
  testing::TempDir dir;
  dir.Write("f", Pattern(4 * 1024 * 1024));
  UniqueFd fd(open(dir.Path("f").c_str(), O_RDONLY | O_CLOEXEC));
  std::atomic<bool> cancel{true};
  ReadOptions options;
  options.cancel = &cancel;
  uint64_t bytes = 0;
  absl::Status status =
      ReadRange(fd.get(), 0, 4 * 1024 * 1024, options, [](const uint8_t*, size_t) {}, &bytes);
  CHECK(ReasonOf(status) == "Cancelled");
}

}  // namespace
}  // namespace nereid::lc::dataset
