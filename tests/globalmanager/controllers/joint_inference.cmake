# JointInferenceService (JointInferenceService engineer)
nereid_test(gm_joint_inference_test LABEL unit TIMEOUT 300
  SOURCES joint_inference_workers_test.cc joint_inference_controller_test.cc
  LIBS nereid_gm_controller_test_env nereid_gm_controllers nereid_fakes)

# S3 in worker pods: storage-initializer and credential env.
nereid_test(gm_worker_s3_test LABEL unit SOURCES worker_s3_test.cc LIBS nereid_gm_controllers)
