# FederatedLearningJob (FL engineer): devapiserver + kubectl + the FL controller in-process.
if(NEREID_KUBECTL_BIN)
  nereid_test(federated_learning_integration_test LABEL integration TIMEOUT 180
    SOURCES federated_learning_test.cc
    LIBS nereid_gm_controllers nereid_kube_rest nereid_test_support nereid_test_devapiserver)
  add_dependencies(federated_learning_integration_test devapiserver)
  target_compile_definitions(federated_learning_integration_test PRIVATE
    NEREID_DEVAPISERVER_BIN="$<TARGET_FILE:devapiserver>"
    NEREID_KUBECTL="${NEREID_KUBECTL_BIN}"
    NEREID_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
endif()
