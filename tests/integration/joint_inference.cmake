# JointInferenceService (JointInferenceService engineer): devapiserver + kubectl + the JI
# controller in-process.
if(NEREID_KUBECTL_BIN)
  nereid_test(joint_inference_integration_test LABEL integration TIMEOUT 180
    SOURCES joint_inference_test.cc
    LIBS nereid_gm_controllers nereid_kube_rest nereid_test_support nereid_test_devapiserver)
  add_dependencies(joint_inference_integration_test devapiserver)
  target_compile_definitions(joint_inference_integration_test PRIVATE
    NEREID_DEVAPISERVER_BIN="$<TARGET_FILE:devapiserver>"
    NEREID_KUBECTL="${NEREID_KUBECTL_BIN}"
    NEREID_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
endif()
