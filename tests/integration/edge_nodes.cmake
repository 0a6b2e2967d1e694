# The fleet in kubectl: devapiserver + the globalmanager binary + two localcontroller binaries
# (mTLS), `kubectl get en` / `kubectl describe en` (needs kubectl; skipped like the tests above
# without it).
nereid_integration_test(edge_nodes_test PROCESSES TIMEOUT 120
  SOURCES edge_nodes_test.cc
  LIBS nereid_test_support nereid_test_devapiserver nereid_test_certs nereid_base nereid_httplib
       nlohmann_json::nlohmann_json absl::strings)
