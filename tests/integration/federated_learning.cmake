# FederatedLearningJob (FL engineer): devapiserver + kubectl + the FL controller in-process.
nereid_integration_test(federated_learning_integration_test TIMEOUT 180
  SOURCES federated_learning_test.cc
  LIBS nereid_gm_controllers nereid_kube_rest nereid_test_support nereid_test_devapiserver)
