# Tests of the kube runtime (informers, workqueue, controller, leader election, events) and of the
# fake KubeClient they run against. Time-driven behaviour runs on a FakeClock.
set(NEREID_KUBE_RUNTIME_TEST_LIBS nereid_kube_runtime nereid_fakes)
nereid_test(kube_workqueue_test SOURCES workqueue_test.cc LIBS ${NEREID_KUBE_RUNTIME_TEST_LIBS})
nereid_test(kube_fake_client_test SOURCES fake_kube_client_test.cc
  LIBS ${NEREID_KUBE_RUNTIME_TEST_LIBS})
nereid_test(kube_indexer_test SOURCES indexer_test.cc LIBS ${NEREID_KUBE_RUNTIME_TEST_LIBS})
nereid_test(kube_reflector_test SOURCES reflector_test.cc LIBS ${NEREID_KUBE_RUNTIME_TEST_LIBS})
nereid_test(kube_informer_test SOURCES informer_test.cc LIBS ${NEREID_KUBE_RUNTIME_TEST_LIBS})
nereid_test(kube_controller_test SOURCES controller_test.cc LIBS ${NEREID_KUBE_RUNTIME_TEST_LIBS})
nereid_test(kube_leader_election_test SOURCES leader_election_test.cc
  LIBS ${NEREID_KUBE_RUNTIME_TEST_LIBS})
nereid_test(kube_event_recorder_test SOURCES event_recorder_test.cc
  LIBS ${NEREID_KUBE_RUNTIME_TEST_LIBS})

# Integration: the runtime over the real RestClient against a devapiserver process, and two
# lease_candidate processes contending for a Lease.
if(TARGET devapiserver AND TARGET nereid_kube_rest AND TARGET nereid_test_support)
  add_executable(lease_candidate lease_candidate_main.cc)
  target_link_libraries(lease_candidate PRIVATE nereid_kube_runtime nereid_kube_rest)
  nereid_test(kube_runtime_integration_test LABEL integration TIMEOUT 180
    SOURCES runtime_integration_test.cc
    LIBS nereid_kube_runtime nereid_kube_rest nereid_fakes nereid_test_support)
  add_dependencies(kube_runtime_integration_test devapiserver lease_candidate)
  target_compile_definitions(kube_runtime_integration_test PRIVATE
    NEREID_DEVAPISERVER_BIN="$<TARGET_FILE:devapiserver>"
    NEREID_LEASE_CANDIDATE_BIN="$<TARGET_FILE:lease_candidate>")
endif()
