#include "common/api/validation.h"

#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/api/sedna_contract.h"
#include "common/strings/absl_compat.h"

namespace nereid::api {

using kube::Json;

namespace {

std::string Quote(std::string_view s) {
  std::string shown(s);
  if (shown.size() > 80) shown = shown.substr(0, 77) + "...";
  return absl::StrCat("\"", shown, "\"");
}

}  // namespace

void AddRequired(std::string field, std::string message, Causes* out) {
  out->push_back({std::string(cause_reasons::kRequired), std::move(message), std::move(field)});
}

void AddInvalid(std::string field, std::string message, Causes* out) {
  out->push_back({std::string(cause_reasons::kInvalid), std::move(message), std::move(field)});
}

void RequireNonEmpty(std::string_view value, std::string field, std::string_view what,
                     Causes* out) {
  if (value.empty()) AddRequired(std::move(field), absl::StrCat(ToAbsl(what), " is required"), out);
}

void ValidateObjectName(std::string_view name, std::string field, std::string_view what,
                        Causes* out) {
  if (name.empty()) {
    AddRequired(std::move(field), absl::StrCat(ToAbsl(what), " is required"), out);
  } else if (!IsDnsSubdomain(name)) {
    AddInvalid(std::move(field),
               absl::StrCat(ToAbsl(what), " ", Quote(name),
                            " is not a valid name: use lower-case letters, digits, '-' and '.', "
                            "starting and ending with a letter or digit"),
               out);
  }
}

void ValidateNodeName(std::string_view name, std::string field, bool required, Causes* out) {
  if (name.empty()) {
    if (required) AddRequired(std::move(field), "the node name is required", out);
    return;
  }
  if (!IsDnsSubdomain(name)) {
    AddInvalid(std::move(field),
               absl::StrCat("node name ", Quote(name),
                            " is not a valid node name (lower-case letters, digits, '-' and '.')"),
               out);
  }
}

void ValidateLocation(std::string_view url, std::string field, std::string_view what,
                      const std::vector<std::string_view>& schemes, Causes* out) {
  if (url.empty()) {
    AddRequired(std::move(field), absl::StrCat(ToAbsl(what), " is required"), out);
    return;
  }
  std::string allowed = absl::StrJoin(schemes, ", ", [](std::string* s, std::string_view scheme) {
    absl::StrAppend(s, ToAbsl(scheme), "://");
  });
  size_t sep = url.find("://");
  if (sep != std::string_view::npos) {
    std::string_view scheme = url.substr(0, sep);
    bool known = false;
    for (std::string_view s : schemes) known = known || s == scheme;
    if (!known) {
      out->push_back({std::string(cause_reasons::kNotSupported),
                      absl::StrCat(ToAbsl(what), " ", Quote(url), " uses an unsupported scheme ",
                                   Quote(scheme), "; use an absolute host path or ", allowed),
                      std::move(field)});
    } else if (url.size() == sep + 3) {
      AddInvalid(std::move(field),
                 absl::StrCat(ToAbsl(what), " ", Quote(url), " has nothing after the scheme"), out);
    }
    return;
  }
  if (url.front() != '/') {
    AddInvalid(
        std::move(field),
        absl::StrCat(ToAbsl(what), " ", Quote(url),
                     " must be an absolute host path (starting with '/') or a URL (", allowed, ")"),
        out);
    return;
  }
  for (absl::string_view part : absl::StrSplit(ToAbsl(url), '/')) {
    if (part == "..") {
      AddInvalid(std::move(field),
                 absl::StrCat(ToAbsl(what), " ", Quote(url), " must not contain '..'"), out);
      return;
    }
  }
}

void ValidatePodTemplate(const PodTemplate& pod_template, std::string field,
                         std::string_view worker, Causes* out) {
  if (pod_template.is_null()) {
    AddRequired(std::move(field),
                absl::StrCat("the ", ToAbsl(worker),
                             " needs a pod template (a PodTemplateSpec with spec.containers)"),
                out);
    return;
  }
  if (!pod_template.is_object()) {
    AddInvalid(std::move(field), "the pod template must be an object (a PodTemplateSpec)", out);
    return;
  }
  auto metadata = pod_template.find("metadata");
  if (metadata != pod_template.end() && !metadata->is_null() && !metadata->is_object()) {
    AddInvalid(JoinPath(field, "metadata"), "the pod template metadata must be an object", out);
  }
  std::string spec_field = JoinPath(field, "spec");
  auto spec = pod_template.find("spec");
  if (spec == pod_template.end() || spec->is_null()) {
    AddRequired(spec_field,
                absl::StrCat("the ", ToAbsl(worker),
                             " pod template has no spec; it needs at least one container"),
                out);
    return;
  }
  if (!spec->is_object()) {
    AddInvalid(spec_field, "the pod template spec must be an object (a PodSpec)", out);
    return;
  }
  auto node_name = spec->find("nodeName");
  if (node_name != spec->end() && !node_name->is_null()) {
    if (!node_name->is_string()) {
      AddInvalid(JoinPath(spec_field, "nodeName"), "nodeName must be a string", out);
    } else {
      ValidateNodeName(node_name->get<std::string>(), JoinPath(spec_field, "nodeName"),
                       /*required=*/false, out);
    }
  }
  std::string containers_field = JoinPath(spec_field, "containers");
  auto containers = spec->find("containers");
  if (containers == spec->end() || containers->is_null() ||
      (containers->is_array() && containers->empty())) {
    AddRequired(containers_field,
                absl::StrCat("the ", ToAbsl(worker), " pod template needs at least one container"),
                out);
    return;
  }
  if (!containers->is_array()) {
    AddInvalid(containers_field, "containers must be a list", out);
    return;
  }
  std::set<std::string> names;
  for (size_t i = 0; i < containers->size(); ++i) {
    const Json& c = (*containers)[i];
    std::string c_field = IndexPath(containers_field, i);
    if (!c.is_object()) {
      AddInvalid(c_field, "each container must be an object", out);
      continue;
    }
    auto name = c.find("name");
    if (name == c.end() || !name->is_string() || name->get<std::string>().empty()) {
      AddRequired(JoinPath(c_field, "name"), "every container needs a name", out);
    } else if (!names.insert(name->get<std::string>()).second) {
      out->push_back(
          {std::string(cause_reasons::kDuplicate),
           absl::StrCat("container name ", Quote(name->get<std::string>()), " is used twice"),
           JoinPath(c_field, "name")});
    }
    auto image = c.find("image");
    if (image == c.end() || !image->is_string() || image->get<std::string>().empty()) {
      AddRequired(JoinPath(c_field, "image"), "every container needs an image", out);
    }
  }
}

void ValidateTrigger(const Trigger& trigger, std::string field, Causes* out) {
  if (trigger.check_period_seconds.has_value() && *trigger.check_period_seconds < 1) {
    AddInvalid(
        JoinPath(field, "checkPeriodSeconds"),
        absl::StrCat("checkPeriodSeconds must be at least 1, got ", *trigger.check_period_seconds),
        out);
  }
  if (trigger.timer.has_value()) {
    std::string timer_field = JoinPath(field, "timer");
    for (const auto& [key, value] :
         {std::pair<std::string_view, const std::string*>{"start", &trigger.timer->start},
          {"end", &trigger.timer->end}}) {
      std::string f = JoinPath(timer_field, key);
      if (value->empty()) {
        AddRequired(f, absl::StrCat("the timer ", ToAbsl(key), " time is required (HH:MM)"), out);
      } else if (!IsTimeOfDay(*value)) {
        AddInvalid(f,
                   absl::StrCat("the timer ", ToAbsl(key),
                                " must be a time of day as HH:MM "
                                "(00:00 to 23:59, or 24:00 for the end of the day), got ",
                                Quote(*value)),
                   out);
      }
    }
  }
  std::string cond_field = JoinPath(field, "condition");
  const TriggerCondition& cond = trigger.condition;
  if (cond.op.empty()) {
    AddRequired(JoinPath(cond_field, "operator"), "the trigger condition needs an operator", out);
  } else if (!IsTriggerOperator(cond.op)) {
    out->push_back({std::string(cause_reasons::kNotSupported),
                    absl::StrCat("unknown operator ", Quote(cond.op), "; use one of ",
                                 absl::StrJoin(TriggerOperators(), " ",
                                               [](std::string* s, std::string_view op) {
                                                 absl::StrAppend(s, ToAbsl(op));
                                               })),
                    JoinPath(cond_field, "operator")});
  }
  if (!std::isfinite(cond.threshold)) {
    AddInvalid(JoinPath(cond_field, "threshold"), "the threshold must be a finite number", out);
  }
  std::string metric_field = JoinPath(cond_field, "metric");
  if (cond.metric.empty()) {
    AddRequired(metric_field,
                "the trigger condition needs a metric (e.g. num_of_samples, precision_delta)", out);
  } else {
    // "name" or "name[index]" with a non-negative integer index (Sedna's syntax).
    size_t open = cond.metric.find('[');
    bool ok = true;
    if (open != std::string::npos) {
      std::string_view index = std::string_view(cond.metric).substr(open + 1);
      ok = open > 0 && index.size() >= 2 && index.back() == ']';
      if (ok) {
        index.remove_suffix(1);
        for (char c : index) ok = ok && c >= '0' && c <= '9';
      }
    } else {
      ok = cond.metric.find(']') == std::string::npos;
    }
    if (!ok) {
      AddInvalid(metric_field,
                 absl::StrCat("metric ", Quote(cond.metric),
                              " must be a name or name[index] with a non-negative integer index"),
                 out);
    }
  }
}

void ValidateHardExampleMining(const HardExampleMining& hem, std::string field, Causes* out) {
  RequireNonEmpty(hem.name, JoinPath(field, "name"),
                  "the hard example mining algorithm name (e.g. IBT, CrossEntropy)", out);
  std::set<std::string> keys;
  for (size_t i = 0; i < hem.parameters.size(); ++i) {
    std::string key_field = JoinPath(IndexPath(JoinPath(field, "parameters"), i), "key");
    const std::string& key = hem.parameters[i].key;
    if (key.empty()) {
      AddRequired(key_field, "every hard example mining parameter needs a key", out);
    } else if (!keys.insert(key).second) {
      out->push_back({std::string(cause_reasons::kDuplicate),
                      absl::StrCat("parameter ", Quote(key), " is given twice"), key_field});
    }
  }
}

void ValidateJobDataset(const JobDataset& dataset, std::string field, Causes* out) {
  ValidateObjectName(dataset.name, JoinPath(field, "name"), "the dataset name", out);
  if (!(dataset.train_prob >= 0.0 && dataset.train_prob <= 1.0)) {
    AddInvalid(JoinPath(field, "trainProb"),
               absl::StrCat("trainProb is the fraction of samples used for training and must be "
                            "between 0 and 1, got ",
                            dataset.train_prob),
               out);
  }
}

std::string FormatCauses(const Causes& causes) {
  return absl::StrJoin(causes, "; ", [](std::string* s, const kube::StatusCause& c) {
    if (c.field.empty()) {
      absl::StrAppend(s, c.message);
    } else {
      absl::StrAppend(s, c.field, ": ", c.message);
    }
  });
}

absl::Status InvalidObjectError(std::string_view kind, std::string_view name, Causes causes) {
  return kube::InvalidError(absl::StrCat(ToAbsl(kind), ".", ToAbsl(kGroup)), name,
                            std::move(causes));
}

}  // namespace nereid::api
