# VideoAnalyticsJob and ReidJob controllers on the fake API.
nereid_test(gm_inference_jobs_test LABEL unit TIMEOUT 180
  SOURCES inference_job_controller_test.cc
  LIBS nereid_gm_controller_test_env nereid_gm_controllers nereid_fakes)
