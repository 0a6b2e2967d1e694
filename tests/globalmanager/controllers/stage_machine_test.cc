#include "globalmanager/controllers/stage_machine.h"

#include <catch2/catch.hpp>

namespace nereid::gm::stages {
namespace {

api::Condition Cond(std::string_view stage, std::string_view type) {
  api::Condition c;
  c.stage = std::string(stage);
  c.type = std::string(type);
  return c;
}

std::string Show(const std::optional<Transition>& t) {
  return t.has_value() ? t->type + "(" + t->stage + ")" : "-";
}

Facts Run(RunPhase phase) {
  Facts f;
  f.run = phase;
  return f;
}

TEST_CASE("NextTransition: the controller's transitions, table-driven") {
  Facts output_known;
  output_known.output_reported = true;
  Facts grace_over;
  grace_over.output_grace_over = true;
  Facts restarted;
  restarted.inference_restarted = true;
  struct Row {
    std::string_view stage, type;
    Facts facts;
    std::string want;
  };
  const std::vector<Row> rows = {
      // Waiting is the LC's to move.
      {kTrain, kWaiting, {}, "-"},
      {kEval, kWaiting, Run(RunPhase::kSucceeded), "-"},
      {kDeploy, kWaiting, {}, "-"},
      // Ready -> Starting: a new stage run (Train/Eval) or the model install (Deploy).
      {kTrain, kReady, {}, "Starting(Train)"},
      {kEval, kReady, {}, "Starting(Eval)"},
      {kDeploy, kReady, {}, "Starting(Deploy)"},
      // Starting/Running follow the stage pod.
      {kTrain, kStarting, Run(RunPhase::kNotStarted), "-"},
      {kTrain, kStarting, Run(RunPhase::kPending), "-"},
      {kTrain, kStarting, Run(RunPhase::kRunning), "Running(Train)"},
      {kTrain, kRunning, Run(RunPhase::kRunning), "-"},
      {kTrain, kStarting, Run(RunPhase::kSucceeded), "Completed(Train)"},
      {kTrain, kRunning, Run(RunPhase::kSucceeded), "Completed(Train)"},
      {kEval, kRunning, Run(RunPhase::kFailed), "Failed(Eval)"},
      {kEval, kStarting, Run(RunPhase::kFailed), "Failed(Eval)"},
      // Deploy: Starting waits for the LC; Running for the restarted inference worker.
      {kDeploy, kStarting, Run(RunPhase::kSucceeded), "-"},
      {kDeploy, kRunning, {}, "-"},
      {kDeploy, kRunning, restarted, "Completed(Deploy)"},
      // Completed -> next stage, once the output is known (or the wait is over).
      {kTrain, kCompleted, {}, "-"},
      {kTrain, kCompleted, output_known, "Waiting(Eval)"},
      {kTrain, kCompleted, grace_over, "Waiting(Eval)"},
      {kEval, kCompleted, output_known, "Waiting(Deploy)"},
      {kEval, kCompleted, {}, "-"},
      {kDeploy, kCompleted, {}, "Waiting(Train)"},
      // Failed anywhere -> back to Train.
      {kTrain, kFailed, {}, "Waiting(Train)"},
      {kEval, kFailed, {}, "Waiting(Train)"},
      {kDeploy, kFailed, {}, "Waiting(Train)"},
  };
  for (const Row& row : rows) {
    api::Condition latest = Cond(row.stage, row.type);
    INFO(row.type << "(" << row.stage << ")");
    CHECK(Show(NextTransition(&latest, row.facts)) == row.want);
  }
}

TEST_CASE("NextTransition: a new job starts waiting for the train trigger") {
  std::optional<Transition> t = NextTransition(nullptr, {});
  REQUIRE(t.has_value());
  CHECK(Show(t) == "Waiting(Train)");
  CHECK(t->reason == reasons::kJobStarted);
  CHECK_FALSE(t->keep_data);
  // Garbage in the history (hand-edited status) starts over too.
  api::Condition junk = Cond("Testing", "Waiting");
  CHECK(Show(NextTransition(&junk, {})) == "Waiting(Train)");
}

TEST_CASE("NextTransition: data carries within a stage, not into the next one") {
  api::Condition ready = Cond(kTrain, kReady);
  CHECK(NextTransition(&ready, {})->keep_data);
  api::Condition running = Cond(kTrain, kRunning);
  CHECK(NextTransition(&running, Run(RunPhase::kSucceeded))->keep_data);
  Facts known;
  known.output_reported = true;
  api::Condition completed = Cond(kTrain, kCompleted);
  CHECK_FALSE(NextTransition(&completed, known)->keep_data);
  Facts grace;
  grace.output_grace_over = true;
  std::optional<Transition> t = NextTransition(&completed, grace);
  CHECK(t->reason == reasons::kOutputMissing);
  api::Condition failed = Cond(kEval, kFailed);
  t = NextTransition(&failed, {});
  CHECK(t->reason == reasons::kRetrain);
  CHECK_FALSE(t->keep_data);
}

TEST_CASE("NextTransition: a failed run carries the library's message") {
  Facts f = Run(RunPhase::kFailed);
  f.run_message = "backoff limit reached";
  api::Condition running = Cond(kTrain, kRunning);
  std::optional<Transition> t = NextTransition(&running, f);
  REQUIRE(t.has_value());
  CHECK(t->reason == reasons::kStageRunFailed);
  CHECK(t->message == "backoff limit reached");
}

TEST_CASE("OnStageReport: the LC's reports, table-driven") {
  struct Row {
    std::string_view latest_stage, latest_type;
    std::string_view stage, status;
    bool hot_update;
    std::string want;
  };
  const std::vector<Row> rows = {
      {kTrain, kWaiting, kTrain, report_status::kReady, false, "Ready(Train)"},
      {kEval, kWaiting, kEval, report_status::kReady, false, "Ready(Eval)"},
      {kDeploy, kWaiting, kDeploy, report_status::kReady, false, "Ready(Deploy)"},
      {kDeploy, kWaiting, kDeploy, report_status::kCompleted, false, "Completed(Deploy)"},
      {kEval, kWaiting, kEval, report_status::kFailed, false, "Failed(Eval)"},
      {kDeploy, kStarting, kDeploy, report_status::kFailed, false, "Failed(Deploy)"},
      {kDeploy, kStarting, kDeploy, report_status::kInstalled, true, "Completed(Deploy)"},
      {kDeploy, kStarting, kDeploy, report_status::kInstalled, false, "Running(Deploy)"},
      // Stale, repeated or misplaced reports change nothing.
      {kTrain, kReady, kTrain, report_status::kReady, false, "-"},
      {kTrain, kRunning, kTrain, report_status::kReady, false, "-"},
      {kEval, kWaiting, kTrain, report_status::kReady, false, "-"},
      {kTrain, kWaiting, kDeploy, report_status::kCompleted, false, "-"},
      {kTrain, kWaiting, kTrain, report_status::kCompleted, false, "-"},
      {kDeploy, kRunning, kDeploy, report_status::kInstalled, false, "-"},
      {kDeploy, kWaiting, kDeploy, report_status::kInstalled, false, "-"},
      {kTrain, kRunning, kTrain, report_status::kFailed, false, "-"},
      {kTrain, kWaiting, kTrain, "Exploded", false, "-"},
      {kTrain, kWaiting, "Testing", report_status::kReady, false, "-"},
  };
  for (const Row& row : rows) {
    api::Condition latest = Cond(row.latest_stage, row.latest_type);
    INFO(row.latest_type << "(" << row.latest_stage << ") + " << row.stage << " " << row.status);
    StageReportOutcome out = OnStageReport(&latest, row.stage, row.status, "why", row.hot_update);
    CHECK(Show(out.transition) == row.want);
    CHECK(out.transition.has_value() == out.ignored.empty());
  }
  StageReportOutcome none = OnStageReport(nullptr, kTrain, report_status::kReady, "", false);
  CHECK_FALSE(none.transition.has_value());
}

TEST_CASE("OnStageReport: messages say what happened") {
  api::Condition waiting = Cond(kDeploy, kWaiting);
  StageReportOutcome out =
      OnStageReport(&waiting, kDeploy, report_status::kCompleted, "precision_delta 0 not > 0.01",
                    false);
  REQUIRE(out.transition.has_value());
  CHECK(out.transition->reason == reasons::kNotDeployed);
  CHECK(out.transition->message == "the new model is not deployed: precision_delta 0 not > 0.01");
  api::Condition starting = Cond(kDeploy, kStarting);
  out = OnStageReport(&starting, kDeploy, report_status::kInstalled, "model copied", true);
  CHECK(out.transition->reason == reasons::kModelReloaded);
  out = OnStageReport(&starting, kDeploy, report_status::kInstalled, "model copied", false);
  CHECK(out.transition->reason == reasons::kModelInstalled);
}

TEST_CASE("a full round walks Train -> Eval -> Deploy -> Train") {
  std::vector<api::Condition> history;
  auto latest = [&]() -> const api::Condition* {
    return history.empty() ? nullptr : &history.back();
  };
  auto apply = [&](const std::optional<Transition>& t) {
    REQUIRE(t.has_value());
    history.push_back(Cond(t->stage, t->type));
  };
  Facts known;
  known.output_reported = true;
  apply(NextTransition(latest(), {}));
  apply(OnStageReport(latest(), kTrain, report_status::kReady, "", false).transition);
  apply(NextTransition(latest(), {}));
  apply(NextTransition(latest(), Run(RunPhase::kRunning)));
  apply(NextTransition(latest(), Run(RunPhase::kSucceeded)));
  apply(NextTransition(latest(), known));
  apply(OnStageReport(latest(), kEval, report_status::kReady, "", false).transition);
  apply(NextTransition(latest(), {}));
  apply(NextTransition(latest(), Run(RunPhase::kSucceeded)));
  apply(NextTransition(latest(), known));
  apply(OnStageReport(latest(), kDeploy, report_status::kReady, "", false).transition);
  apply(NextTransition(latest(), {}));
  apply(OnStageReport(latest(), kDeploy, report_status::kInstalled, "", false).transition);
  Facts restarted;
  restarted.inference_restarted = true;
  apply(NextTransition(latest(), restarted));
  apply(NextTransition(latest(), {}));
  std::string walk;
  for (const api::Condition& c : history) walk += c.type + "(" + c.stage + ") ";
  CHECK(walk ==
        "Waiting(Train) Ready(Train) Starting(Train) Running(Train) Completed(Train) "
        "Waiting(Eval) Ready(Eval) Starting(Eval) Completed(Eval) Waiting(Deploy) "
        "Ready(Deploy) Starting(Deploy) Running(Deploy) Completed(Deploy) Waiting(Train) ");
}

}  // namespace
}  // namespace nereid::gm::stages
