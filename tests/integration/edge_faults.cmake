# Fault injection on the GM <-> LC link: devapiserver + the globalmanager binary + a
# localcontroller binary with a FaultProxy between them (blackhole beyond the keepalive, repeated
# resets), driven by kubectl (needs kubectl; skipped like the tests above without it).
nereid_integration_test(edge_faults_test PROCESSES TIMEOUT 240
  SOURCES edge_faults_test.cc
  LIBS nereid_test_support nereid_test_devapiserver nereid_test_certs nereid_httplib
       nlohmann_json::nlohmann_json absl::strings)

# The GM's API server answering 429 (Retry-After) and 500 for a while, then a watch 410 Gone
# (devapiserver --enable-debug-faults): bounded request rate, one relist per informer, converged.
nereid_integration_test(api_faults_test PROCESSES TIMEOUT 180
  SOURCES api_faults_test.cc
  LIBS nereid_test_support nereid_test_devapiserver nereid_test_certs nereid_httplib
       nlohmann_json::nlohmann_json absl::strings)

# The LC's disk full while it writes its database (a file-size rlimit on the running process):
# /readyz says so, nothing corrupt, the count lands once space returns.
nereid_integration_test(lc_disk_full_test PROCESSES TIMEOUT 120
  SOURCES lc_disk_full_test.cc
  LIBS nereid_test_support nereid_test_devapiserver nereid_test_certs nereid_store nereid_httplib
       nlohmann_json::nlohmann_json absl::strings)
