#pragma once

// LifelongLearningJob (sedna.io/v1alpha1, `ll`) on the shared stage-machine controller
// (staged_job_controller.h has the behaviour). What is specific to this kind:
//   - spec: dataset, trainSpec{template, trigger}, evalSpec{template}, deploySpec{template},
//     outputDir, credentialName, and Nereid's optional runPolicy (no Models, no deploy trigger:
//     every evaluated round is deployed, as Sedna);
//   - train pod: OUTPUT_URL (the round's output directory), TRAIN_DATASET_URL,
//     ORIGINAL_DATASET_URL, KB_SERVER, HAS_COMPLETED_INITIAL_TRAINING and, after the first round,
//     CLOUD_KB_INDEX (the latest training output); eval pod: MODEL_URLS, OUTPUT_URL,
//     TEST_DATASET_URL, ORIGINAL_DATASET_URL, KB_SERVER; dnsPolicy ClusterFirstWithHostNet
//     unless the template sets one (hostNetwork pods that must resolve the KB Service);
//   - inference pod: from the first deploy on, MODEL_URLS = <outputDir>/deploy/index.pkl (where
//     the deploy node's LC installs the knowledge base index);
//   - status.knowledgeBase from the models the train/eval workers report (Sedna's
//     updateStatusKnowledgeBase: AIModels from each model's current_metric, AIClasses from the
//     first model's classes, samples from number_of_labeled_unseen_sample), at most
//     kMaxKbModels listed;
//   - the edge spec edge::v1::LifelongLearningJobSpec.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/kube/object.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/gm_controller.h"
#include "globalmanager/controllers/staged_job.h"
#include "globalmanager/controllers/staged_job_controller.h"

namespace nereid::gm {

inline constexpr size_t kMaxKbModels = 100;

// `kb_server` is injected as KB_SERVER (ControllerSettings::kb_server).
std::unique_ptr<StagedKind> LifelongLearningKind(std::string kb_server);

// Sedna's knowledge base summary from reported output models; nullopt when there are none.
std::optional<kube::Json> KnowledgeBaseFromModels(const kube::Json& models);

absl::StatusOr<std::unique_ptr<GmController>> MakeLifelongLearningController(
    ControllerContext& context);

}  // namespace nereid::gm
