#pragma once

// The `data` of an IL/LL stage condition — Sedna's ConditionData, a JSON object kept as a string:
//   {"input":  {"models": [{"format", "url", "metrics", ...}], "dataURL", "dataIndexURL",
//               "outputDir"},
//    "output": {"models": [...]}}
// and its conversions to and from the edge protocol (StageInput / StageOutput / ModelInfo). Models
// are kept as the workers reported them (LifelongLearningJob workers add current_metric, classes,
// number_of_labeled_unseen_sample, ...), only bounded: at most kMaxModels per list and
// kMaxDataBytes per condition, because the status of a CR is not a blob store.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/kube/object.h"
#include "nereid/edge/v1/resources.pb.h"

namespace nereid::gm {

inline constexpr size_t kMaxModels = 16;
inline constexpr size_t kMaxDataBytes = 32 * 1024;

// Parses a condition's data; an empty, malformed or non-object string gives {}.
kube::Json ParseStageData(std::string_view data);
// Serializes `data` for a condition ("" for {} or null). Oversized data keeps its input and
// output URLs but drops model details (metrics, extra fields) until it fits.
std::string DumpStageData(const kube::Json& data);

// data.input.models / data.output.models ([] when absent).
const kube::Json& InputModels(const kube::Json& data);
const kube::Json& OutputModels(const kube::Json& data);
// The "url" of each model object, in order (non-string urls skipped).
std::vector<std::string> ModelUrls(const kube::Json& models);

// A worker report's `results` (JSON text): the array of model objects it holds (at most
// kMaxModels; non-objects dropped), or nullopt when it is not a JSON array.
std::optional<kube::Json> ModelsFromResults(std::string_view results_json);

// The LC's stage input as condition data input ({"models", "dataURL", "dataIndexURL",
// "outputDir"}, empty fields left out).
kube::Json InputFromProto(const edge::v1::StageInput& input);
// And back, for what the GM tells the LC about the current stage.
void InputToProto(const kube::Json& input, edge::v1::StageInput* out);
void OutputToProto(const kube::Json& output, edge::v1::StageOutput* out);
// One model object → ModelInfo (metrics: a number, a numeric string or a list of numbers each).
void ModelToProto(const kube::Json& model, edge::v1::ModelInfo* out);

}  // namespace nereid::gm
