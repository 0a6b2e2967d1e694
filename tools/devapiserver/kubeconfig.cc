#include "tools/devapiserver/kubeconfig.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace nereid::devapi {
namespace {

// Double-quoted YAML scalar.
std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string RenderKubeconfig(const KubeconfigOptions& o) {
  std::string cluster = absl::StrCat("    server: ", Quote(o.server_url), "\n");
  if (o.server_url.rfind("https://", 0) == 0) {
    if (o.certificate_authority.empty()) {
      absl::StrAppend(&cluster, "    insecure-skip-tls-verify: true\n");
    } else {
      absl::StrAppend(&cluster, "    certificate-authority: ", Quote(o.certificate_authority), "\n");
    }
  }
  return absl::StrCat(
      "# Written by devapiserver (development and tests only, not a production API server).\n",
      "apiVersion: v1\nkind: Config\n",
      "clusters:\n- name: ", Quote(o.name), "\n  cluster:\n", cluster,
      // Not checked by the server; without any credential kubectl prompts for a password on HTTPS.
      "users:\n- name: ", Quote(o.name), "\n  user:\n    token: \"devapiserver-no-auth\"\n",
      "contexts:\n- name: ", Quote(o.name), "\n  context:\n    cluster: ", Quote(o.name),
      "\n    user: ", Quote(o.name), "\n    namespace: ", Quote(o.ns), "\n",
      "current-context: ", Quote(o.name), "\n");
}

absl::Status WriteKubeconfig(const std::string& path, const KubeconfigOptions& options) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", tmp, ": ", std::strerror(errno)));
    out << RenderKubeconfig(options);
    out.close();
    if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", tmp));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot rename ", tmp, " to ", path, ": ",
                                               std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace nereid::devapi
