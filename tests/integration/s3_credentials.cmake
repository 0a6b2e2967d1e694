# S3 credentials end to end (GM side): devapiserver + globalmanager + localcontroller over
# mTLS + s3rver, driven by kubectl.
if(TARGET nereid_test_s3)
  nereid_integration_test(gm_s3_credentials_test PROCESSES TIMEOUT 360
    SOURCES s3_credentials_test.cc
    LIBS nereid_test_support nereid_test_devapiserver nereid_test_certs nereid_test_s3
         nereid_lc_s3 nereid_s3 nereid_httplib nlohmann_json::nlohmann_json absl::strings)
  if(TARGET gm_s3_credentials_test)
    set_tests_properties(gm_s3_credentials_test PROPERTIES FIXTURES_REQUIRED s3rver)
  endif()
endif()
