#include "tests/fakes/intercepting_kube_client.h"

#include <utility>

namespace nereid::fakes {

void InterceptingKubeClient::SetInterceptor(Interceptor interceptor) {
  absl::MutexLock lock(&mu_);
  interceptor_ = std::move(interceptor);
}

void InterceptingKubeClient::SetDown(bool down) {
  absl::MutexLock lock(&mu_);
  down_ = down;
}

std::optional<absl::Status> InterceptingKubeClient::Intercept(Verb verb,
                                                              const kube::Resource& resource,
                                                              const kube::ListOptions* options) {
  Interceptor interceptor;
  {
    absl::MutexLock lock(&mu_);
    if (down_) return absl::UnavailableError("connection refused (partitioned by the test)");
    interceptor = interceptor_;
  }
  if (!interceptor) return std::nullopt;
  return interceptor(verb, resource, options);
}

absl::StatusOr<kube::Json> InterceptingKubeClient::Get(const kube::Resource& resource,
                                                       std::string_view ns, std::string_view name) {
  if (auto s = Intercept(Verb::kGet, resource, nullptr)) return *s;
  return target_->Get(resource, ns, name);
}

absl::StatusOr<kube::ObjectList> InterceptingKubeClient::List(const kube::Resource& resource,
                                                              std::string_view ns,
                                                              const kube::ListOptions& options) {
  if (auto s = Intercept(Verb::kList, resource, &options)) return *s;
  return target_->List(resource, ns, options);
}

absl::StatusOr<kube::Json> InterceptingKubeClient::Create(const kube::Resource& resource,
                                                          std::string_view ns,
                                                          const kube::Json& object) {
  if (auto s = Intercept(Verb::kCreate, resource, nullptr)) return *s;
  return target_->Create(resource, ns, object);
}

absl::StatusOr<kube::Json> InterceptingKubeClient::Update(const kube::Resource& resource,
                                                          const kube::Json& object) {
  if (auto s = Intercept(Verb::kUpdate, resource, nullptr)) return *s;
  return target_->Update(resource, object);
}

absl::StatusOr<kube::Json> InterceptingKubeClient::UpdateStatus(const kube::Resource& resource,
                                                                const kube::Json& object) {
  if (auto s = Intercept(Verb::kUpdateStatus, resource, nullptr)) return *s;
  return target_->UpdateStatus(resource, object);
}

absl::StatusOr<kube::Json> InterceptingKubeClient::Patch(const kube::Resource& resource,
                                                         std::string_view ns, std::string_view name,
                                                         kube::PatchType type,
                                                         const kube::Json& patch,
                                                         std::string_view subresource) {
  if (auto s = Intercept(Verb::kPatch, resource, nullptr)) return *s;
  return target_->Patch(resource, ns, name, type, patch, subresource);
}

absl::Status InterceptingKubeClient::Delete(const kube::Resource& resource, std::string_view ns,
                                            std::string_view name,
                                            const kube::DeleteOptions& options) {
  if (auto s = Intercept(Verb::kDelete, resource, nullptr)) return *s;
  return target_->Delete(resource, ns, name, options);
}

absl::StatusOr<std::unique_ptr<kube::WatchStream>> InterceptingKubeClient::Watch(
    const kube::Resource& resource, std::string_view ns, const kube::ListOptions& options) {
  if (auto s = Intercept(Verb::kWatch, resource, &options)) return *s;
  return target_->Watch(resource, ns, options);
}

absl::StatusOr<bool> InterceptingKubeClient::IsServed(const kube::Resource& resource) {
  if (auto s = Intercept(Verb::kIsServed, resource, nullptr)) return *s;
  return target_->IsServed(resource);
}

}  // namespace nereid::fakes
