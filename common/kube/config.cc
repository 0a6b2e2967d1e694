#include "common/kube/config.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "yaml-cpp/yaml.h"

namespace nereid::kube {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> RealGetenv(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

std::optional<std::string> Env(const InClusterOptions& options, const std::string& name) {
  return options.getenv ? options.getenv(name) : RealGetenv(name);
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read ", ToAbsl(what), " file ", path));
  }
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat("error reading ", ToAbsl(what), " ", path));
  return content.str();
}

std::string ResolvePath(const std::string& base_dir, const std::string& path) {
  if (path.empty() || fs::path(path).is_absolute() || base_dir.empty()) return path;
  return (fs::path(base_dir) / path).lexically_normal().string();
}

// Finds the entry `name` in a kubeconfig list like `clusters: [{name: x, cluster: {...}}]` and
// returns its `field` map (an undefined node when absent).
YAML::Node FindNamed(const YAML::Node& list, const std::string& name, const char* field,
                     bool* found) {
  *found = false;
  if (!list || !list.IsSequence()) return YAML::Node();
  for (const YAML::Node& entry : list) {
    if (!entry.IsMap()) continue;
    const YAML::Node entry_name = entry["name"];
    if (entry_name && entry_name.IsScalar() && entry_name.Scalar() == name) {
      *found = true;
      YAML::Node value = entry[field];
      return value ? value : YAML::Node(YAML::NodeType::Map);
    }
  }
  return YAML::Node();
}

std::string ScalarOr(const YAML::Node& map, const char* key, std::string fallback = "") {
  if (!map || !map.IsMap()) return fallback;
  const YAML::Node value = map[key];
  if (!value || !value.IsScalar()) return fallback;
  return value.Scalar();
}

bool BoolOr(const YAML::Node& map, const char* key, bool fallback) {
  if (!map || !map.IsMap()) return fallback;
  const YAML::Node value = map[key];
  if (!value || !value.IsScalar()) return fallback;
  const std::string& text = value.Scalar();
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  return fallback;
}

// `<field>-data` (base64 PEM) wins over `<field>` (a file path), as in clientcmd.
absl::StatusOr<std::string> DataOrFile(const YAML::Node& map, const char* field,
                                       const std::string& base_dir, std::string_view owner) {
  const std::string data_key = absl::StrCat(field, "-data");
  const std::string data = ScalarOr(map, data_key.c_str());
  if (!data.empty()) {
    std::string decoded;
    if (!absl::Base64Unescape(data, &decoded)) {
      return absl::InvalidArgumentError(
          absl::StrCat("kubeconfig ", ToAbsl(owner), ": ", data_key, " is not valid base64"));
    }
    return decoded;
  }
  const std::string path = ScalarOr(map, field);
  if (path.empty()) return std::string();
  absl::StatusOr<std::string> content =
      ReadWholeFile(ResolvePath(base_dir, path), absl::StrCat("kubeconfig ", ToAbsl(owner), " ", field));
  return content;
}

}  // namespace

std::string KubeConfig::DebugString() const {
  std::string out = absl::StrCat("server=", server, " source=\"", source, "\" namespace=",
                                 default_namespace);
  absl::StrAppend(&out, " ca=", ca_pem.empty() ? "system" : "custom");
  if (!client_cert_pem.empty()) absl::StrAppend(&out, " client-cert=yes");
  if (!token_file.empty()) {
    absl::StrAppend(&out, " token-file=", token_file);
  } else if (!bearer_token.empty()) {
    absl::StrAppend(&out, " token=yes");
  }
  if (!username.empty()) absl::StrAppend(&out, " basic-auth-user=", username);
  if (insecure_skip_tls_verify) absl::StrAppend(&out, " insecure-skip-tls-verify");
  return out;
}

