# Tests for the HTTP side of common/kube (config, REST client, watch, TLS, conflict retry).
nereid_test(kube_rest_test
  SOURCES config_test.cc rest_client_test.cc rest_client_tls_test.cc watch_test.cc retry_test.cc
          test_certs.cc
  LIBS nereid_kube_rest)
