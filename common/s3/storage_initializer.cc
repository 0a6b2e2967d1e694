#include "common/s3/storage_initializer.h"

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/s3/s3_url.h"
#include "common/strings/absl_compat.h"

namespace nereid::s3 {
namespace {

struct UrlParts {
  std::string scheme;  // lower case; "" for a host path
  std::string host;
  std::string path;
};

// The parts Go's url.Parse gives Sedna: scheme (lower-cased), host and path.
UrlParts SplitUrl(std::string_view url) {
  UrlParts parts;
  const size_t sep = url.find("://");
  if (sep == std::string_view::npos) {
    parts.path = std::string(url.substr(0, url.find_first_of("?#")));
    return parts;
  }
  parts.scheme = absl::AsciiStrToLower(ToAbsl(url.substr(0, sep)));
  std::string_view rest = url.substr(sep + 3);
  rest = rest.substr(0, rest.find_first_of("?#"));
  const size_t slash = rest.find('/');
  std::string_view host = rest.substr(0, slash);
  if (const size_t at = host.rfind('@'); at != std::string_view::npos) host = host.substr(at + 1);
  parts.host = std::string(host);
  if (slash != std::string_view::npos) parts.path = std::string(rest.substr(slash));
  return parts;
}

// Go's path.Clean for slash-separated paths.
std::string CleanPath(std::string_view path) {
  if (path.empty()) return ".";
  const bool rooted = path.front() == '/';
  std::vector<absl::string_view> out;
  for (absl::string_view part : absl::StrSplit(ToAbsl(path), '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!out.empty() && out.back() != "..") {
        out.pop_back();
      } else if (!rooted) {
        out.push_back(part);
      }
      continue;
    }
    out.push_back(part);
  }
  std::string joined = absl::StrJoin(out, "/");
  if (rooted) return absl::StrCat("/", joined);
  return joined.empty() ? "." : joined;
}

std::string JoinPath(std::string_view a, std::string_view b) {
  return CleanPath(absl::StrCat(ToAbsl(a), "/", ToAbsl(b)));
}

// Go's filepath.Split: the directory part, up to and including the last '/'.
std::string DirOf(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? "" : std::string(path.substr(0, slash + 1));
}

std::string VolumeName(const ResolvedUrl& url) {
  std::string name = ConvertK8sValidName(url.host_path);
  return name.empty() ? std::string(kDefaultVolumeName) : name;
}

kube::Json EnvEntry(std::string_view name, std::string_view value) {
  return kube::Json{{"name", std::string(name)}, {"value", std::string(value)}};
}

kube::Json SecretKeyEnv(std::string_view name, const std::string& secret) {
  return kube::Json{{"name", std::string(name)},
                    {"valueFrom",
                     {{"secretKeyRef", {{"name", secret}, {"key", std::string(name)}}}}}};
}

}  // namespace

ResolvedUrl ResolveMountUrl(const MountUrl& mount) {
  ResolvedUrl resolved;
  resolved.url = mount.url;
  resolved.indirect = mount.indirect;
  const UrlParts parts = SplitUrl(mount.url);
  resolved.is_s3 = parts.scheme == kScheme;
  if (mount.download_by_initializer &&
      (parts.scheme == "s3" || parts.scheme == "http" || parts.scheme == "https")) {
    resolved.mount_path = std::string(kDownloadsPath);
    resolved.container_path = JoinPath(kDownloadsPath, parts.host + parts.path);
    resolved.download_src = mount.url;
    resolved.download_dst_dir = DirOf(resolved.container_path);
  }
  if (!parts.scheme.empty()) {
    if (mount.enable_if_host_path) resolved.disabled = true;
    return resolved;
  }
  if (mount.is_dir) {
    resolved.host_path = mount.url;
    resolved.mount_path = JoinPath(kHostPathPrefix, parts.path);
    resolved.container_path = resolved.mount_path;
    return resolved;
  }
  resolved.host_path = DirOf(mount.url);
  resolved.container_path = JoinPath(kHostPathPrefix, parts.path);
  resolved.mount_path = DirOf(resolved.container_path);
  if (mount.indirect) {
    resolved.download_src = resolved.container_path;
    resolved.container_path = JoinPath(kDownloadsPath, parts.host + parts.path);
    resolved.download_dst_dir = DirOf(resolved.container_path);
  }
  return resolved;
}

std::string EnvValue(const std::vector<ResolvedUrl>& urls) {
  std::vector<absl::string_view> paths;
  for (const ResolvedUrl& url : urls) {
    if (url.disabled) continue;
    paths.push_back(url.container_path.empty() ? url.url : url.container_path);
  }
  return absl::StrJoin(paths, ToAbsl(kUrlSeparator));
}

std::vector<std::string> SplitUrls(std::string_view value) {
  return absl::StrSplit(ToAbsl(value), ToAbsl(kUrlSeparator), absl::SkipEmpty());
}

