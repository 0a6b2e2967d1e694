// StagedJobController: the reports of the LC (trigger events) and of the workers (output models)
// (staged_job_controller.h, "Upstream").
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/api/dataset.h"
#include "common/kube/errors.h"
#include "common/log/log.h"
#include "common/strings/absl_compat.h"
#include "globalmanager/controllers/controller_events.h"
#include "globalmanager/controllers/spec_validity.h"
#include "globalmanager/controllers/stage_data.h"
#include "globalmanager/controllers/stage_machine.h"
#include "globalmanager/controllers/staged_job_controller.h"
#include "globalmanager/controllers/staged_job_status.h"
#include "globalmanager/controllers/status_writer.h"

namespace nereid::gm {
namespace {

using kube::Json;
using kube::ObjectPtr;
namespace v1 = edge::v1;
namespace st = staged_status;

}  // namespace

ReportOutcome StagedJobController::HandleReport(std::string_view node,
                                                const v1::StatusReport& report) {
  const v1::ObjectRef& ref = report.ref();
  const std::string key = kube::MakeKey(ref.namespace_(), ref.name());
  if (ref.kind() != kind_->kind()) {
    return ReportOutcome::Rejected(
        "Invalid", absl::StrCat("report ", report.seq(), " about ", ref.kind(), " ", key,
                                " is not about an ", ToAbsl(kind_->kind())));
  }
  ObjectPtr cached;
  if (absl::StatusOr<ObjectPtr> hit = jobs_->GetLister().GetByKey(key); hit.ok()) {
    cached = *std::move(hit);
  }
  if (report.has_trigger()) return HandleTrigger(node, report, cached);
  if (report.has_worker()) return HandleWorker(node, report, cached);
  return ReportOutcome::Rejected(
      "Invalid", absl::StrCat("report ", report.seq(), " about ", ToAbsl(kind_->kind()), " ", key,
                              " carries neither a trigger event nor a worker report"));
}

ReportOutcome StagedJobController::HandleTrigger(std::string_view node,
                                                 const v1::StatusReport& report,
                                                 const ObjectPtr& cached) {
  const v1::ObjectRef& ref = report.ref();
  const std::string key = kube::MakeKey(ref.namespace_(), ref.name());
  const v1::TriggerEvent& event = report.trigger();
  const absl::Time now = context().clock->Now();
  std::string ignored;
  std::optional<api::Condition> appended;
  absl::StatusOr<StatusWrite> write = WriteStatus(
      *context().client, kind_->resource(), ref.namespace_(), ref.name(), ref.uid(),
      [&](const Json& object, Json* status) -> absl::Status {
        ignored.clear();
        appended.reset();
        std::vector<api::Condition> conditions = st::ConditionsOf(*status);
        const api::Condition* latest = conditions.empty() ? nullptr : &conditions.back();
        // The job as it is now (a spec problem leaves the defaults: no hot update, no pinning).
        std::vector<kube::StatusCause> ignored_causes;
        const StagedJob job = kind_->Parse(object, &ignored_causes);
        stages::StageReportOutcome outcome = stages::OnStageReport(
            latest, event.stage(), event.status(), event.reason(), job.hot_update);
        if (!outcome.transition.has_value()) {
          ignored = outcome.ignored;
          return absl::OkStatus();
        }
        // Who may say what: the dataset's node runs the triggers, the deploy node installs.
        std::string dataset_node;
        if (absl::StatusOr<ObjectPtr> ds =
                datasets_->GetLister().GetByKey(kube::MakeKey(ref.namespace_(), job.dataset.name));
            ds.ok()) {
          std::optional<api::Dataset> dataset = ReadSpec<api::Dataset>(**ds);
          if (dataset.has_value()) dataset_node = dataset->spec.node_name;
        }
        std::string deploy_node = kube::StringAt(*status, "stageNodes.deploy");
        if (deploy_node.empty()) deploy_node = st::PinnedNode(job.deploy_template, dataset_node);
        const bool from_deploy_node =
            event.status() == stages::report_status::kInstalled ||
            (event.status() == stages::report_status::kFailed && latest->type == stages::kStarting);
        const std::string& expected = from_deploy_node ? deploy_node : dataset_node;
        if (!expected.empty() && expected != node) {
          return absl::FailedPreconditionError(
              absl::StrCat(event.status(), " of ", event.stage(), " comes from the ",
                           from_deploy_node ? "deploy" : "dataset's", " node ", expected, ", not ",
                           ToAbsl(node)));
        }
        const stages::Transition& t = *outcome.transition;
        api::Condition c;
        c.type = t.type;
        c.stage = t.stage;
        c.reason = t.reason;
        c.message = t.message;
        if (event.status() == stages::report_status::kReady) {
          c.data = DumpStageData(Json{{"input", InputFromProto(event.input())}});
        } else if (t.keep_data && latest != nullptr) {
          c.data = latest->data;
        }
        if (!api::AppendCondition(&conditions, c, now)) return absl::OkStatus();
        appended = conditions.back();
        st::PutConditions(conditions, status);
        st::SetSummary(conditions, status);
        if (event.status() == stages::report_status::kInstalled) {
          (*status)[st::kModelUpdates] = st::IntAt(*status, st::kModelUpdates) + 1;
        }
        return absl::OkStatus();
      },
      cached);
  if (!write.ok()) {
    return ReportWriteFailure(st::Lower(kind_->kind()), key, node, report, write.status());
  }
  if (!ignored.empty()) {
    LOG(DEBUG) << kind_->kind() << " " << key << ": " << event.status() << " of " << event.stage()
               << " from node " << node << " ignored: " << ignored;
    return ReportOutcome::Accepted();
  }
  if (write->written && appended.has_value()) {
    LOG(INFO) << kind_->kind() << " " << key << ": " << appended->type << "(" << appended->stage
              << ") reported by node " << node << ": " << appended->message;
    RecordEvent(context(), kind_->resource(), write->object, st::EventTypeFor(appended->type),
                st::EventReason(*appended), appended->message);
  }
  return ReportOutcome::Accepted();
}

ReportOutcome StagedJobController::HandleWorker(std::string_view node,
                                                const v1::StatusReport& report,
                                                const ObjectPtr& cached) {
  const v1::ObjectRef& ref = report.ref();
  const std::string key = kube::MakeKey(ref.namespace_(), ref.name());
  const v1::WorkerReport& worker = report.worker();
  const std::string worker_kind = st::Lower(worker.worker_kind());
  std::string stage;
  if (worker_kind == "train") stage = std::string(stages::kTrain);
  if (worker_kind == "eval") stage = std::string(stages::kEval);
  if (stage.empty()) return ReportOutcome::Accepted();  // The inference worker's: nothing to do.
  std::optional<Json> models = ModelsFromResults(worker.results_json());
  if (!models.has_value()) {
    return ReportOutcome::Rejected(
        "Invalid", absl::StrCat("the ", worker_kind, " worker ", worker.worker_name(),
                                " reported results that are not a JSON array"));
  }
  if (models->empty()) return ReportOutcome::Accepted();
  const absl::Time now = context().clock->Now();
  bool attached = false;
  absl::StatusOr<StatusWrite> write = WriteStatus(
      *context().client, kind_->resource(), ref.namespace_(), ref.name(), ref.uid(),
      [&](const Json&, Json* status) -> absl::Status {
        attached = false;
        std::vector<api::Condition> conditions = st::ConditionsOf(*status);
        // The output belongs to the latest condition of its stage, if that one is the run (a
        // Waiting or Ready one is a newer round that has not started).
        for (auto it = conditions.rbegin(); it != conditions.rend(); ++it) {
          if (it->stage != stage) continue;
          if (it->type != stages::kStarting && it->type != stages::kRunning &&
              it->type != stages::kCompleted) {
            break;
          }
          Json data = ParseStageData(it->data);
          data["output"] = Json{{"models", *models}};
          std::string dumped = DumpStageData(data);
          if (dumped != it->data) {
            it->data = std::move(dumped);
            it->last_heartbeat_time = now;
            attached = true;
          }
          break;
        }
        if (attached) st::PutConditions(conditions, status);
        if (attached && stage == stages::kTrain) {
          // The history is bounded; the latest trained model is needed rounds later (LL).
          std::vector<std::string> urls = ModelUrls(*models);
          if (!urls.empty()) (*status)[st::kLastTrainedModel] = urls.front();
        }
        kind_->OnOutputModels(*models, status);
        return absl::OkStatus();
      },
      cached);
  if (!write.ok()) {
    return ReportWriteFailure(st::Lower(kind_->kind()), key, node, report, write.status());
  }
  if (attached) {
    LOG(INFO) << kind_->kind() << " " << key << ": " << models->size() << " output model(s) of the "
              << worker_kind << " worker " << worker.worker_name() << " recorded";
    Enqueue(key);  // A Completed stage may have been waiting for them.
  }
  return ReportOutcome::Accepted();
}

}  // namespace nereid::gm
