#include "common/s3/storage_initializer.h"

#include <catch2/catch.hpp>

namespace nereid::s3 {
namespace {

using Json = kube::Json;

ResolvedUrl Download(const std::string& url) {
  return ResolveMountUrl(MountUrl{.url = url, .download_by_initializer = true});
}

TEST_CASE("downloaded s3 and http urls land under /downloads/<host><path>") {
  const ResolvedUrl model = Download("s3://kubeedge/model/m.pb");
  CHECK(model.container_path == "/downloads/kubeedge/model/m.pb");
  CHECK(model.download_src == "s3://kubeedge/model/m.pb");
  CHECK(model.download_dst_dir == "/downloads/kubeedge/model/");
  CHECK(model.host_path.empty());
  CHECK(NeedsCredentialInInitializer(model));
  CHECK_FALSE(NeedsCredentialInWorkers(model));

  // A trailing '/' is dropped (Go's filepath.Join cleans the path).
  const ResolvedUrl dir = Download("s3://kubeedge/dataset/");
  CHECK(dir.container_path == "/downloads/kubeedge/dataset");
  CHECK(dir.download_dst_dir == "/downloads/kubeedge/");

  const ResolvedUrl http = Download("https://models.example:8443/a/b.tar.gz");
  CHECK(http.container_path == "/downloads/models.example:8443/a/b.tar.gz");
  CHECK_FALSE(NeedsCredentialInInitializer(http));
}

TEST_CASE("an s3 url that is not downloaded keeps its url and needs the credential in workers") {
  const ResolvedUrl output = ResolveMountUrl(MountUrl{.url = "s3://out/il/"});
  CHECK(output.container_path.empty());
  CHECK(output.download_src.empty());
  CHECK(NeedsCredentialInWorkers(output));
  CHECK(EnvValue({output}) == "s3://out/il/");
}

TEST_CASE("host paths mount their parent directory under /home/data") {
  const ResolvedUrl file = ResolveMountUrl(MountUrl{.url = "/data/ai_models/m3l/model.pb"});
  CHECK(file.host_path == "/data/ai_models/m3l/");
  CHECK(file.mount_path == "/home/data/data/ai_models/m3l/");
  CHECK(file.container_path == "/home/data/data/ai_models/m3l/model.pb");
  CHECK(file.download_src.empty());
  CHECK(HostPathVolume(file) ==
        Json::parse(R"({"name":"data-ai-models-m3lz",
                        "hostPath":{"path":"/data/ai_models/m3l/","type":"Directory"}})"));
  CHECK(HostPathMount(file) ==
        Json::parse(
            R"({"name":"data-ai-models-m3lz","mountPath":"/home/data/data/ai_models/m3l/"})"));

  const ResolvedUrl dir = ResolveMountUrl(MountUrl{.url = "/data/set", .is_dir = true});
  CHECK(dir.host_path == "/data/set");
  CHECK(dir.container_path == "/home/data/data/set");

  // enable_if_host_path drops a remote url entirely.
  const ResolvedUrl remote =
      ResolveMountUrl(MountUrl{.url = "s3://b/k", .enable_if_host_path = true});
  CHECK(remote.disabled);
  CHECK(EnvValue({remote}).empty());
}

TEST_CASE("an indirect host-path index is downloaded with '@' before its destination") {
  const ResolvedUrl index = ResolveMountUrl(
      MountUrl{.url = "/data/il/dataIndex.txt", .download_by_initializer = true, .indirect = true});
  CHECK(index.download_src == "/home/data/data/il/dataIndex.txt");
  CHECK(index.container_path == "/downloads/data/il/dataIndex.txt");
  CHECK(index.download_dst_dir == "/downloads/data/il/");
  CHECK(NeedsCredentialInInitializer(index));
  const std::vector<ResolvedUrl> urls = {Download("s3://kubeedge/model/m.pb"), index};
  CHECK(InitializerArgs(urls) ==
        std::vector<std::string>{"s3://kubeedge/model/m.pb", "/downloads/kubeedge/model/",
                                 "/home/data/data/il/dataIndex.txt", "@/downloads/data/il/"});
}

TEST_CASE("several urls of one env var are joined by ';'") {
  const std::vector<ResolvedUrl> urls = {Download("s3://b/m1.pb"), Download("s3://b/m2.pb"),
                                         ResolveMountUrl(MountUrl{.url = "/models/m3.pb"})};
  const std::string value = EnvValue(urls);
  CHECK(value == "/downloads/b/m1.pb;/downloads/b/m2.pb;/home/data/models/m3.pb");
  CHECK(SplitUrls(value).size() == 3);
  CHECK(SplitUrls(";a;;b;") == std::vector<std::string>{"a", "b"});
}

TEST_CASE("ConvertK8sValidName as Sedna's ConvertK8SValidName") {
  CHECK(ConvertK8sValidName("/data/ai_models/m3l/") == "data-ai-models-m3lz");
  CHECK(ConvertK8sValidName("/A//B__c") == "a-b-c");
  CHECK(ConvertK8sValidName("///") == "");
  CHECK(ConvertK8sValidName(std::string(100, 'x')).size() == 63);
}

TEST_CASE("the credential env refers to the Secret; literal values only when asked for") {
  CredentialSource source;
  source.secret_name = "mysecret";
  source.credential = Credential{"minio:9000", false, "AKID", "VERYSECRET"};
  const Json env = CredentialEnv(source);
  CHECK(env == Json::parse(R"([
    {"name":"S3_ENDPOINT_URL","value":"http://minio:9000"},
    {"name":"ACCESS_KEY_ID","valueFrom":{"secretKeyRef":{"name":"mysecret","key":"ACCESS_KEY_ID"}}},
    {"name":"SECRET_ACCESS_KEY",
     "valueFrom":{"secretKeyRef":{"name":"mysecret","key":"SECRET_ACCESS_KEY"}}}])"));
  CHECK(env.dump().find("VERYSECRET") == std::string::npos);
  source.literal_values = true;
  CHECK(CredentialEnv(source)[2] ==
        Json::parse(R"({"name":"SECRET_ACCESS_KEY","value":"VERYSECRET"})"));
}

TEST_CASE("one pod, one Secret") {
  CHECK(*SinglePodSecret({"", "a", "a"}) == "a");
  CHECK(SinglePodSecret({}).value().empty());
  auto two = SinglePodSecret({"a", "b"});
  REQUIRE_FALSE(two.ok());
  CHECK(two.status().code() == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("the storage-initializer container has Sedna's shape") {
  const ResolvedUrl index = ResolveMountUrl(
      MountUrl{.url = "/data/il/dataIndex.txt", .download_by_initializer = true, .indirect = true});
  const std::vector<ResolvedUrl> urls = {Download("s3://kubeedge/model/m.pb"), index};
  CredentialSource source{"mysecret", Credential{"minio:9000", true, "", ""}, false};
  const Json container = InitializerContainer(urls, CredentialEnv(source), InitializerOptions{});
  CHECK(container["name"] == "storage-initializer");
  CHECK(container["image"] == "kubeedge/sedna-storage-initializer:v0.3.0");
  CHECK(container["imagePullPolicy"] == "IfNotPresent");
  CHECK(container["resources"] == Json::parse(R"({"limits":{"cpu":"1","memory":"1Gi"}})"));
  CHECK(container["args"].size() == 4);
  CHECK(container["env"].size() == 4);
  CHECK(container["env"][3] == Json::parse(R"({"name":"INDIRECT_URL_MARK","value":"@"})"));
  CHECK(container["volumeMounts"] == Json::parse(R"([
    {"name":"sedna-storage-initializer","mountPath":"/downloads"},
    {"name":"data-ilz","mountPath":"/home/data/data/il/"}])"));
  CHECK(DownloadsVolume() == Json::parse(R"({"name":"sedna-storage-initializer","emptyDir":{}})"));
  CHECK(WorkerDownloadsMount()["readOnly"] == true);

  InitializerOptions custom;
  custom.image = "registry.local/storage-initializer:v1";
  CHECK(InitializerContainer(urls, Json::array(), custom)["image"] == custom.image);
}

}  // namespace
}  // namespace nereid::s3
