#pragma once

// FakeModelRequirements: records what a controller asked the Model controller for, per requester.

#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "globalmanager/controllers/model_requirements.h"

namespace nereid::gm::testing {

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
  void ReleaseModel(const std::string&, const std::string&, const std::string&) override {}
  void ReleaseAll(const std::string& requester) override {
    absl::MutexLock lock(&mu_);
    needs_.erase(requester);
  }
  std::vector<ModelNeed> Needs(const std::string& requester) const {
    absl::MutexLock lock(&mu_);
    auto it = needs_.find(requester);
    return it == needs_.end() ? std::vector<ModelNeed>{} : it->second;
  }

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, std::vector<ModelNeed>> needs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nereid::gm::testing
