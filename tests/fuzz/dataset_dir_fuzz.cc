// The LC's directory counters (dir, voc/xml) on trees a user controls: files, directories and
// symlinks (to files inside and outside the host root, to directories, dangling, in loops) built
// from the input under a host root, then counted as a Dataset url "/data".
//
// Property: the count equals a reference walk that lists with lstat, descends only real
// directories, counts regular files whose names fit the format, and counts a symlink when the
// kernel's own in-root resolution (openat2 RESOLVE_IN_ROOT) reaches a regular file. Symlink
// targets that climb above the root name files that exist only outside it, so the kernel's clamp
// and the counter's refusal agree: a file outside the host root is never counted.

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include <fuzzer/FuzzedDataProvider.h>

#include "absl/strings/match.h"
#include "localcontroller/dataset/dir_counter.h"
#include "localcontroller/dataset/format.h"
#include "localcontroller/dataset/host_root.h"
#include "tests/fuzz/fuzz_input.h"

namespace nereid {
namespace {

namespace fs = std::filesystem;
using lc::dataset::Format;

fs::path workspace;  // <tmp>/root is the host root; <tmp>/secret.xml lies outside it

bool Counts(Format format, const std::string& name) {
  return format == Format::kDir || absl::EndsWithIgnoreCase(name, ".xml");
}

bool ResolvesToFileInRoot(int root_fd, const std::string& relative) {
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT;
  const int fd = static_cast<int>(syscall(SYS_openat2, root_fd, relative.c_str(), &how, sizeof(how)));
  if (fd < 0) return false;
  struct stat st;
  const bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  close(fd);
  return regular;
}

uint64_t ReferenceCount(int root_fd, const fs::path& root, const fs::path& dir, Format format) {
  uint64_t count = 0;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const fs::file_status status = entry.symlink_status();
    if (fs::is_directory(status)) {
      count += ReferenceCount(root_fd, root, entry.path(), format);
    } else if (fs::is_regular_file(status)) {
      count += Counts(format, name) ? 1 : 0;
    } else if (fs::is_symlink(status) && Counts(format, name)) {
      count += ResolvesToFileInRoot(root_fd, entry.path().lexically_relative(root).string()) ? 1 : 0;
    }
  }
  return count;
}

void BuildTree(FuzzedDataProvider& input, const fs::path& root) {
  static const char* const kParents[] = {"data", "data/sub", "data/sub/deep", "other"};
  static const char* const kNames[] = {"a.xml", "b.XML", "c.txt", ".h.xml", "d.xml.bak", "e",
                                       "sub",   "deep",  "l1.xml", "l2.xml", "x.Xml",    "f"};
  const std::string outside = (workspace / "secret.xml").string();
  const std::string targets[] = {"a.xml",        "sub/a.xml",
                                 "../a.xml",     "/data/a.xml",
                                 "/other/a.xml", "/data/sub",
                                 "missing.xml",  "../../secret.xml",
                                 "../../../../../../secret.xml", outside,
                                 "l1.xml",       "/data/l2.xml",
                                 ".",            "/",
                                 "/data/sub/deep/b.XML", "../sub/deep"};
  const int entries = input.ConsumeIntegralInRange(0, 24);
  for (int i = 0; i < entries && input.remaining_bytes() > 0; ++i) {
    const fs::path parent = root / kParents[input.ConsumeIntegralInRange<size_t>(0, 3)];
    const fs::path path = parent / kNames[input.ConsumeIntegralInRange<size_t>(0, 11)];
    std::error_code ec;
    fs::create_directories(parent, ec);
    switch (input.ConsumeIntegralInRange(0, 2)) {
      case 0: {  // never through an existing symlink: that could plant a file the links expect outside
        const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd >= 0) {
          FUZZ_CHECK(write(fd, "x", 1) == 1);
          close(fd);
        }
        break;
      }
      case 1: fs::create_directory(path, ec); break;
      default:
        fs::create_symlink(targets[input.ConsumeIntegralInRange<size_t>(0, std::size(targets) - 1)],
                           path, ec);
        break;
    }
  }
  std::error_code ec;
  fs::create_directories(root / "data", ec);
}

}  // namespace
}  // namespace nereid

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  using namespace nereid;
  fuzz::QuietLogs();
  std::string pattern =
      (fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path()) / "nereid-fuzz-dir-XXXXXX";
  FUZZ_CHECK(mkdtemp(pattern.data()) != nullptr);
  workspace = pattern;
  std::ofstream((workspace / "secret.xml").string()) << "outside the host root";
  std::atexit([] { fs::remove_all(workspace); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nereid;
  const fs::path root = workspace / "root";
  fs::remove_all(root);
  fs::create_directory(root);
  FuzzedDataProvider input(data, size);
  BuildTree(input, root);

  absl::StatusOr<lc::dataset::HostRoot> host_root = lc::dataset::HostRoot::Open(root.string());
  FUZZ_CHECK(host_root.ok());
  const int root_fd = open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  FUZZ_CHECK(root_fd >= 0);
  for (Format format : {Format::kDir, Format::kVoc}) {
    absl::StatusOr<lc::dataset::HostRoot::Entry> entry = host_root->Resolve("/data");
    FUZZ_CHECK(entry.ok());
    absl::StatusOr<uint64_t> count = lc::dataset::CountDirectory(*host_root, *entry, format, nullptr);
    FUZZ_CHECK(count.ok());
    FUZZ_CHECK(*count == ReferenceCount(root_fd, root, root / "data", format));
  }
  close(root_fd);
  return 0;
}
