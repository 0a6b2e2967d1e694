# End to end: devapiserver + the globalmanager binary + two localcontroller binaries
# over mTLS, driven by kubectl; GM restart (LC outbox), LC SIGKILL, refused identities, a worker
# report through an LC's REST (needs kubectl; skipped like the tests above without it).
if(NEREID_KUBECTL_BIN AND TARGET globalmanager AND TARGET localcontroller)
  nereid_test(edge_e2e_test LABEL integration TIMEOUT 180
    SOURCES edge_e2e_test.cc
    LIBS nereid_test_support nereid_test_devapiserver nereid_test_certs nereid_edge_test_node nereid_httplib nlohmann_json::nlohmann_json
         absl::strings)
  add_dependencies(edge_e2e_test devapiserver globalmanager localcontroller)
  target_compile_definitions(edge_e2e_test PRIVATE
    NEREID_DEVAPISERVER_BIN="$<TARGET_FILE:devapiserver>"
    NEREID_GM_BIN="$<TARGET_FILE:globalmanager>"
    NEREID_LC_BIN="$<TARGET_FILE:localcontroller>"
    NEREID_KUBECTL="${NEREID_KUBECTL_BIN}"
    NEREID_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
endif()
