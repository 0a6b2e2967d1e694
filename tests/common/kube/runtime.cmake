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
