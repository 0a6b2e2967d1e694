#pragma once

// IncrementalLearningJob (sedna.io/v1alpha1, `il`) on the shared stage-machine controller
// (staged_job_controller.h has the behaviour). What is specific to this kind:
//   - spec: dataset, initialModel, trainSpec{template, trigger}, evalSpec{template, initialModel},
//     deploySpec{model{name, hotUpdateEnabled, pollPeriodSeconds}, trigger, hardExampleMining,
//     template}, outputDir, credentialName, and Nereid's optional runPolicy;
//   - train pod: BASE_MODEL_URL (the stage input's first model), MODEL_URL (the round's output
//     directory), TRAIN_DATASET_URL (the round's samples), ORIGINAL_DATASET_URL (the data index,
//     else the Dataset's url); eval pod: MODEL_URLS (the models to compare), TEST_DATASET_URL,
//     ORIGINAL_DATASET_URL — each a hostPath mount for host paths (Sedna's layout), as is for
//     http(s)/s3 URLs;
//   - inference pod: MODEL_URL (the deploy Model), HEM_NAME / HEM_PARAMETERS, and the model hot
//     update mount and env when deploySpec.model.hotUpdateEnabled;
//   - the edge spec edge::v1::IncrementalLearningJobSpec (both triggers, the models, hot update).

#include <memory>

#include "absl/status/statusor.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/gm_controller.h"
#include "globalmanager/controllers/staged_job.h"
#include "globalmanager/controllers/staged_job_controller.h"

namespace nereid::gm {

std::unique_ptr<StagedKind> IncrementalLearningKind();

// The DefaultRegistry() factory: null (the kind is skipped, with a warning) when the API server
// does not serve incrementallearningjobs.sedna.io.
absl::StatusOr<std::unique_ptr<GmController>> MakeIncrementalLearningController(
    ControllerContext& context);

}  // namespace nereid::gm
