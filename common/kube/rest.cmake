# The HTTP side of common/kube: kubeconfig / in-cluster config, the REST client over cpp-httplib
# (HTTP and HTTPS), streaming watches and the conflict-retry helper. A separate library so code
# that only needs the KubeClient interface does not pull in httplib and OpenSSL.
add_library(nereid_kube_rest
  config.cc
  http_transport.cc
  http_watch_stream.cc
  json_stream.cc
  rest_client.cc
  retry.cc
  token_source.cc
)
target_link_libraries(nereid_kube_rest PUBLIC nereid_kube nereid_httplib yaml-cpp absl::strings)
target_compile_definitions(nereid_kube_rest PRIVATE NEREID_VERSION="${PROJECT_VERSION}")
