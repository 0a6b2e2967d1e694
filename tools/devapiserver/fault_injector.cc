#include "tools/devapiserver/fault_injector.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/strings/absl_compat.h"

namespace nereid::devapi {
namespace {

// A non-negative integer field of `body`, or `fallback` when absent.
absl::StatusOr<int64_t> OptionalCount(const kube::Json& body, const char* field,
                                      int64_t fallback) {
  if (!body.contains(field)) return fallback;
  const kube::Json& value = body[field];
  if (!value.is_number_integer() || value.get<int64_t>() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(field, " must be a non-negative integer"));
  }
  return value.get<int64_t>();
}

}  // namespace

absl::StatusOr<FaultRule> FaultInjector::RuleFromJson(const kube::Json& body, absl::Time now) {
  if (!body.is_object()) return absl::InvalidArgumentError("the body must be a JSON object");
  const kube::Json* code = body.contains("code") ? &body["code"] : nullptr;
  if (code == nullptr || !code->is_number_integer() || code->get<int>() < 400 ||
      code->get<int>() > 599) {
    return absl::InvalidArgumentError("code must be an HTTP error status (400..599)");
  }
  FaultRule rule;
  rule.code = code->get<int>();
  absl::StatusOr<int64_t> retry_after = OptionalCount(body, "retryAfterSeconds", -1);
  absl::StatusOr<int64_t> count = OptionalCount(body, "count", -1);
  absl::StatusOr<int64_t> duration = OptionalCount(body, "durationSeconds", -1);
  for (const absl::Status& s : {retry_after.status(), count.status(), duration.status()}) {
    if (!s.ok()) return s;
  }
  rule.retry_after_seconds = *retry_after;
  rule.count = *count;
  if (*duration >= 0) rule.until = now + absl::Seconds(*duration);
  for (auto [field, out] : {std::pair{"userAgent", &rule.user_agent},
                            std::pair{"resource", &rule.resource}, std::pair{"verb", &rule.verb}}) {
    if (!body.contains(field)) continue;
    if (!body[field].is_string()) {
      return absl::InvalidArgumentError(absl::StrCat(field, " must be a string"));
    }
    *out = body[field].get<std::string>();
  }
  return rule;
}

bool FaultInjector::ActiveLocked(absl::Time now) const {
  return rule_.has_value() && rule_->count != 0 && now < rule_->until;
}

std::optional<InjectedFault> FaultInjector::Intercept(std::string_view user_agent,
                                                      const RequestKind& request) {
  absl::MutexLock lock(&mu_);
  if (!ActiveLocked(clock_->Now())) return std::nullopt;
  if (!rule_->user_agent.empty() && !absl::StrContains(ToAbsl(user_agent), rule_->user_agent)) {
    return std::nullopt;
  }
  if ((!rule_->resource.empty() && rule_->resource != request.resource) ||
      (!rule_->verb.empty() && rule_->verb != request.verb)) {
    return std::nullopt;
  }
  if (rule_->count > 0) --rule_->count;
  ++injected_;
  return InjectedFault{rule_->code, rule_->retry_after_seconds};
}

void FaultInjector::Set(FaultRule rule) {
  absl::MutexLock lock(&mu_);
  rule_ = std::move(rule);
  injected_ = 0;
}

void FaultInjector::Clear() {
  absl::MutexLock lock(&mu_);
  rule_.reset();
}

kube::Json FaultInjector::Snapshot() const {
  absl::MutexLock lock(&mu_);
  kube::Json out = {{"active", ActiveLocked(clock_->Now())}, {"injected", injected_}};
  if (rule_.has_value()) {
    out["rule"] = {{"code", rule_->code},
                   {"retryAfterSeconds", rule_->retry_after_seconds},
                   {"remaining", rule_->count},
                   {"userAgent", rule_->user_agent},
                   {"resource", rule_->resource},
                   {"verb", rule_->verb}};
  }
  return out;
}

}  // namespace nereid::devapi
