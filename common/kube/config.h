#pragma once

// Where the Kubernetes API is and how to authenticate to it: client-go's rest.Config, loaded from a
// kubeconfig file (clientcmd) or from the in-cluster service account (rest.InClusterConfig).
//
// Resolution order of LoadKubeConfig (the controller-runtime order):
//   1. LoadOptions::kubeconfig_path (the --kubeconfig flag), if given;
//   2. $KUBECONFIG: the first existing file of its colon-separated list (no merging);
//   3. in-cluster, when KUBERNETES_SERVICE_HOST is set;
//   4. ~/.kube/config.
// Certificates and keys are read into memory at load time; a bearer token file is kept as a path
// so rotated tokens are picked up (see token_source.h). Secrets never appear in DebugString().

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace nereid::kube {

struct KubeConfig {
  // "https://host:port" with an optional path prefix ("https://proxy/k8s/clusters/c1").
  std::string server;
  // Namespace of the current context (or the in-cluster pod's namespace); "default" if unset.
  std::string default_namespace = "default";

  // PEM data. Empty ca_pem means the system trust store.
  std::string ca_pem;
  std::string client_cert_pem;
  std::string client_key_pem;  // Secret.
  bool insecure_skip_tls_verify = false;

  std::string bearer_token;  // Secret. Static token.
  std::string token_file;    // Re-read when it changes (wins over bearer_token when both are set).
  std::string username;      // HTTP basic auth, rarely used.
  std::string password;      // Secret.

  // Where this came from, for logs: "kubeconfig /root/.kube/config context kind-dev", "in-cluster".
  std::string source;

  // Server, source and which credentials are present, never their values.
  std::string DebugString() const;
};

// Parses the kubeconfig file at `path`. `context` overrides current-context when non-empty.
// Relative file references (certificate-authority, client-certificate, client-key, tokenFile) are
// relative to the kubeconfig's directory, as in clientcmd.
absl::StatusOr<KubeConfig> LoadKubeConfigFile(const std::string& path, std::string_view context = "");
// Same, from kubeconfig text; `base_dir` anchors relative file references.
absl::StatusOr<KubeConfig> ParseKubeConfig(std::string_view yaml, const std::string& base_dir,
                                           std::string_view context = "",
                                           std::string_view source = "kubeconfig");

struct InClusterOptions {
  // The mounted service-account directory (token, ca.crt, namespace). Injectable for tests.
  std::string service_account_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
  // Environment lookup (KUBERNETES_SERVICE_HOST/PORT); defaults to getenv.
  std::function<std::optional<std::string>(const std::string&)> getenv;
};

// rest.InClusterConfig: server from KUBERNETES_SERVICE_HOST/PORT, CA from ca.crt, the token file
// path (re-read on rotation) and the pod's namespace. Fails clearly outside a pod.
absl::StatusOr<KubeConfig> InClusterConfig(const InClusterOptions& options = {});

struct LoadOptions {
  std::string kubeconfig_path;  // --kubeconfig; empty: not given.
  std::string context;          // --context; empty: current-context.
  InClusterOptions in_cluster;  // Also supplies getenv for $KUBECONFIG and $HOME.
};

// The resolution order described at the top of this file.
absl::StatusOr<KubeConfig> LoadKubeConfig(const LoadOptions& options = {});

// The pieces of KubeConfig::server.
struct ServerAddress {
  bool https = true;
  std::string host;  // Without IPv6 brackets.
  int port = 443;
  std::string base_path;  // "" or "/prefix" without a trailing slash.
};
absl::StatusOr<ServerAddress> ParseServerAddress(std::string_view server);

}  // namespace nereid::kube
