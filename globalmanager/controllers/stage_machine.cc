#include "globalmanager/controllers/stage_machine.h"

#include <cctype>

#include "absl/strings/str_cat.h"
#include "common/strings/absl_compat.h"

namespace nereid::gm::stages {
namespace {

Transition Make(std::string_view stage, std::string_view type, std::string_view reason,
                std::string message, bool keep_data = true) {
  return Transition{std::string(stage), std::string(type), std::string(reason), std::move(message),
                    keep_data};
}

std::string Lower(std::string_view stage) {
  std::string s(stage);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string_view NextStage(std::string_view stage) {
  if (stage == kTrain) return kEval;
  if (stage == kEval) return kDeploy;
  return kTrain;
}

bool IsStage(std::string_view stage) {
  return stage == kTrain || stage == kEval || stage == kDeploy;
}

bool IsStageState(std::string_view state) {
  return state == kWaiting || state == kReady || state == kStarting || state == kRunning ||
         state == kCompleted || state == kFailed;
}

bool RunsStagePod(std::string_view stage) { return stage == kTrain || stage == kEval; }

std::optional<Transition> NextTransition(const api::Condition* latest, const Facts& facts) {
  if (latest == nullptr || !IsStage(latest->stage) || !IsStageState(latest->type)) {
    // A new job (or a history this controller cannot read): start over with training.
    return Make(kTrain, kWaiting, reasons::kJobStarted,
                "waiting for the train trigger on the dataset's node", false);
  }
  const std::string_view stage = latest->stage;
  const std::string_view type = latest->type;
  const std::string lower = Lower(stage);

  if (type == kWaiting) return std::nullopt;  // The LC moves it (OnStageReport).

  if (type == kReady) {
    if (RunsStagePod(stage)) {
      return Make(stage, kStarting, reasons::kStageRunStarted,
                  absl::StrCat("creating the ", lower, " pod"));
    }
    return Make(stage, kStarting, reasons::kInstallingModel,
                "waiting for the deploy node to install the new model");
  }

  if (type == kStarting || type == kRunning) {
    if (!RunsStagePod(stage)) {
      // Deploy: Starting waits for the LC's Installed report; Running for the restarted worker.
      if (type == kRunning && facts.inference_restarted) {
        return Make(stage, kCompleted, reasons::kInferenceRestarted,
                    "the inference worker runs with the new model");
      }
      return std::nullopt;
    }
    switch (facts.run) {
      case RunPhase::kRunning:
        if (type == kRunning) return std::nullopt;
        return Make(stage, kRunning, reasons::kPodRunning,
                    absl::StrCat("the ", lower, " pod is running"));
      case RunPhase::kSucceeded:
        return Make(stage, kCompleted, reasons::kPodSucceeded,
                    absl::StrCat("the ", lower, " pod succeeded"));
      case RunPhase::kFailed:
        return Make(stage, kFailed, reasons::kStageRunFailed,
                    facts.run_message.empty() ? absl::StrCat("the ", lower, " pod failed")
                                              : facts.run_message);
      case RunPhase::kNotStarted:
      case RunPhase::kPending:
        return std::nullopt;
    }
    return std::nullopt;
  }

  if (type == kCompleted) {
    const std::string_view next = NextStage(stage);
    if (RunsStagePod(stage) && !facts.output_reported) {
      if (!facts.output_grace_over) return std::nullopt;
      return Make(next, kWaiting, reasons::kOutputMissing,
                  absl::StrCat("the ", lower,
                               " worker reported no output models; the next stage cannot use them"),
                  false);
    }
    if (next == kTrain) {
      return Make(next, kWaiting, reasons::kNextStage,
                  "waiting for the train trigger on the dataset's node", false);
    }
    return Make(next, kWaiting, reasons::kNextStage,
                next == kEval ? "waiting for the dataset's node to prepare the evaluation"
                              : "waiting for the deploy trigger on the dataset's node",
                false);
  }

  // Failed: start again with training (the job never finishes, as Sedna's). The cause stays in
  // the message, so the job's current condition still says why the last round failed (e.g. the
  // LC could not write the outputDir) rather than only that it waits.
  return Make(kTrain, kWaiting, reasons::kRetrain,
              latest->message.empty()
                  ? absl::StrCat("the ", lower, " stage failed; waiting for the train trigger")
                  : absl::StrCat("the ", lower, " stage failed (", latest->message,
                                 "); waiting for the train trigger"),
              false);
}

StageReportOutcome OnStageReport(const api::Condition* latest, std::string_view stage,
                                 std::string_view status, std::string_view lc_reason,
                                 bool hot_update) {
  StageReportOutcome out;
  if (!IsStage(stage)) {
    out.ignored = absl::StrCat("unknown stage \"", ToAbsl(stage), "\"");
    return out;
  }
  if (latest == nullptr) {
    out.ignored = "the job has no stage yet";
    return out;
  }
  if (latest->stage != stage) {
    out.ignored = absl::StrCat("the job is in stage ", latest->stage, ", not ", ToAbsl(stage));
    return out;
  }
  const std::string reason(lc_reason);
  const std::string_view type = latest->type;
  if (status == report_status::kReady) {
    if (type != kWaiting) {
      out.ignored = absl::StrCat(ToAbsl(stage), " is ", ToAbsl(type), " already");
      return out;
    }
    out.transition = Make(stage, kReady, reasons::kTriggerFired, reason, false);
    return out;
  }
  if (status == report_status::kFailed) {
    const bool deploy_installing = stage == kDeploy && type == kStarting;
    if (type != kWaiting && !deploy_installing) {
      out.ignored = absl::StrCat(ToAbsl(stage), " is ", ToAbsl(type));
      return out;
    }
    out.transition = Make(stage, kFailed, reasons::kPreparationFailed, reason);
    return out;
  }
  if (status == report_status::kCompleted) {
    if (stage != kDeploy || type != kWaiting) {
      out.ignored = absl::StrCat("a Completed report applies to a waiting Deploy stage; ",
                                 ToAbsl(stage), " is ", ToAbsl(type));
      return out;
    }
    out.transition = Make(stage, kCompleted, reasons::kNotDeployed,
                          absl::StrCat("the new model is not deployed: ", reason));
    return out;
  }
  if (status == report_status::kInstalled) {
    if (stage != kDeploy || type != kStarting) {
      out.ignored = absl::StrCat("an Installed report applies to a starting Deploy stage; ",
                                 ToAbsl(stage), " is ", ToAbsl(type));
      return out;
    }
    if (hot_update) {
      out.transition = Make(stage, kCompleted, reasons::kModelReloaded,
                            absl::StrCat(reason, "; the inference worker reloads it in place"));
    } else {
      out.transition = Make(stage, kRunning, reasons::kModelInstalled,
                            absl::StrCat(reason, "; restarting the inference worker"));
    }
    return out;
  }
  out.ignored = absl::StrCat("unknown report status \"", ToAbsl(status), "\"");
  return out;
}

}  // namespace nereid::gm::stages
