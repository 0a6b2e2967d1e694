#pragma once

// What Sedna's GM puts into a worker pod for its model/dataset/output URLs (Sedna's
// runtime/storage_initializer_injector.go), as pure functions, so a controller builds the same
// env values, volumes and `storage-initializer` init container that Sedna's worker images and its
// initializer image expect:
//
//   url                          download  env value                     volumes
//   s3://b/k, http(s)://h/p      yes       /downloads/<host><path>       emptyDir at /downloads
//   s3://..., http(s)://...      no        the url as it is              -
//   /host/dir/file               -         /home/data/host/dir/file      hostPath /host/dir/ at
//                                                                         /home/data/host/dir/
//   /host/index (indirect)       yes       /downloads/host/index         hostPath into the init
//                                                                         container only
//
// Several URLs of one env var are joined by ';'. The init container gets flat "src dstDir" pairs
// as args (dstDir prefixed with '@' for an indirect index), INDIRECT_URL_MARK=@ and the S3
// credential env. Nereid differs from Sedna only where Sedna leaks: the credential env refers to
// the Secret (valueFrom.secretKeyRef) instead of copying its values, unless the caller asks for
// literal values (old edge runtimes that cannot resolve Secret references), and two different
// Secrets for one pod are an error instead of "the first silently wins".

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/kube/object.h"
#include "common/s3/credential.h"

namespace nereid::s3 {

inline constexpr std::string_view kInitializerContainerName = "storage-initializer";
inline constexpr std::string_view kDefaultInitializerImage =
    "kubeedge/sedna-storage-initializer:v0.3.0";
inline constexpr std::string_view kDownloadsVolumeName = "sedna-storage-initializer";
inline constexpr std::string_view kDownloadsPath = "/downloads";
inline constexpr std::string_view kHostPathPrefix = "/home/data";
inline constexpr std::string_view kIndirectUrlMark = "@";
inline constexpr std::string_view kIndirectUrlMarkEnv = "INDIRECT_URL_MARK";
inline constexpr std::string_view kUrlSeparator = ";";
inline constexpr std::string_view kDefaultVolumeName = "sedna-default-volume-name";

// One URL a worker reads or writes (Sedna's MountURL before Parse).
struct MountUrl {
  std::string url;
  bool download_by_initializer = false;  // models and datasets: yes; outputs, aggDataPath: no
  bool indirect = false;                 // a host-path index file whose lines are downloaded
  bool is_dir = false;                   // a host-path directory: mount it, not its parent
  bool enable_if_host_path = false;      // ignore the URL unless it is a host path
};

// What Sedna's MountURL.Parse derives from a MountUrl.
struct ResolvedUrl {
  std::string url;
  bool disabled = false;         // enable_if_host_path and not a host path: contributes nothing
  std::string container_path;    // where the worker finds it; empty: the env keeps `url`
  std::string mount_path;        // a hostPath volume's mount path (or /downloads)
  std::string host_path;         // the hostPath volume's path; empty: no hostPath volume
  std::string download_src;      // init container source; empty: not downloaded
  std::string download_dst_dir;  // init container destination directory (ends in '/')
  bool indirect = false;
  bool is_s3 = false;
  friend bool operator==(const ResolvedUrl&, const ResolvedUrl&) = default;
};

ResolvedUrl ResolveMountUrl(const MountUrl& mount);

// The env value of one mount: each enabled URL's container path (or the URL itself), joined by ';'.
std::string EnvValue(const std::vector<ResolvedUrl>& urls);
// Splits such a value back into its URLs (empty parts dropped).
std::vector<std::string> SplitUrls(std::string_view value);

// Whether a URL needs the Secret's credentials in a container: in the init container when it is
// downloaded (s3, or an indirect index), in every worker container when it is an s3 URL the worker
// accesses itself (outputs, FL aggDataPath).
bool NeedsCredentialInInitializer(const ResolvedUrl& url);
bool NeedsCredentialInWorkers(const ResolvedUrl& url);

// The init container's args: "src dstDir" pairs in order ('@' before an indirect dstDir). Empty
// when nothing is downloaded (then no init container is added).
std::vector<std::string> InitializerArgs(const std::vector<ResolvedUrl>& urls);

// Sedna's ConvertK8SValidName: lower case, each run outside [a-z0-9-] becomes one '-' (never
// leading), at most 63 characters, a trailing '-' becomes 'z'; "" when nothing is left (the caller
// then uses kDefaultVolumeName).
std::string ConvertK8sValidName(std::string_view name);

// Where a credential env takes its values from.
struct CredentialSource {
  std::string secret_name;
  Credential credential;  // endpoint/use_https always used; the keys only with literal_values
  // Copies the key values into the env (Sedna's behaviour, for edge runtimes that cannot resolve
  // secretKeyRef): weaker, since the values then sit in the Pod/Deployment spec.
  bool literal_values = false;
};

// [S3_ENDPOINT_URL (value), ACCESS_KEY_ID, SECRET_ACCESS_KEY (valueFrom.secretKeyRef, or values)].
kube::Json CredentialEnv(const CredentialSource& source);

// The one Secret a pod's credential env may come from: the distinct non-empty names of `names`.
// "" when none; FailedPrecondition naming both when there are two (Sedna silently used the first).
absl::StatusOr<std::string> SinglePodSecret(const std::vector<std::string>& names);

struct InitializerOptions {
  std::string image = std::string(kDefaultInitializerImage);
};

// The `storage-initializer` container: image, IfNotPresent, args, limits cpu 1 / memory 1Gi,
// terminationMessagePolicy FallbackToLogsOnError, env = credential_env + INDIRECT_URL_MARK=@,
// /downloads mounted read-write, then a mount of each indirect URL's hostPath volume.
kube::Json InitializerContainer(const std::vector<ResolvedUrl>& urls,
                                const kube::Json& credential_env,
                                const InitializerOptions& options);

// The emptyDir volume the init container fills, and its read-only mount in every worker container.
kube::Json DownloadsVolume();
kube::Json WorkerDownloadsMount();

// The hostPath volume (type Directory) of a host-path URL, named by ConvertK8sValidName, and its
// mount at `mount_path`. Empty JSON for a URL without a host path.
kube::Json HostPathVolume(const ResolvedUrl& url);
kube::Json HostPathMount(const ResolvedUrl& url);

}  // namespace nereid::s3