absl::StatusOr<KubeConfig> ParseKubeConfig(std::string_view yaml, const std::string& base_dir,
                                           std::string_view context_override,
                                           std::string_view source) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(source), ": not valid YAML: ", e.what()));
  }
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(absl::StrCat(ToAbsl(source), ": not a kubeconfig document"));
  }

  try {
    std::string context_name(context_override);
    if (context_name.empty()) context_name = ScalarOr(root, "current-context");
    if (context_name.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat(ToAbsl(source), ": no current-context set and no context given"));
    }
    bool found = false;
    const YAML::Node context = FindNamed(root["contexts"], context_name, "context", &found);
    if (!found) {
      return absl::NotFoundError(
          absl::StrCat(ToAbsl(source), ": context \"", context_name, "\" not found"));
    }
    const std::string cluster_name = ScalarOr(context, "cluster");
    const std::string user_name = ScalarOr(context, "user");
    const std::string owner = absl::StrCat("context \"", context_name, "\"");
    if (cluster_name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(ToAbsl(source), ": ", owner, " names no cluster"));
    }
    const YAML::Node cluster = FindNamed(root["clusters"], cluster_name, "cluster", &found);
    if (!found) {
      return absl::NotFoundError(absl::StrCat(ToAbsl(source), ": cluster \"", cluster_name,
                                              "\" of ", owner, " not found"));
    }
    YAML::Node user;
    if (!user_name.empty()) {
      user = FindNamed(root["users"], user_name, "user", &found);
      if (!found) {
        return absl::NotFoundError(absl::StrCat(ToAbsl(source), ": user \"", user_name, "\" of ",
                                                owner, " not found"));
      }
    }

    KubeConfig config;
    config.source = absl::StrCat(ToAbsl(source), " context ", context_name);
    config.server = ScalarOr(cluster, "server");
    if (config.server.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(ToAbsl(source), ": cluster \"", cluster_name, "\" has no server"));
    }
    RETURN_IF_ERROR(ParseServerAddress(config.server).status());
    const std::string ns = ScalarOr(context, "namespace");
    if (!ns.empty()) config.default_namespace = ns;

    const std::string cluster_owner = absl::StrCat("cluster \"", cluster_name, "\"");
    ASSIGN_OR_RETURN(config.ca_pem,
                     DataOrFile(cluster, "certificate-authority", base_dir, cluster_owner));
    config.insecure_skip_tls_verify = BoolOr(cluster, "insecure-skip-tls-verify", false);
    if (config.insecure_skip_tls_verify && !config.ca_pem.empty()) {
      // clientcmd refuses this combination too: it is almost always a mistake.
      return absl::InvalidArgumentError(absl::StrCat(
          ToAbsl(source), ": ", cluster_owner,
          " sets both a certificate authority and insecure-skip-tls-verify"));
    }
    for (const char* unsupported : {"tls-server-name", "proxy-url"}) {
      if (!ScalarOr(cluster, unsupported).empty()) {
        LOG(WARNING) << config.source << ": " << unsupported << " is not supported and is ignored";
      }
    }

    if (user && user.IsMap()) {
      const std::string user_owner = absl::StrCat("user \"", user_name, "\"");
      ASSIGN_OR_RETURN(config.client_cert_pem,
                       DataOrFile(user, "client-certificate", base_dir, user_owner));
      ASSIGN_OR_RETURN(config.client_key_pem, DataOrFile(user, "client-key", base_dir, user_owner));
      if (config.client_cert_pem.empty() != config.client_key_pem.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            ToAbsl(source), ": ", user_owner,
            " needs both a client certificate and a client key (only one is set)"));
      }
      config.bearer_token = ScalarOr(user, "token");
      const std::string token_file = ScalarOr(user, "tokenFile");
      if (!token_file.empty()) {
        config.token_file = ResolvePath(base_dir, token_file);
        // Fail at load time, not on the first request, when the file is missing.
        RETURN_IF_ERROR(ReadWholeFile(config.token_file, "kubeconfig tokenFile").status());
      }
      config.username = ScalarOr(user, "username");
      config.password = ScalarOr(user, "password");
      const bool has_credentials = !config.client_cert_pem.empty() ||
                                   !config.bearer_token.empty() || !config.token_file.empty() ||
                                   !config.username.empty();
      if (!has_credentials && (user["exec"] || user["auth-provider"])) {
        return absl::UnimplementedError(absl::StrCat(
            ToAbsl(source), ": ", user_owner,
            " uses an exec or auth-provider credential plugin, which Nereid does not support; "
            "use a token, tokenFile or client certificate"));
      }
    }
    return config;
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(source), ": malformed kubeconfig: ", e.what()));
  }
}

absl::StatusOr<KubeConfig> LoadKubeConfigFile(const std::string& path, std::string_view context) {
  ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path, "kubeconfig"));
  const std::string base_dir = fs::path(path).parent_path().string();
  return ParseKubeConfig(text, base_dir, context, absl::StrCat("kubeconfig ", path));
}

