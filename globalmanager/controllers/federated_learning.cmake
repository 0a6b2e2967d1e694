# FederatedLearningJob (FL engineer): plan (pure), status mapping (pure) and the controller on
# the common job library; part of nereid_gm_controllers (it uses the framework and registry).
target_sources(nereid_gm_controllers PRIVATE federated_learning_controller.cc
  federated_learning_plan.cc federated_learning_status.cc)
target_link_libraries(nereid_gm_controllers PUBLIC nereid_gm_placement nereid_gm_worker_template
  nereid_job)
