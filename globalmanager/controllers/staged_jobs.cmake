# The controllers (one class on the common job library, a StagedKind per kind); part of
# nereid_gm_controllers (they use the framework and the registry lists them).
target_sources(nereid_gm_controllers PRIVATE stage_data.cc staged_job.cc staged_job_controller.cc
  incremental_learning_controller.cc lifelong_learning_controller.cc)
target_link_libraries(nereid_gm_controllers PUBLIC nereid_gm_stage_machine nereid_gm_placement
  nereid_gm_worker_template nereid_job)
