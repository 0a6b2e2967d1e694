# JointInferenceService (JointInferenceService engineer): devapiserver + kubectl + the JI
# controller in-process.
nereid_integration_test(joint_inference_integration_test TIMEOUT 180
  SOURCES joint_inference_test.cc
  LIBS nereid_gm_controllers nereid_kube_rest nereid_test_support nereid_test_devapiserver)
