// lease_candidate: one leader-election candidate as its own process, for the integration test of
// two processes contending for a Lease.
//
//   lease_candidate KUBECONFIG NAMESPACE LEASE IDENTITY
//
// Prints "leading" when it becomes the leader and "stopped" when it stops leading (one line
// each, flushed). SIGTERM/SIGINT stop it gracefully, releasing the lease; SIGKILL leaves the lease
// to expire.

#include <signal.h>

#include <cstdio>
#include <string>

#include "common/kube/config.h"
#include "common/kube/leader_election.h"
#include "common/kube/rest_client.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s KUBECONFIG NAMESPACE LEASE IDENTITY\n", argv[0]);
    return 2;
  }
  // Block the stop signals before any thread starts, then wait for one of them below.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto config = nereid::kube::LoadKubeConfigFile(argv[1]);
  if (!config.ok()) {
    std::fprintf(stderr, "kubeconfig: %s\n", config.status().ToString().c_str());
    return 1;
  }
  auto client = nereid::kube::RestClient::Create(*config);
  if (!client.ok()) {
    std::fprintf(stderr, "client: %s\n", client.status().ToString().c_str());
    return 1;
  }
  nereid::kube::LeaderElectionConfig election;
  election.lease_namespace = argv[2];
  election.lease_name = argv[3];
  election.identity = argv[4];
  election.on_started_leading = [] {
    std::printf("leading\n");
    std::fflush(stdout);
  };
  election.on_stopped_leading = [] {
    std::printf("stopped\n");
    std::fflush(stdout);
  };
  auto elector = nereid::kube::LeaderElector::Create(client->get(), election);
  if (!elector.ok()) {
    std::fprintf(stderr, "elector: %s\n", elector.status().ToString().c_str());
    return 1;
  }
  (*elector)->Start();
  int signal = 0;
  sigwait(&stop_signals, &signal);
  (*elector)->Stop();
  return 0;
}
