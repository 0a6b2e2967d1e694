#pragma once

// Model objects <-> the model keeper, and its verdicts -> the database:
//   Apply    the Model's url/format/sha256 to the keeper (a changed spec is checked again; a Model
//            re-created under the same name, with a new uid, is checked and reported afresh);
//   Restore  the same at start, with the last reported check from the meta table (its
//            fingerprint spares re-hashing an unchanged file, and nothing is reported again);
//   Forget   stops keeping it and drops the remembered check;
//   OnReport one transaction: the check (meta "model-check/<ns>/<name>") + the ModelStatus report.

#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "localcontroller/db/lc_database.h"
#include "localcontroller/model/model_keeper.h"
#include "localcontroller/resource_handler.h"

namespace nereid::lc {

class ModelHandler final : public ResourceHandler {
 public:
  ModelHandler(db::LcDatabase* db, model::ModelKeeper* keeper) : db_(db), keeper_(keeper) {}

  void Apply(const edge::v1::Resource& resource) override;
  void Forget(const edge::v1::ObjectRef& ref) override;
  void Restore(const edge::v1::Resource& resource);

  // Keeper callback (checker thread).
  // Not OK when the report was not stored (the keeper makes it again).
  absl::Status OnReport(const model::ModelReport& report);

  static std::string MetaKey(const std::string& ns, const std::string& name);

 private:
  // Records the uid held for `key`; true when another uid was held before (re-created object).
  bool Recreated(const std::string& key, const std::string& uid);

  db::LcDatabase* const db_;
  model::ModelKeeper* const keeper_;
  absl::Mutex mu_;
  std::map<std::string, std::string> uids_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nereid::lc
