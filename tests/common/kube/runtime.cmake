# Tests of the kube runtime (informers, workqueue, controller, leader election, events) and of the
# fake KubeClient they run against. Time-driven behaviour runs on a FakeClock.
set(NEREID_KUBE_RUNTIME_TEST_LIBS nereid_kube_runtime nereid_fakes)
nereid_test(kube_workqueue_test SOURCES workqueue_test.cc LIBS ${NEREID_KUBE_RUNTIME_TEST_LIBS})
