# Fault injection on the GM <-> LC link: devapiserver + the globalmanager binary + a
# localcontroller binary with a FaultProxy between them (blackhole beyond the keepalive, repeated
# resets), driven by kubectl (needs kubectl; skipped like the tests above without it).
nereid_integration_test(edge_faults_test PROCESSES TIMEOUT 240
  SOURCES edge_faults_test.cc
  LIBS nereid_test_support nereid_test_devapiserver nereid_test_certs nereid_httplib
       nlohmann_json::nlohmann_json absl::strings)
