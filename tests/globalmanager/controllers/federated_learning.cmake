# FederatedLearningJob (FL engineer): plan/status (pure) and the controller on the fake API.
nereid_test(gm_federated_learning_test LABEL unit TIMEOUT 120
  SOURCES federated_learning_controller_test.cc federated_learning_plan_test.cc
  LIBS nereid_gm_controller_test_env nereid_gm_controllers nereid_fakes)
