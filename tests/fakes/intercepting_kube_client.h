#pragma once

// InterceptingKubeClient: forwards to another KubeClient unless an interceptor answers first.
// Tests use it to give one participant its own view of a shared fake API server: a partitioned
// leader (every call fails), a list whose second page finds its continue token expired, ...

#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "absl/synchronization/mutex.h"
#include "common/kube/client.h"
#include "tests/fakes/fake_kube_client.h"

namespace nereid::fakes {

class InterceptingKubeClient final : public kube::KubeClient {
 public:
  // Returns a status to fail the call with, or nullopt to let it through. `options` is set for
  // List and Watch only.
  using Interceptor = std::function<std::optional<absl::Status>(
      Verb verb, const kube::Resource& resource, const kube::ListOptions* options)>;

  explicit InterceptingKubeClient(kube::KubeClient* target) : target_(target) {}

  void SetInterceptor(Interceptor interceptor);
  // Shorthand: while down, every call fails with Unavailable (a network partition).
  void SetDown(bool down);

  absl::StatusOr<kube::Json> Get(const kube::Resource& resource, std::string_view ns,
                                 std::string_view name) override;
  absl::StatusOr<kube::ObjectList> List(const kube::Resource& resource, std::string_view ns,
                                        const kube::ListOptions& options) override;
  absl::StatusOr<kube::Json> Create(const kube::Resource& resource, std::string_view ns,
                                    const kube::Json& object) override;
  absl::StatusOr<kube::Json> Update(const kube::Resource& resource,
                                    const kube::Json& object) override;
  absl::StatusOr<kube::Json> UpdateStatus(const kube::Resource& resource,
                                          const kube::Json& object) override;
  absl::StatusOr<kube::Json> Patch(const kube::Resource& resource, std::string_view ns,
                                   std::string_view name, kube::PatchType type,
                                   const kube::Json& patch,
                                   std::string_view subresource = "") override;
  absl::Status Delete(const kube::Resource& resource, std::string_view ns, std::string_view name,
                      const kube::DeleteOptions& options = {}) override;
  absl::StatusOr<std::unique_ptr<kube::WatchStream>> Watch(
      const kube::Resource& resource, std::string_view ns,
      const kube::ListOptions& options) override;
  absl::StatusOr<bool> IsServed(const kube::Resource& resource) override;

 private:
  std::optional<absl::Status> Intercept(Verb verb, const kube::Resource& resource,
                                        const kube::ListOptions* options);

  kube::KubeClient* const target_;
  absl::Mutex mu_;
  Interceptor interceptor_ ABSL_GUARDED_BY(mu_);
  bool down_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace nereid::fakes
