# FeatureExtractionService, ObjectSearchService, ObjectTrackingService: devapiserver + kubectl +
# their controllers in-process.
nereid_integration_test(multi_edge_integration_test TIMEOUT 240
  SOURCES multi_edge_test.cc
  LIBS nereid_gm_controllers nereid_kube_rest nereid_test_support nereid_test_devapiserver)
