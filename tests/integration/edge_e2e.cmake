# End to end: devapiserver + the globalmanager binary + two localcontroller binaries
# over mTLS, driven by kubectl; GM restart (LC outbox), LC SIGKILL, refused identities, a worker
# report through an LC's REST (needs kubectl; skipped like the tests above without it).
nereid_integration_test(edge_e2e_test PROCESSES TIMEOUT 180
  SOURCES edge_e2e_test.cc
  LIBS nereid_test_support nereid_test_devapiserver nereid_test_certs nereid_edge_test_node
       nereid_httplib nlohmann_json::nlohmann_json absl::strings)
