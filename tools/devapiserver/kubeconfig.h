#pragma once

// The kubeconfig devapiserver writes with --kubeconfig-out: one cluster, user, context and
// current-context named "devapiserver", pointing at the address it listens on.

#include <string>

#include "absl/status/status.h"

namespace nereid::devapi {

struct KubeconfigOptions {
  std::string server_url;              // "http://127.0.0.1:41233"
  std::string certificate_authority;   // HTTPS: CA file to trust; empty → insecure-skip-tls-verify
  std::string name = "devapiserver";
  std::string ns = "default";
};

std::string RenderKubeconfig(const KubeconfigOptions& options);
// Writes atomically (temp file + rename) so a reader never sees half a file.
absl::Status WriteKubeconfig(const std::string& path, const KubeconfigOptions& options);

}  // namespace nereid::devapi
