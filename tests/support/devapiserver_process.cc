#include "tests/support/devapiserver_process.h"

#include <catch2/catch.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "common/kube/config.h"

namespace nereid::testing {

DevApiServerProcess::DevApiServerProcess(Options options) : options_(std::move(options)) {
  auto dir = TempDir::Create(options_.temp_prefix);
  REQUIRE(dir.ok());
  dir_ = std::make_unique<TempDir>(*std::move(dir));
  Subprocess::Options process;
  process.argv = {options_.devapiserver, "--listen", "127.0.0.1:0", "--kubeconfig-out",
                  kubeconfig()};
  process.argv.insert(process.argv.end(), options_.extra_args.begin(), options_.extra_args.end());
  auto started = Subprocess::Start(std::move(process));
  REQUIRE(started.ok());
  server_ = *std::move(started);
  auto line = server_->ReadLine(absl::Seconds(15));
  REQUIRE(line.ok());
  const std::string url = ListenUrl(*line);
  REQUIRE_FALSE(url.empty());
  REQUIRE(absl::SimpleAtoi(url.substr(url.rfind(':') + 1), &port_));
}

DevApiServerProcess::~DevApiServerProcess() {
  if (server_ != nullptr) (void)server_->Stop(absl::Seconds(10));
}

kube::RestClient* DevApiServerProcess::client() {
  if (client_ == nullptr) {
    auto config = kube::LoadKubeConfigFile(kubeconfig());
    REQUIRE(config.ok());
    auto client = kube::RestClient::Create(*config);
    REQUIRE(client.ok());
    client_ = *std::move(client);
  }
  return client_.get();
}

CommandResult DevApiServerProcess::Kubectl(const std::vector<std::string>& args,
                                           std::string_view stdin_data) {
  std::vector<std::string> argv = {options_.kubectl, "--kubeconfig", kubeconfig(), "--cache-dir",
                                   dir_->File("kubectl-cache")};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = RunCommand(argv, options_.kubectl_timeout, {{"HOME", dir_->path()}}, stdin_data);
  REQUIRE(r.ok());
  return *r;
}

std::string DevApiServerProcess::KubectlOk(const std::vector<std::string>& args,
                                           std::string_view stdin_data) {
  CommandResult r = Kubectl(args, stdin_data);
  INFO("kubectl " << absl::StrJoin(args, " ") << " stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  return r.out;
}

void DevApiServerProcess::ApplyCrds(const std::vector<std::string>& crds,
                                    const kube::Resource& served) {
  for (const std::string& crd : crds) {
    KubectlOk({"apply", "-f", options_.source_dir + "/deploy/crds/sedna.io_" + crd + ".yaml"});
  }
  kube::RestClient* rest = client();
  REQUIRE(WaitFor([&] { return rest->IsServed(served).value_or(false); }, options_.served_timeout));
}

}  // namespace nereid::testing
