// Configuration files as YAML: a kubeconfig (the GM's --kubeconfig, clientcmd's format) and the
// LC's --config file. The first byte picks which; the rest is the file. The kubeconfig's relative
// file references resolve under an empty directory.
//
// Properties: malformed files are an error (InvalidArgument for the LC, any status for the
// kubeconfig, which also reports unreadable referenced files), never a crash, throw or hang; a
// kubeconfig that loads has a usable server address.

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/kube/config.h"
#include "localcontroller/config.h"
#include "tests/fuzz/fuzz_input.h"

namespace nereid {
namespace {

std::string empty_dir;

void KubeConfig(std::string_view text) {
  absl::StatusOr<kube::KubeConfig> config = kube::ParseKubeConfig(text, empty_dir);
  if (!config.ok()) return;
  FUZZ_CHECK(kube::ParseServerAddress(config->server).ok());
}

// The LC reads its --config from a path: an in-memory file.
void LcConfigFile(std::string_view text) {
  const int fd = memfd_create("lc-config", MFD_CLOEXEC);
  FUZZ_CHECK(fd >= 0);
  FUZZ_CHECK(write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  absl::StatusOr<lc::CommandLine> loaded = lc::LoadConfig(
      {"--config", path, "--insecure"},
      [](const std::string&) -> std::optional<std::string> { return std::nullopt; });
  close(fd);
  if (!loaded.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(loaded.status()));
    return;
  }
  FUZZ_CHECK(lc::ValidateConfig(loaded->config).ok());
}

}  // namespace
}  // namespace nereid

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  nereid::fuzz::QuietLogs();
  char pattern[] = "/tmp/nereid-fuzz-config-XXXXXX";
  FUZZ_CHECK(mkdtemp(pattern) != nullptr);
  nereid::empty_dir = pattern;
  std::atexit([] { rmdir(nereid::empty_dir.c_str()); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nereid;
  if (size < 1) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    KubeConfig(text);
  } else {
    LcConfigFile(text);
  }
  return 0;
}
