# An LC SIGKILLed at each failpoint of a dataset scan (common/failpoint/failpoint.h)
# restarts to the right count, reported once — devapiserver + the globalmanager binary + a
# localcontroller binary over mTLS, driven by kubectl (needs kubectl; skipped like the tests above
# without it).
nereid_integration_test(lc_crash_test PROCESSES TIMEOUT 120
  SOURCES lc_crash_test.cc
  LIBS nereid_test_support nereid_test_devapiserver nereid_test_certs nereid_base nereid_httplib
       nlohmann_json::nlohmann_json absl::strings)
