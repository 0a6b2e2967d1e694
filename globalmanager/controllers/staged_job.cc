#include "globalmanager/controllers/staged_job.h"

#include <algorithm>
#include <limits>

namespace nereid::gm {

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
