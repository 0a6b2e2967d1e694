#pragma once

// FakeModelRequirements: records what a job controller asks of the Model controller, for tests
// that assert which Models a job needs on which nodes (model_requirements.h).

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "globalmanager/controllers/model_requirements.h"

namespace nereid::gm {

class FakeModelRequirements final : public ModelRequirements {
 public:
  void SetRequirements(const std::string& requester, const std::vector<ModelNeed>& needs) override {
    absl::MutexLock lock(&mu_);
    if (needs.empty()) {
      needs_.erase(requester);
    } else {
      needs_[requester] = needs;
    }
  }
  void RequireModel(const std::string& model, const std::string& node,
                    const std::string& requester) override {
    absl::MutexLock lock(&mu_);
    needs_[requester].push_back({model, node});
  }
  void ReleaseModel(const std::string& model, const std::string& node,
                    const std::string& requester) override {
    absl::MutexLock lock(&mu_);
    auto it = needs_.find(requester);
    if (it == needs_.end()) return;
    std::erase_if(it->second, [&](const ModelNeed& need) {
      return need.model_key == model && need.node == node;
    });
  }
  void ReleaseAll(const std::string& requester) override {
    absl::MutexLock lock(&mu_);
    needs_.erase(requester);
  }

  // What `requester` needs, as last declared (in its order).
  std::vector<ModelNeed> Needs(const std::string& requester) const {
    absl::MutexLock lock(&mu_);
    auto it = needs_.find(requester);
    return it == needs_.end() ? std::vector<ModelNeed>{} : it->second;
  }
  // The same, as a set.
  std::set<ModelNeed> NeedSet(const std::string& requester) const {
    std::vector<ModelNeed> needs = Needs(requester);
    return {needs.begin(), needs.end()};
  }

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, std::vector<ModelNeed>> needs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nereid::gm
