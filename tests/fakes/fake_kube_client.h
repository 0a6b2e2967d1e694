#pragma once

// FakeKubeClient: an in-memory KubeClient for unit tests, faithful where controllers depend on the
// API server (client-go's fake clientset plus the parts of the apiserver that matter):
//   - one global resourceVersion counter across all resources; uid, generation (bumped when
//     anything but metadata/status changes), creationTimestamp (from the injected Clock),
//     generateName;
//   - optimistic concurrency: Update/UpdateStatus with a stale metadata.resourceVersion → Conflict;
//     Update keeps the stored .status and UpdateStatus changes only .status (status subresource);
//   - finalizers: Delete of an object with finalizers only sets deletionTimestamp; the object goes
//     away when an update clears the finalizers;
//   - label and field selectors (metadata.name, metadata.namespace, any dotted string path such as
//     spec.nodeName or status.phase), limit/continue paging;
//   - watch streams fed from every change, with a bounded history: a watch from a resourceVersion
//     older than the history fails with 410 Gone at start; ExpireWatches() ends open watches with
//     an ERROR event carrying a 410 Status; CloseWatches() ends them normally; SendBookmark(); the
//     watch's timeoutSeconds elapses on the injected Clock;
//   - error injection for the next N calls of a verb (optionally of one resource);
//   - a log of every call (verb, resource, namespace, name, subresource, body) so controller tests
//     can assert what was written.
// Thread-safe.

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "common/kube/client.h"
#include "common/kube/selector.h"
#include "common/time/clock.h"

namespace nereid::fakes {

enum class Verb {
  kGet,
  kList,
  kCreate,
  kUpdate,
  kUpdateStatus,
  kPatch,
  kDelete,
  kWatch,
  kIsServed
};
std::string_view VerbName(Verb verb);

struct Action {
  Verb verb = Verb::kGet;
  std::string resource;  // Resource::QualifiedName(), e.g. "pods", "leases.coordination.k8s.io".
  std::string ns;
  std::string name;
  std::string subresource;
  // Create/Update object, Patch document, List/Watch options ({"limit", "continue",
  // "resourceVersion", "labelSelector", "fieldSelector", "timeoutSeconds", "allowWatchBookmarks"}),
  // or null.
  kube::Json body;
};

class FakeWatchState;

class FakeKubeClient final : public kube::KubeClient {
 public:
  explicit FakeKubeClient(Clock* clock = Clock::Real(), size_t history_limit = 1000);
  ~FakeKubeClient() override;

  // KubeClient.
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

  // The next `count` calls of `verb` (on `resource` if given, as Resource::QualifiedName()) fail
  // with `status` instead of running. Rules are consumed in the order they were added.
  void FailNext(Verb verb, int count, absl::Status status, std::string resource = "");
  void ClearFailures();
  // Resources for which IsServed() answers false (e.g. Volcano PodGroups). All others are served.
  void SetServed(const kube::Resource& resource, bool served);

  // Drops the whole watch history: a watch from any resourceVersion before now gets 410 Gone.
  void CompactHistory();
  // Ends every open watch with an ERROR event carrying a 410 Expired Status.
  void ExpireWatches();
  // Ends every open watch normally (as the server does when timeoutSeconds elapses).
  void CloseWatches();
  // Sends a BOOKMARK with the current resourceVersion to watches that allow bookmarks.
  void SendBookmark();
  // Sends `event` as is to every open watch of `resource` (malformed events, custom errors).
  void SendRawEvent(const kube::Resource& resource, const kube::WatchEvent& event);
  // Number of watches currently open (not ended, not cancelled).
  int OpenWatches() const;

  std::vector<Action> Actions() const;
  // Actions of `verb`, optionally only on `resource` (QualifiedName).
  std::vector<Action> ActionsOf(Verb verb, std::string_view resource = "") const;
  int CountActions(Verb verb, std::string_view resource = "") const;
  void ClearActions();

  int64_t CurrentResourceVersion() const;
  // Stored objects of a resource (bypasses actions and failure injection).
  std::vector<kube::Json> Objects(const kube::Resource& resource) const;

 private:
  struct FailureRule {
    Verb verb;
    std::string resource;
    int remaining;
    absl::Status status;
  };
  struct HistoryEntry {
    int64_t rv;
    std::string resource;
    kube::WatchEvent::Type type;
    kube::Json old_object;  // null for ADDED
    kube::Json object;
  };
  struct Watcher {
    std::shared_ptr<FakeWatchState> state;
    std::string resource;
    std::string ns;
    kube::LabelSelector labels;
    kube::FieldSelector fields;
    bool bookmarks = false;
  };
  using ObjectMap = std::map<std::string, kube::Json>;  // key → object

  // Records the action and returns an injected failure, if any.
  absl::Status Begin(Verb verb, const kube::Resource& resource, std::string_view ns,
                     std::string_view name, std::string_view subresource, const kube::Json& body)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string NextResourceVersion() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records a change in the history and sends it to matching watchers.
  void Emit(const std::string& resource, kube::WatchEvent::Type type, const kube::Json& old_object,
            const kube::Json& object) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static bool WatcherMatches(const Watcher& watcher, const kube::Json& object);
  // Delivers one history entry to one watcher, translating MODIFIED into ADDED/DELETED when the
  // object moved into or out of the watcher's selection (as the apiserver does).
  static void Deliver(const Watcher& watcher, const HistoryEntry& entry);
  // Stores `next` as the new version of an existing object (or deletes it when it is being deleted
  // and has no finalizers left).
  absl::StatusOr<kube::Json> Commit(const kube::Resource& resource, const std::string& key,
                                    const kube::Json& current, kube::Json next)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<kube::Json> UpdateLocked(const kube::Resource& resource, const kube::Json& object,
                                          bool status_only) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock* const clock_;
  const size_t history_limit_;
  mutable absl::Mutex mu_;
  int64_t resource_version_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t uid_counter_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, ObjectMap> objects_ ABSL_GUARDED_BY(mu_);  // resource → objects
  std::deque<HistoryEntry> history_ ABSL_GUARDED_BY(mu_);
  // A watch can resume from any resourceVersion >= this one.
  int64_t oldest_resumable_rv_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<Watcher> watchers_ ABSL_GUARDED_BY(mu_);
  std::vector<FailureRule> failures_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, bool> served_ ABSL_GUARDED_BY(mu_);
  std::vector<Action> actions_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nereid::fakes
