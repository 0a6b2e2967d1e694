# Fault injection on the GM <-> LC link (issue 12 §2): devapiserver + the globalmanager binary + a
# localcontroller binary with a FaultProxy between them (blackhole beyond the keepalive, repeated
# resets), driven by kubectl (needs kubectl; skipped like the tests above without it).
if(NEREID_KUBECTL_BIN AND TARGET globalmanager AND TARGET localcontroller)
  nereid_test(edge_faults_test LABEL integration TIMEOUT 240
    SOURCES edge_faults_test.cc
    LIBS nereid_test_support nereid_test_devapiserver nereid_test_certs nereid_httplib
         nlohmann_json::nlohmann_json absl::strings)
  add_dependencies(edge_faults_test devapiserver globalmanager localcontroller)
  target_compile_definitions(edge_faults_test PRIVATE
    NEREID_DEVAPISERVER_BIN="$<TARGET_FILE:devapiserver>"
    NEREID_GM_BIN="$<TARGET_FILE:globalmanager>"
    NEREID_LC_BIN="$<TARGET_FILE:localcontroller>"
    NEREID_KUBECTL="${NEREID_KUBECTL_BIN}"
    NEREID_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
endif()
