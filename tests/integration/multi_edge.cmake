# FeatureExtractionService, ObjectSearchService, ObjectTrackingService: devapiserver + kubectl +
# their controllers in-process.
if(NEREID_KUBECTL_BIN)
  nereid_test(multi_edge_integration_test LABEL integration TIMEOUT 240
    SOURCES multi_edge_test.cc
    LIBS nereid_gm_controllers nereid_kube_rest nereid_test_support nereid_test_devapiserver)
  add_dependencies(multi_edge_integration_test devapiserver)
  target_compile_definitions(multi_edge_integration_test PRIVATE
    NEREID_DEVAPISERVER_BIN="$<TARGET_FILE:devapiserver>"
    NEREID_KUBECTL="${NEREID_KUBECTL_BIN}"
    NEREID_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
endif()
