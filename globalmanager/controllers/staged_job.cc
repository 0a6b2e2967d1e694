#include "globalmanager/controllers/staged_job.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/api/sedna_contract.h"

namespace nereid::gm {

std::string InputString(const kube::Json& data, const char* key) {
  return kube::StringAt(data, absl::StrCat("input.", key));
}

void Mount(WorkerParams* params, std::string_view env_name, std::vector<std::string> urls,
           std::string what, bool read_only, bool is_dir, bool indirect) {
  std::erase(urls, "");
  if (urls.empty()) return;
  // A writable directory is a round's output: the worker writes it (an s3:// one is not fetched by
  // the storage-initializer, as Sedna's outputDir); everything else is an input to fetch.
  const bool output = is_dir && !read_only;
  params->mounts.push_back(StorageMount{std::string(env_name), std::move(urls), read_only, is_dir,
                                        std::move(what), /*download=*/!output, indirect});
}

void MountOriginalDataset(WorkerParams* params, const kube::Json& stage_data,
                          const StagedRefs& refs) {
  const std::string index = InputString(stage_data, "dataIndexURL");
  Mount(params, api::env::kOriginalDatasetUrl, {index.empty() ? refs.dataset_url : index},
        "the original dataset", /*read_only=*/true, /*is_dir=*/false,
        /*indirect=*/!index.empty());
}

std::vector<std::string> StagedJob::ModelNames() const {
  std::vector<std::string> names;
  for (const std::string* name : {&initial_model, &deploy_model, &initial_eval_model}) {
    if (!name->empty()) names.push_back(*name);
  }
  return names;
}

void TriggerToProto(const api::Trigger& trigger, edge::v1::Trigger* out) {
  out->set_check_period_seconds(static_cast<int32_t>(
      std::min<int64_t>(trigger.CheckPeriodSeconds(), std::numeric_limits<int32_t>::max())));
  if (trigger.timer.has_value()) {
    out->mutable_timer()->set_start(trigger.timer->start);
    out->mutable_timer()->set_end(trigger.timer->end);
  }
  out->mutable_condition()->set_operator_(trigger.condition.op);
  out->mutable_condition()->set_threshold(trigger.condition.threshold);
  out->mutable_condition()->set_metric(trigger.condition.metric);
}

job::RunPolicy ReadStagedRunPolicy(const kube::Json& object, api::FieldReader* reader) {
  const kube::Json* spec = api::FieldReader::Get(object, "spec");
  if (spec == nullptr) return job::RunPolicy{};
  return job::ReadRunPolicy(*spec, "runPolicy", "spec", reader);
}

}  // namespace nereid::gm
