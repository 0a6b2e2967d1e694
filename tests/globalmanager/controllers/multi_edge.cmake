# The multi-edge inference service controllers: FeatureExtractionService, ObjectSearchService,
# ObjectTrackingService.
nereid_test(gm_multi_edge_test LABEL unit TIMEOUT 300
  SOURCES feature_extraction_controller_test.cc object_search_controller_test.cc
          object_tracking_controller_test.cc
  LIBS nereid_gm_controller_test_env nereid_gm_controllers nereid_fakes)
