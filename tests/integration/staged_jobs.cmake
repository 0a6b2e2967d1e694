# An IncrementalLearningJob's round end to end — devapiserver + the globalmanager
# binary + a localcontroller binary over mTLS, driven by kubectl (needs kubectl; skipped like the
# tests above without it).
nereid_integration_test(staged_jobs_integration_test PROCESSES TIMEOUT 180
  SOURCES staged_jobs_test.cc
  LIBS nereid_test_support nereid_test_devapiserver nereid_test_certs nereid_httplib
       nlohmann_json::nlohmann_json absl::strings)
