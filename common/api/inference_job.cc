#include "common/api/inference_job.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "common/api/validation.h"

namespace nereid::api {

using kube::Json;

namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// batch/v1 JobSpec fields kept as written but not acted on.
constexpr std::string_view kKeptFields[] = {
    "selector",         "manualSelector",       "completionMode", "podFailurePolicy",
    "successPolicy",    "backoffLimitPerIndex", "maxFailedIndexes", "podReplacementPolicy",
    "managedBy"};

std::optional<int32_t> Int32(FieldReader* r, const Json& obj, std::string_view key,
                             std::string_view parent) {
  std::optional<int64_t> v = r->Int(obj, key, parent, std::numeric_limits<int32_t>::min(),
                                    kInt32Max);
  if (!v.has_value()) return std::nullopt;
  return static_cast<int32_t>(*v);
}

}  // namespace

void InlineJobSpec::ToJson(Json* spec) const {
  if (parallelism.has_value()) (*spec)["parallelism"] = *parallelism;
  if (completions.has_value()) (*spec)["completions"] = *completions;
  if (active_deadline_seconds.has_value()) {
    (*spec)["activeDeadlineSeconds"] = *active_deadline_seconds;
  }
  if (backoff_limit.has_value()) (*spec)["backoffLimit"] = *backoff_limit;
  if (ttl_seconds_after_finished.has_value()) {
    (*spec)["ttlSecondsAfterFinished"] = *ttl_seconds_after_finished;
  }
  if (suspend.has_value()) (*spec)["suspend"] = *suspend;
  if (!pod_template.is_null()) (*spec)["template"] = pod_template;
  for (const auto& [key, value] : kept.items()) (*spec)[key] = value;
}

InlineJobSpec ReadInlineJobSpec(const Json& spec, FieldReader* r) {
  InlineJobSpec job;
  job.parallelism = Int32(r, spec, "parallelism", "spec");
  job.completions = Int32(r, spec, "completions", "spec");
  job.active_deadline_seconds = r->Int(spec, "activeDeadlineSeconds", "spec");
  job.backoff_limit = Int32(r, spec, "backoffLimit", "spec");
  job.ttl_seconds_after_finished = Int32(r, spec, "ttlSecondsAfterFinished", "spec");
  job.suspend = r->Bool(spec, "suspend", "spec");
  job.pod_template = ReadPodTemplate(spec, "template", "spec", r);
  for (std::string_view key : kKeptFields) {
    if (const Json* value = FieldReader::Get(spec, key)) job.kept[std::string(key)] = *value;
  }
  return job;
}

std::string TemplateRestartPolicy(const PodTemplate& pod_template) {
  if (!pod_template.is_object()) return "";
  return kube::StringAt(pod_template, "spec.restartPolicy");
}

void ValidateInlineJobSpec(const InlineJobSpec& job, std::string_view worker, Causes* out) {
  ValidatePodTemplate(job.pod_template, "spec.template", worker, out);
  const std::string restart = TemplateRestartPolicy(job.pod_template);
  if (restart == "Always") {
    AddInvalid("spec.template.spec.restartPolicy",
               "restartPolicy Always is not supported: a job's pod must be able to finish; use "
               "Never (the default) or OnFailure, failures are retried up to backoffLimit",
               out);
  } else if (!restart.empty() && restart != "OnFailure" && restart != "Never") {
    AddInvalid("spec.template.spec.restartPolicy",
               absl::StrCat("restartPolicy must be OnFailure or Never, got \"", restart, "\""),
               out);
  }
  if (job.completions.has_value() && *job.completions < 1) {
    AddInvalid("spec.completions",
               absl::StrCat("completions must be at least 1, got ", *job.completions), out);
  }
  if (job.parallelism.has_value()) {
    if (*job.parallelism < 1) {
      AddInvalid("spec.parallelism",
                 absl::StrCat("parallelism must be at least 1 (use suspend to stop the job), got ",
                              *job.parallelism),
                 out);
    } else if (*job.parallelism < job.Completions()) {
      AddInvalid("spec.parallelism",
                 absl::StrCat("parallelism (", *job.parallelism, ") is less than completions (",
                              job.Completions(),
                              "): every completion runs at once, so set parallelism to at least "
                              "completions or leave it out"),
                 out);
    }
  }
  if (job.active_deadline_seconds.has_value() && *job.active_deadline_seconds < 1) {
    AddInvalid("spec.activeDeadlineSeconds",
               absl::StrCat("activeDeadlineSeconds must be at least 1, got ",
                            *job.active_deadline_seconds),
               out);
  }
  if (job.backoff_limit.has_value() && *job.backoff_limit < 0) {
    AddInvalid("spec.backoffLimit",
               absl::StrCat("backoffLimit must not be negative, got ", *job.backoff_limit), out);
  }
  if (job.ttl_seconds_after_finished.has_value() && *job.ttl_seconds_after_finished < 0) {
    AddInvalid("spec.ttlSecondsAfterFinished",
               absl::StrCat("ttlSecondsAfterFinished must not be negative, got ",
                            *job.ttl_seconds_after_finished),
               out);
  }
}

Json InferenceJobStatus::ToJson() const {
  Json json = {{"active", active}, {"succeeded", succeeded}, {"failed", failed}};
  if (!phase.empty()) json["phase"] = phase;
  if (!conditions.empty()) json["conditions"] = ConditionsToJson(conditions);
  PutTime(&json, "startTime", start_time);
  PutTime(&json, "completionTime", completion_time);
  if (restarts.has_value()) json["restarts"] = *restarts;
  if (!metrics.empty()) {
    Json list = Json::array();
    for (const Metric& m : metrics) list.push_back(m.ToJson());
    json["metrics"] = std::move(list);
  }
  if (observed_generation.has_value()) json["observedGeneration"] = *observed_generation;
  if (!job.is_null()) json["job"] = job;
  return json;
}

InferenceJobStatus ReadInferenceJobStatus(const Json& status, FieldReader* r) {
  InferenceJobStatus st;
  auto count = [&](std::string_view key) {
    return static_cast<int32_t>(r->Int(status, key, "status", 0, kInt32Max).value_or(0));
  };
  st.phase = r->String(status, "phase", "status").value_or("");
  st.conditions = ReadConditions(status, "status", r);
  st.start_time = r->Time(status, "startTime", "status");
  st.completion_time = r->Time(status, "completionTime", "status");
  st.active = count("active");
  st.succeeded = count("succeeded");
  st.failed = count("failed");
  if (std::optional<int64_t> restarts = r->Int(status, "restarts", "status", 0, kInt32Max)) {
    st.restarts = static_cast<int32_t>(*restarts);
  }
  st.metrics = ReadKeyValues(status, "metrics", "status", r);
  st.observed_generation = r->Int(status, "observedGeneration", "status", 0);
  if (const Json* job = r->Object(status, "job", "status")) st.job = *job;
  return st;
}

}  // namespace nereid::api
