# VideoAnalyticsJob and ReidJob lifecycles: devapiserver + the globalmanager binary + a
# localcontroller binary over mTLS, driven by kubectl (skipped like the tests above without it).
nereid_integration_test(inference_jobs_integration_test PROCESSES TIMEOUT 180
  SOURCES inference_jobs_test.cc
  LIBS nereid_test_support nereid_test_devapiserver nereid_test_certs nereid_httplib
       nlohmann_json::nlohmann_json absl::strings)
