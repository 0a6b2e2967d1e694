# The multi-edge inference service kinds: FeatureExtractionService, ObjectSearchService,
# ObjectTrackingService (one controller each on the shared MultiEdgeServiceController; the last two
# are one class template, tracking_pipeline_controller.h); part of
# nereid_gm_controllers (they use the framework and are in the registry).
target_sources(nereid_gm_controllers PRIVATE
  feature_extraction_controller.cc
  multi_edge_service.cc
  multi_edge_status.cc
  multi_edge_workers.cc
  tracking_pipeline_controller.cc
  worker_placements.cc)
target_link_libraries(nereid_gm_controllers PUBLIC nereid_gm_worker_template nereid_gm_placement)
