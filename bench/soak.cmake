# Soak: GM + devapiserver + simulated edge nodes + real LCs under continuous churn, sampled every
# interval; fails on growth that does not level off (soak/soak.cc, RESULTS.md).
if(TARGET nereid_test_support AND TARGET nereid_edge_simulator)
  add_library(nereid_soak_growth soak/growth_check.cc)
  add_executable(soak soak/soak.cc soak/soak_cluster.cc soak/soak_sampler.cc
    soak/soak_workload.cc)
  target_link_libraries(soak PRIVATE nereid_soak_growth nereid_bench_setup nereid_edge_simulator
    nereid_test_support nereid_kube_rest nereid_api nereid_net nereid_httplib
    nlohmann_json::nlohmann_json absl::str_format absl::strings)
  add_dependencies(soak globalmanager devapiserver localcontroller)
  if(NEREID_BUILD_TESTS)
    add_executable(growth_check_test soak/growth_check_test.cc)
    target_link_libraries(growth_check_test PRIVATE nereid_catch_main nereid_soak_growth)
    add_test(NAME growth_check_test COMMAND growth_check_test)
    set_tests_properties(growth_check_test PROPERTIES LABELS unit TIMEOUT 30)
    # Smoke (ctest -L bench): 2 minutes, a sample every 5 s (8 per third for the verdict).
    add_test(NAME soak_smoke
      COMMAND soak --devapiserver $<TARGET_FILE:devapiserver>
        --globalmanager $<TARGET_FILE:globalmanager>
        --localcontroller $<TARGET_FILE:localcontroller>
        --gen-certs ${PROJECT_SOURCE_DIR}/scripts/gen-certs.sh
        --crd ${PROJECT_SOURCE_DIR}/deploy/crds --duration 2m --interval 5s)
    set_tests_properties(soak_smoke PROPERTIES LABELS bench TIMEOUT 300)
  endif()
endif()
