#include "localcontroller/cloudlink/spec_validation.h"

#include <cctype>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/net/edge_protocol.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"

namespace nereid::lc {

namespace v1 = edge::v1;

namespace {

absl::Status Invalid(const v1::Resource& resource, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(net::RefString(resource.ref()), ": ", ToAbsl(what)));
}

bool IsHex64(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// "HH:MM", 00:00 .. 23:59, or 24:00 (the end of the day, as the trigger evaluator reads it —
// localcontroller/trigger/trigger.cc — and as Sedna's examples write a whole-day timer).
bool IsClock(const std::string& s) {
  if (s == "24:00") return true;
  if (s.size() != 5 || s[2] != ':') return false;
  for (int i : {0, 1, 3, 4}) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  const int hours = (s[0] - '0') * 10 + (s[1] - '0');
  const int minutes = (s[3] - '0') * 10 + (s[4] - '0');
  return hours < 24 && minutes < 60;
}

bool IsOperator(const std::string& op) {
  for (const char* known :
       {"gt", ">", "ge", ">=", "eq", "=", "==", "ne", "!=", "le", "<=", "lt", "<"}) {
    if (op == known) return true;
  }
  return false;
}

absl::Status ValidateTrigger(const v1::Resource& resource, const v1::Trigger& trigger,
                             std::string_view which) {
  if (trigger.check_period_seconds() < 0) {
    return Invalid(resource, absl::StrCat(ToAbsl(which), ".checkPeriodSeconds is negative"));
  }
  if (trigger.has_timer()) {
    if (!IsClock(trigger.timer().start()) || !IsClock(trigger.timer().end())) {
      return Invalid(resource,
                     absl::StrCat(ToAbsl(which), ".timer wants HH:MM start and end, got \"",
                                  trigger.timer().start(), "\"-\"", trigger.timer().end(), "\""));
    }
  }
  if (trigger.has_condition()) {
    if (!IsOperator(trigger.condition().operator_())) {
      return Invalid(resource, absl::StrCat(ToAbsl(which), ".condition.operator \"",
                                            trigger.condition().operator_(), "\" is unknown"));
    }
    if (trigger.condition().metric().empty()) {
      return Invalid(resource, absl::StrCat(ToAbsl(which), ".condition.metric is empty"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateJobDataset(const v1::Resource& resource, const v1::JobDataset& dataset) {
  if (dataset.name().empty()) return Invalid(resource, "dataset.name is empty");
  if (dataset.train_prob() < 0 || dataset.train_prob() > 1) {
    return Invalid(resource, "dataset.trainProb must be within [0, 1]");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateForNode(const v1::Resource& resource, std::string_view node) {
  if (absl::Status status = net::ValidateResource(resource); !status.ok()) return status;
  switch (resource.spec_case()) {
    case v1::Resource::kDataset: {
      const v1::DatasetSpec& spec = resource.dataset();
      if (spec.url().empty()) return Invalid(resource, "spec.url is empty");
      if (spec.format().empty()) return Invalid(resource, "spec.format is empty");
      if (!spec.node_name().empty() && spec.node_name() != node) {
        return Invalid(resource, absl::StrCat("spec.nodeName is ", spec.node_name(),
                                              ", not this node (", ToAbsl(node), ")"));
      }
      return absl::OkStatus();
    }
    case v1::Resource::kModel: {
      const v1::ModelSpec& spec = resource.model();
      if (spec.url().empty()) return Invalid(resource, "spec.url is empty");
      if (!spec.sha256().empty() && !IsHex64(spec.sha256())) {
        return Invalid(resource, "sha256 must be 64 hex digits");
      }
      return absl::OkStatus();
    }
    case v1::Resource::kJointInferenceService:
      if (resource.joint_inference_service().edge_worker().model_name().empty()) {
        return Invalid(resource, "edgeWorker.model.name is empty");
      }
      return absl::OkStatus();
    case v1::Resource::kFederatedLearningJob:
      for (const auto& worker : resource.federated_learning_job().training_workers()) {
        if (worker.dataset_name().empty()) {
          return Invalid(resource, "a trainingWorker has no dataset.name");
        }
      }
      return absl::OkStatus();
    case v1::Resource::kIncrementalLearningJob: {
      const v1::IncrementalLearningJobSpec& spec = resource.incremental_learning_job();
      if (absl::Status s = ValidateJobDataset(resource, spec.dataset()); !s.ok()) return s;
      if (spec.initial_model_name().empty()) return Invalid(resource, "initialModel.name is empty");
      if (absl::Status s = ValidateTrigger(resource, spec.train_trigger(), "trainSpec.trigger");
          !s.ok()) {
        return s;
      }
      return ValidateTrigger(resource, spec.deploy_trigger(), "deploySpec.trigger");
    }
    case v1::Resource::kLifelongLearningJob: {
      const v1::LifelongLearningJobSpec& spec = resource.lifelong_learning_job();
      if (absl::Status s = ValidateJobDataset(resource, spec.dataset()); !s.ok()) return s;
      return ValidateTrigger(resource, spec.train_trigger(), "trainSpec.trigger");
    }
    case v1::Resource::kWorker: {
      const v1::WorkerSpec& spec = resource.worker();
      if (spec.job_kind().empty() || spec.job_name().empty() || spec.worker_type().empty()) {
        return Invalid(resource, "worker needs job kind, job name and worker type");
      }
      return absl::OkStatus();
    }
    case v1::Resource::kDistributedJob: {
      const v1::DistributedJobSpec& spec = resource.distributed_job();
      if (!spec.node_name().empty() && spec.node_name() != node) {
        return Invalid(resource, absl::StrCat("nodeName is ", spec.node_name(),
                                              ", not this node (", ToAbsl(node), ")"));
      }
      for (const auto& task : spec.tasks()) {
        if (task.name().empty()) return Invalid(resource, "a task has no name");
      }
      return absl::OkStatus();
    }
    case v1::Resource::kVideoAnalyticsJob:
    case v1::Resource::kReidJob:
    case v1::Resource::kFeatureExtractionService: {
      const v1::InferenceJobSpec& spec =
          resource.has_video_analytics_job() ? resource.video_analytics_job()
          : resource.has_reid_job()          ? resource.reid_job()
                                             : resource.feature_extraction_service();
      if (!spec.node_name().empty() && spec.node_name() != node) {
        return Invalid(resource, absl::StrCat("nodeName is ", spec.node_name(),
                                              ", not this node (", ToAbsl(node), ")"));
      }
      if (spec.worker_type().empty()) return Invalid(resource, "no worker type");
      return absl::OkStatus();
    }
    case v1::Resource::SPEC_NOT_SET: break;
  }
  return Invalid(resource, "no spec");
}

absl::Status ApplyChange(const v1::Change& change, std::string_view node,
                         DesiredStateStore& store) {
  switch (change.op_case()) {
    case v1::Change::kUpsert:
      RETURN_IF_ERROR(ValidateForNode(change.upsert(), node));
      return store.Upsert(change.upsert());
    case v1::Change::kRemove:
      RETURN_IF_ERROR(net::ValidateRef(change.remove().ref()));
      return store.Remove(change.remove().ref());
    case v1::Change::OP_NOT_SET: break;
  }
  return absl::InvalidArgumentError("change without upsert or remove (newer GM?)");
}

}  // namespace nereid::lc