absl::StatusOr<KubeConfig> InClusterConfig(const InClusterOptions& options) {
  const std::string host = Env(options, "KUBERNETES_SERVICE_HOST").value_or("");
  const std::string port = Env(options, "KUBERNETES_SERVICE_PORT").value_or("");
  if (host.empty() || port.empty()) {
    return absl::FailedPreconditionError(
        "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be "
        "set");
  }
  KubeConfig config;
  config.source = "in-cluster";
  const bool ipv6 = host.find(':') != std::string::npos;
  config.server = absl::StrCat("https://", ipv6 ? "[" : "", host, ipv6 ? "]" : "", ":", port);
  RETURN_IF_ERROR(ParseServerAddress(config.server).status());

  const fs::path dir(options.service_account_dir);
  config.token_file = (dir / "token").string();
  RETURN_IF_ERROR(ReadWholeFile(config.token_file, "service account token").status());

  absl::StatusOr<std::string> ca = ReadWholeFile((dir / "ca.crt").string(), "service account CA");
  if (ca.ok()) {
    config.ca_pem = *std::move(ca);
  } else {
    // As rest.InClusterConfig: carry on with the system roots, but say so.
    LOG(WARNING) << "in-cluster config: " << ca.status().message() << "; using system roots";
  }

  if (std::optional<std::string> ns = Env(options, "POD_NAMESPACE"); ns && !ns->empty()) {
    config.default_namespace = *ns;
  } else if (absl::StatusOr<std::string> file =
                 ReadWholeFile((dir / "namespace").string(), "service account namespace");
             file.ok()) {
    std::string trimmed(absl::StripAsciiWhitespace(*file));
    if (!trimmed.empty()) config.default_namespace = trimmed;
  }
  return config;
}

absl::StatusOr<KubeConfig> LoadKubeConfig(const LoadOptions& options) {
  if (!options.kubeconfig_path.empty()) {
    return LoadKubeConfigFile(options.kubeconfig_path, options.context);
  }
  if (std::optional<std::string> env = Env(options.in_cluster, "KUBECONFIG"); env && !env->empty()) {
    std::vector<std::string> candidates = absl::StrSplit(*env, ':', absl::SkipEmpty());
    for (const std::string& candidate : candidates) {
      std::error_code ec;
      if (fs::exists(candidate, ec)) return LoadKubeConfigFile(candidate, options.context);
    }
    return absl::NotFoundError(absl::StrCat("none of the files in $KUBECONFIG exist: ", *env));
  }
  if (Env(options.in_cluster, "KUBERNETES_SERVICE_HOST").value_or("") != "") {
    return InClusterConfig(options.in_cluster);
  }
  const std::string home = Env(options.in_cluster, "HOME").value_or("");
  if (!home.empty()) {
    const std::string path = (fs::path(home) / ".kube" / "config").string();
    std::error_code ec;
    if (fs::exists(path, ec)) return LoadKubeConfigFile(path, options.context);
  }
  return absl::NotFoundError(
      "no Kubernetes configuration: pass --kubeconfig, set $KUBECONFIG, run in a pod, or create "
      "~/.kube/config");
}

absl::StatusOr<ServerAddress> ParseServerAddress(std::string_view server) {
  ServerAddress address;
  std::string_view rest = server;
  if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
  } else if (rest.starts_with("http://")) {
    address.https = false;
    address.port = 80;
    rest.remove_prefix(7);
  } else if (rest.find("://") != std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("server \"", ToAbsl(server), "\": only http and https are supported"));
  }
  // A bare "host:port" means https, as clientcmd assumes.
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    std::string_view path = rest.substr(slash);
    while (!path.empty() && path.back() == '/') path.remove_suffix(1);
    if (path.find_first_of("?#") != std::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("server \"", ToAbsl(server), "\": query and fragment are not allowed"));
    }
    address.base_path = std::string(path);
  }
  std::string_view port_text;
  if (authority.starts_with("[")) {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("server \"", ToAbsl(server), "\": unterminated IPv6 address"));
    }
    address.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        return absl::InvalidArgumentError(
            absl::StrCat("server \"", ToAbsl(server), "\": garbage after IPv6 address"));
      }
      port_text = after.substr(1);
    }
  } else {
    const size_t colon = authority.rfind(':');
    address.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
  }
  if (address.host.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("server \"", ToAbsl(server), "\": no host"));
  }
  if (!port_text.empty() || authority.ends_with(":")) {
    int port = 0;
    if (!absl::SimpleAtoi(ToAbsl(port_text), &port) || port <= 0 || port > 65535) {
      return absl::InvalidArgumentError(
          absl::StrCat("server \"", ToAbsl(server), "\": bad port \"", ToAbsl(port_text), "\""));
    }
    address.port = port;
  }
  return address;
}

}  // namespace nereid::kube
