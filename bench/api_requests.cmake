# API requests per object: a real globalmanager and devapiserver (which counts requests by verb,
# resource and user agent), N objects of --kind (JointInferenceServices by default) created, then a
# quiet window (api_requests_bench.cc, RESULTS.md).
if(TARGET nereid_test_support)
  add_executable(api_requests_bench api_requests_bench.cc)
  target_link_libraries(api_requests_bench PRIVATE nereid_bench_setup nereid_test_support
    nereid_kube_rest nereid_api nereid_httplib nlohmann_json::nlohmann_json absl::str_format)
  add_dependencies(api_requests_bench globalmanager devapiserver)
  # Smoke run (ctest -L bench): 10 services, a 1 s resync and a 5 s quiet window (so it spans
  # resync passes); checks that every child and status appears, not the targets.
  add_test(NAME api_requests_bench_smoke
    COMMAND api_requests_bench --devapiserver $<TARGET_FILE:devapiserver>
      --globalmanager $<TARGET_FILE:globalmanager> --crd ${PROJECT_SOURCE_DIR}/deploy/crds
      --services 10 --resync 1s --quiet 5s --settle 1s --timeout 1m)
  set_tests_properties(api_requests_bench_smoke PROPERTIES LABELS bench TIMEOUT 180)
endif()
