# Two GM processes on one Lease and an LC given the standby's address: the owner redirect takes
# the node to the leader, and the node follows the Lease when the leader stops (needs kubectl;
# skipped like the tests above without it); with --edge-shards, nodes follow their owner between
# two live replicas.
nereid_integration_test(gm_replicas_test PROCESSES TIMEOUT 240
  SOURCES gm_replicas_test.cc
  LIBS nereid_gm_edgehub nereid_test_support nereid_test_devapiserver nereid_test_certs nereid_httplib
       nlohmann_json::nlohmann_json absl::strings)
