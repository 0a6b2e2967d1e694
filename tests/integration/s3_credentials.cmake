# S3 credentials end to end (issue 10, GM side): devapiserver + globalmanager + localcontroller over
# mTLS + s3rver, driven by kubectl.
if(NEREID_KUBECTL_BIN AND TARGET globalmanager AND TARGET localcontroller AND TARGET nereid_test_s3)
  nereid_test(gm_s3_credentials_test LABEL integration TIMEOUT 180
    SOURCES s3_credentials_test.cc
    LIBS nereid_test_support nereid_test_devapiserver nereid_test_certs nereid_test_s3
         nereid_lc_s3 nereid_s3 nereid_httplib nlohmann_json::nlohmann_json absl::strings)
  add_dependencies(gm_s3_credentials_test devapiserver globalmanager localcontroller)
  target_compile_definitions(gm_s3_credentials_test PRIVATE
    NEREID_DEVAPISERVER_BIN="$<TARGET_FILE:devapiserver>"
    NEREID_GM_BIN="$<TARGET_FILE:globalmanager>"
    NEREID_LC_BIN="$<TARGET_FILE:localcontroller>"
    NEREID_KUBECTL="${NEREID_KUBECTL_BIN}"
    NEREID_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  set_tests_properties(gm_s3_credentials_test PROPERTIES FIXTURES_REQUIRED s3rver)
endif()
