#include "common/job/quantity.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/strings/absl_compat.h"

namespace nereid::job {
namespace {

using kube::Json;
using Int = __int128;

constexpr Int kLimit = Int{1} << 62;

absl::Status Bad(std::string_view quantity, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("quantity \"", ToAbsl(quantity), "\" is invalid: ", ToAbsl(why)));
}

// value = mantissa * 10^exp10 * 2^exp2 (milli-units: exp10 already includes the +3).
absl::StatusOr<int64_t> Scale(std::string_view quantity, bool negative, Int mantissa, int exp10,
                              int exp2) {
  Int value = mantissa;
  for (; exp2 > 0; --exp2) {
    value *= 2;
    if (value > kLimit) return Bad(quantity, "too large");
  }
  for (; exp10 > 0; --exp10) {
    value *= 10;
    if (value > kLimit) return Bad(quantity, "too large");
  }
  bool remainder = false;
  for (; exp10 < 0; ++exp10) {
    remainder = remainder || value % 10 != 0;
    value /= 10;
  }
  if (remainder) value += 1;  // Round up to the next milli-unit, as Kubernetes does.
  if (value > kLimit) return Bad(quantity, "too large");
  return static_cast<int64_t>(negative ? -value : value);
}

}  // namespace

absl::StatusOr<int64_t> ParseQuantityMilli(std::string_view quantity) {
  std::string_view s = quantity;
  if (s.empty()) return Bad(quantity, "empty");
  bool negative = false;
  if (s.front() == '+' || s.front() == '-') {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  Int mantissa = 0;
  int exp10 = 3;  // milli-units
  int digits = 0;
  bool point = false;
  size_t i = 0;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.' && !point) {
      point = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    if (mantissa > kLimit) return Bad(quantity, "too many digits");
    mantissa = mantissa * 10 + (c - '0');
    if (point) --exp10;
    ++digits;
  }
  if (digits == 0) return Bad(quantity, "no digits");
  std::string_view suffix = s.substr(i);
  int exp2 = 0;
  static const std::pair<std::string_view, int> kBinary[] = {
      {"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60}};
  static const std::pair<std::string_view, int> kDecimal[] = {
      {"n", -9}, {"u", -6}, {"m", -3}, {"", 0}, {"k", 3}, {"M", 6}, {"G", 9}, {"T", 12},
      {"P", 15}, {"E", 18}};
  bool known = false;
  for (const auto& [name, e] : kBinary) {
    if (suffix == name) {
      exp2 = e;
      known = true;
    }
  }
  for (const auto& [name, e] : kDecimal) {
    if (suffix == name) {
      exp10 += e;
      known = true;
    }
  }
  if (!known && suffix.size() >= 2 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    std::string_view exponent = suffix.substr(1);
    bool minus = false;
    if (exponent.front() == '+' || exponent.front() == '-') {
      minus = exponent.front() == '-';
      exponent.remove_prefix(1);
    }
    if (!exponent.empty() && exponent.size() <= 3 &&
        std::all_of(exponent.begin(), exponent.end(),
                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; })) {
      int e = 0;
      for (char c : exponent) e = e * 10 + (c - '0');
      exp10 += minus ? -e : e;
      known = true;
    }
  }
  if (!known) return Bad(quantity, absl::StrCat("unknown suffix \"", ToAbsl(suffix), "\""));
  if (exp10 > 40 || exp10 < -40) return Bad(quantity, "exponent out of range");
  return Scale(quantity, negative, mantissa, exp10, exp2);
}

std::string FormatQuantityMilli(int64_t milli) {
  if (milli % 1000 != 0) return absl::StrCat(milli, "m");
  int64_t units = milli / 1000;
  if (units != 0) {
    static const std::pair<std::string_view, int> kBinary[] = {
        {"Ei", 60}, {"Pi", 50}, {"Ti", 40}, {"Gi", 30}, {"Mi", 20}, {"Ki", 10}};
    for (const auto& [name, e] : kBinary) {
      const int64_t unit = int64_t{1} << e;
      if (units % unit == 0) return absl::StrCat(units / unit, ToAbsl(name));
    }
  }
  return absl::StrCat(units);
}

bool AddResources(ResourceList* a, const ResourceList& b) {
  bool ok = true;
  for (const auto& [name, value] : b) {
    const Int sum = Int{(*a)[name]} + value;
    if (sum > kLimit || sum < -kLimit) {
      ok = false;
      continue;
    }
    (*a)[name] = static_cast<int64_t>(sum);
  }
  return ok;
}

namespace {

// A container's requests, with limits standing in for resources it only limits.
absl::StatusOr<ResourceList> ContainerRequests(const Json& container, const std::string& path) {
  ResourceList out;
  for (const char* kind : {"limits", "requests"}) {  // requests last: they win
    const Json* list = kube::FindPath(container, std::string("resources.") + kind);
    if (list == nullptr || !list->is_object()) continue;
    for (const auto& [name, value] : list->items()) {
      std::string text;
      if (value.is_string()) {
        text = value.get<std::string>();
      } else if (value.is_number_integer()) {
        text = std::to_string(value.get<int64_t>());
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ".resources.", kind, ".", name, ": not a quantity"));
      }
      absl::StatusOr<int64_t> milli = ParseQuantityMilli(text);
      if (!milli.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(path, ".resources.", kind, ".", name, ": ",
                                                       milli.status().message()));
      }
      out[name] = *milli;
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<ResourceList> PodRequests(const Json& pod_spec) {
  ResourceList sum;
  ResourceList init_max;
  for (const char* field : {"containers", "initContainers"}) {
    const Json* list = kube::FindPath(pod_spec, field);
    if (list == nullptr || !list->is_array()) continue;
    const bool init = std::string_view(field) == "initContainers";
    for (size_t i = 0; i < list->size(); ++i) {
      if (!(*list)[i].is_object()) continue;
      absl::StatusOr<ResourceList> requests =
          ContainerRequests((*list)[i], absl::StrCat("spec.", field, "[", i, "]"));
      if (!requests.ok()) return requests.status();
      if (init) {
        for (const auto& [name, value] : *requests) {
          init_max[name] = std::max(init_max[name], value);
        }
      } else if (!AddResources(&sum, *requests)) {
        return absl::InvalidArgumentError("pod requests overflow");
      }
    }
  }
  for (const auto& [name, value] : init_max) sum[name] = std::max(sum[name], value);
  if (const Json* overhead = kube::FindPath(pod_spec, "overhead");
      overhead != nullptr && overhead->is_object()) {
    absl::StatusOr<ResourceList> extra =
        ContainerRequests(Json{{"resources", {{"requests", *overhead}}}}, "spec.overhead");
    if (!extra.ok()) return extra.status();
    if (!AddResources(&sum, *extra)) return absl::InvalidArgumentError("pod requests overflow");
  }
  return sum;
}

Json ResourceListToJson(const ResourceList& list) {
  Json out = Json::object();
  for (const auto& [name, milli] : list) out[name] = FormatQuantityMilli(milli);
  return out;
}

}  // namespace nereid::job
