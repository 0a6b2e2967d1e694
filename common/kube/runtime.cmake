# The client-go runtime on top of KubeClient: indexed cache, reflector, shared informers, listers,
# workqueue with rate limiters, controller runner, leader election and the event recorder.
add_library(nereid_kube_runtime
  controller.cc
  event_handler.cc
  event_recorder.cc
  indexer.cc
  lister.cc
  packed_object.cc
  rate_limiter.cc
  reflector.cc
  shared_informer.cc
  shared_informer_factory.cc
  leader_election.cc
  thread_name.cc
  workqueue.cc
)
target_link_libraries(nereid_kube_runtime PUBLIC nereid_kube absl::random_random Threads::Threads)
