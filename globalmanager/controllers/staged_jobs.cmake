# The controllers (one class on the common job library, a StagedKind per kind); part of
# nereid_gm_controllers (they use the framework and the registry lists them).
target_sources(nereid_gm_controllers PRIVATE stage_data.cc staged_job.cc staged_job_controller.cc
  staged_job_edge.cc staged_job_pass.cc staged_job_reports.cc staged_job_status.cc
  incremental_learning_controller.cc lifelong_learning_controller.cc)
target_link_libraries(nereid_gm_controllers PUBLIC nereid_gm_stage_machine nereid_gm_placement
  nereid_gm_worker_template nereid_job)
