# JointInferenceService (JointInferenceService engineer): part of nereid_gm_controllers (it uses
# the framework and is in the registry).
target_sources(nereid_gm_controllers PRIVATE joint_inference_children.cc
  joint_inference_controller.cc joint_inference_status.cc joint_inference_workers.cc)
target_link_libraries(nereid_gm_controllers PUBLIC nereid_gm_worker_template nereid_gm_placement)
