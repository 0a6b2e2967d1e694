# GM fan-out: a real globalmanager (mTLS) and devapiserver, N simulated edge nodes from one process
# (edge_simulator/), create→ACK latency, reports/s, GM VmHWM (edge_fanout_bench.cc, RESULTS.md).
add_subdirectory(edge_simulator)
if(TARGET nereid_test_support)
  add_executable(edge_fanout_bench edge_fanout_bench.cc edge_shards_phases.cc fleet_convergence.cc
    gm_restart_storm.cc)
  target_link_libraries(edge_fanout_bench PRIVATE nereid_bench_setup nereid_edge_simulator
    nereid_test_support
    nereid_kube_rest nereid_api nereid_net nereid_httplib nlohmann_json::nlohmann_json
    absl::str_format)
  add_dependencies(edge_fanout_bench globalmanager devapiserver)
  # Smoke run (ctest -L bench): 15 nodes x 2 datasets through every phase; checks every ACK,
  # report and status, not the targets.
  add_test(NAME edge_fanout_bench_smoke
    COMMAND edge_fanout_bench --devapiserver $<TARGET_FILE:devapiserver>
      --globalmanager $<TARGET_FILE:globalmanager> --gen-certs ${PROJECT_SOURCE_DIR}/scripts/gen-certs.sh
      --crd ${PROJECT_SOURCE_DIR}/deploy/crds
      --nodes 15 --datasets-per-node 2 --baseline-writes 30 --restart --timeout 1m)
  set_tests_properties(edge_fanout_bench_smoke PROPERTIES LABELS bench TIMEOUT 120)
endif()