bool NeedsCredentialInInitializer(const ResolvedUrl& url) {
  return !url.disabled && !url.download_src.empty() && (url.is_s3 || url.indirect);
}

bool NeedsCredentialInWorkers(const ResolvedUrl& url) {
  return !url.disabled && url.download_src.empty() && url.is_s3;
}

std::vector<std::string> InitializerArgs(const std::vector<ResolvedUrl>& urls) {
  std::vector<std::string> args;
  for (const ResolvedUrl& url : urls) {
    if (url.disabled || url.download_src.empty() || url.download_dst_dir.empty()) continue;
    args.push_back(url.download_src);
    args.push_back(url.indirect ? absl::StrCat(ToAbsl(kIndirectUrlMark), url.download_dst_dir)
                                : url.download_dst_dir);
  }
  return args;
}

std::string ConvertK8sValidName(std::string_view name) {
  constexpr size_t kMaxLength = 63;
  std::string out;
  bool in_run = false;
  for (char ch : name) {
    const char c = absl::ascii_tolower(static_cast<unsigned char>(ch));
    if (absl::ascii_isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'z') || c == '-') {
      out.push_back(c);
      in_run = false;
    } else if (!in_run) {
      if (!out.empty()) out.push_back('-');
      in_run = true;
    }
  }
  if (out.size() > kMaxLength) out.resize(kMaxLength);
  if (!out.empty() && out.back() == '-') out.back() = 'z';
  return out;
}

kube::Json CredentialEnv(const CredentialSource& source) {
  kube::Json env = kube::Json::array();
  env.push_back(EnvEntry("S3_ENDPOINT_URL", source.credential.EndpointUrl()));
  if (source.literal_values) {
    env.push_back(EnvEntry(kKeyAccessKeyId, source.credential.access_key_id));
    env.push_back(EnvEntry(kKeySecretAccessKey, source.credential.secret_access_key));
  } else {
    env.push_back(SecretKeyEnv(kKeyAccessKeyId, source.secret_name));
    env.push_back(SecretKeyEnv(kKeySecretAccessKey, source.secret_name));
  }
  return env;
}

absl::StatusOr<std::string> SinglePodSecret(const std::vector<std::string>& names) {
  std::set<std::string> distinct;
  for (const std::string& name : names) {
    if (!name.empty()) distinct.insert(name);
  }
  if (distinct.empty()) return std::string();
  if (distinct.size() > 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "one pod needs S3 credentials from two Secrets (", *distinct.begin(), " and ",
        *std::next(distinct.begin()),
        "); the S3_ENDPOINT_URL/ACCESS_KEY_ID/SECRET_ACCESS_KEY env can hold only one"));
  }
  return *distinct.begin();
}

kube::Json InitializerContainer(const std::vector<ResolvedUrl>& urls,
                                const kube::Json& credential_env,
                                const InitializerOptions& options) {
  kube::Json env = credential_env.is_array() ? credential_env : kube::Json::array();
  env.push_back(EnvEntry(kIndirectUrlMarkEnv, kIndirectUrlMark));
  kube::Json mounts = kube::Json::array();
  mounts.push_back({{"name", std::string(kDownloadsVolumeName)},
                    {"mountPath", std::string(kDownloadsPath)}});
  for (const ResolvedUrl& url : urls) {
    if (!url.disabled && url.indirect && !url.host_path.empty()) {
      mounts.push_back(HostPathMount(url));
    }
  }
  return kube::Json{
      {"name", std::string(kInitializerContainerName)},
      {"image", options.image},
      {"imagePullPolicy", "IfNotPresent"},
      {"args", InitializerArgs(urls)},
      {"terminationMessagePolicy", "FallbackToLogsOnError"},
      {"resources", {{"limits", {{"cpu", "1"}, {"memory", "1Gi"}}}}},
      {"volumeMounts", std::move(mounts)},
      {"env", std::move(env)},
  };
}

kube::Json DownloadsVolume() {
  return kube::Json{{"name", std::string(kDownloadsVolumeName)},
                    {"emptyDir", kube::Json::object()}};
}

kube::Json WorkerDownloadsMount() {
  return kube::Json{{"name", std::string(kDownloadsVolumeName)},
                    {"mountPath", std::string(kDownloadsPath)},
                    {"readOnly", true}};
}

kube::Json HostPathVolume(const ResolvedUrl& url) {
  if (url.host_path.empty()) return kube::Json();
  return kube::Json{{"name", VolumeName(url)},
                    {"hostPath", {{"path", url.host_path}, {"type", "Directory"}}}};
}

kube::Json HostPathMount(const ResolvedUrl& url) {
  if (url.host_path.empty()) return kube::Json();
  return kube::Json{{"name", VolumeName(url)}, {"mountPath", url.mount_path}};
}

}  // namespace nereid::s3
