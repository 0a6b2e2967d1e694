#pragma once

// A devapiserver process for integration tests (nereid_test_devapiserver; uses
// Catch2 REQUIRE): started on 127.0.0.1:0 with --kubeconfig-out into its own
// TempDir, with a RestClient on that kubeconfig and the real kubectl run
// against it (--kubeconfig, --cache-dir and HOME in the temp dir). The
// destructor stops the server.
//
//   DevApiServerProcess::Options options;
//   options.devapiserver = NEREID_DEVAPISERVER_BIN;
//   options.kubectl = NEREID_KUBECTL;
//   options.source_dir = NEREID_SOURCE_DIR;
//   DevApiServerProcess server(options);
//   server.ApplyCrds({"models", "jointinferenceservices"},
//   api::resources::JointInferenceServices()); server.KubectlOk({"apply", "-f",
//   path});

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "common/kube/resource.h"
#include "common/kube/rest_client.h"
#include "tests/support/subprocess.h"

namespace nereid::testing {

class DevApiServerProcess {
 public:
  struct Options {
    std::string devapiserver;                            // the devapiserver binary
    std::string kubectl;                                 // the kubectl binary
    std::string source_dir;                              // ApplyCrds reads <source_dir>/deploy/crds
    std::string temp_prefix = "nereid-devapiserver";     // TempDir prefix
    absl::Duration kubectl_timeout = absl::Seconds(30);  // per kubectl run
    absl::Duration served_timeout = absl::Seconds(20);   // ApplyCrds' wait until served
    std::vector<std::string> extra_args;  // more devapiserver flags (--enable-debug-faults)
  };

  explicit DevApiServerProcess(Options options);
  ~DevApiServerProcess();
  DevApiServerProcess(const DevApiServerProcess&) = delete;
  DevApiServerProcess& operator=(const DevApiServerProcess&) = delete;

  const TempDir& dir() const { return *dir_; }
  std::string kubeconfig() const { return dir_->File("kubeconfig"); }
  int port() const { return port_; }
  Subprocess& server() { return *server_; }
  // A RestClient on the kubeconfig, created on first use.
  kube::RestClient* client();

  // Runs kubectl (REQUIREs only that it could run).
  CommandResult Kubectl(const std::vector<std::string>& args, std::string_view stdin_data = "");
  // Runs kubectl, REQUIREs exit code 0 (the command and its stderr in the message) and returns
  // its stdout.
  std::string KubectlOk(const std::vector<std::string>& args, std::string_view stdin_data = "");
  // kubectl apply -f <source_dir>/deploy/crds/sedna.io_<crd>.yaml for each,
  // then waits until `served` is served.
  void ApplyCrds(const std::vector<std::string>& crds, const kube::Resource& served);

 private:
  Options options_;
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<Subprocess> server_;
  std::unique_ptr<kube::RestClient> client_;
  int port_ = 0;
};

}  // namespace nereid::testing
