# VideoAnalyticsJob and ReidJob lifecycles: devapiserver + the globalmanager binary + a
# localcontroller binary over mTLS, driven by kubectl (skipped like the tests above without it).
if(NEREID_KUBECTL_BIN AND TARGET globalmanager AND TARGET localcontroller)
  nereid_test(inference_jobs_integration_test LABEL integration TIMEOUT 180
    SOURCES inference_jobs_test.cc
    LIBS nereid_test_support nereid_test_devapiserver nereid_test_certs nereid_httplib
         nlohmann_json::nlohmann_json absl::strings)
  add_dependencies(inference_jobs_integration_test devapiserver globalmanager localcontroller)
  target_compile_definitions(inference_jobs_integration_test PRIVATE
    NEREID_DEVAPISERVER_BIN="$<TARGET_FILE:devapiserver>"
    NEREID_GM_BIN="$<TARGET_FILE:globalmanager>"
    NEREID_LC_BIN="$<TARGET_FILE:localcontroller>"
    NEREID_KUBECTL="${NEREID_KUBECTL_BIN}"
    NEREID_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
endif()
