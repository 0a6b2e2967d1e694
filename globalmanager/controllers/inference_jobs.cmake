# VideoAnalyticsJob and ReidJob (Sedna's multi-edge inference jobs) on the common job library;
# part of nereid_gm_controllers (they use the framework and are in the registry).
target_sources(nereid_gm_controllers PRIVATE inference_job_controller.cc inference_job_status.cc
  reid_job_controller.cc video_analytics_controller.cc)
target_link_libraries(nereid_gm_controllers PUBLIC nereid_gm_placement nereid_gm_worker_template
  nereid_job)
