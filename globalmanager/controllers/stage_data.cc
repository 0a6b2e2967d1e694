#include "globalmanager/controllers/stage_data.h"

#include "absl/strings/numbers.h"
#include "common/kube/object.h"
#include "common/strings/absl_compat.h"

namespace nereid::gm {
namespace {

using kube::Json;

const Json& EmptyArray() {
  static const Json* empty = new Json(Json::array());
  return *empty;
}

const Json& ModelsAt(const Json& data, const char* part) {
  if (!data.is_object()) return EmptyArray();
  auto it = data.find(part);
  if (it == data.end() || !it->is_object()) return EmptyArray();
  auto models = it->find("models");
  if (models == it->end() || !models->is_array()) return EmptyArray();
  return *models;
}

std::string StringField(const Json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

std::optional<double> Number(const Json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    double d = 0;
    if (absl::SimpleAtod(v.get<std::string>(), &d)) return d;
  }
  return std::nullopt;
}

// Keeps format and url of every model (what the next stage needs).
void StripModels(Json* part) {
  if (!part->is_object()) return;
  auto models = part->find("models");
  if (models == part->end() || !models->is_array()) return;
  for (Json& m : *models) {
    if (!m.is_object()) continue;
    Json slim = Json::object();
    for (const char* key : {"format", "url"}) {
      if (m.contains(key)) slim[key] = m[key];
    }
    m = std::move(slim);
  }
}

}  // namespace

Json ParseStageData(std::string_view data) {
  if (data.empty()) return Json::object();
  Json parsed = Json::parse(data.begin(), data.end(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) return Json::object();
  return parsed;
}

std::string DumpStageData(const Json& data) {
  if (!data.is_object() || data.empty()) return "";
  std::string text = kube::DumpCompact(data);
  if (text.size() <= kMaxDataBytes) return text;
  Json slim = data;
  for (const char* part : {"output", "input"}) {
    if (slim.contains(part)) StripModels(&slim[part]);
  }
  text = kube::DumpCompact(slim);
  if (text.size() <= kMaxDataBytes) return text;
  // Still too big (absurd URLs): keep nothing rather than a status the API server refuses.
  return "";
}

const Json& InputModels(const Json& data) { return ModelsAt(data, "input"); }
const Json& OutputModels(const Json& data) { return ModelsAt(data, "output"); }

std::vector<std::string> ModelUrls(const Json& models) {
  std::vector<std::string> urls;
  if (!models.is_array()) return urls;
  for (const Json& m : models) {
    std::string url = StringField(m, "url");
    if (!url.empty()) urls.push_back(std::move(url));
  }
  return urls;
}

std::optional<Json> ModelsFromResults(std::string_view results_json) {
  if (results_json.empty()) return Json::array();
  Json parsed =
      Json::parse(results_json.begin(), results_json.end(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return std::nullopt;
  if (parsed.is_null()) return Json::array();
  if (!parsed.is_array()) return std::nullopt;
  Json models = Json::array();
  for (Json& m : parsed) {
    if (!m.is_object()) continue;
    if (models.size() >= kMaxModels) break;
    models.push_back(std::move(m));
  }
  return models;
}

Json InputFromProto(const edge::v1::StageInput& input) {
  Json out = Json::object();
  if (input.models_size() > 0) {
    Json models = Json::array();
    for (const edge::v1::ModelInfo& m : input.models()) {
      if (models.size() >= kMaxModels) break;
      Json model = {{"format", m.format()}, {"url", m.url()}};
      if (m.metrics_size() > 0) {
        Json metrics = Json::object();
        for (const auto& [name, value] : m.metrics()) {
          metrics[name] = Json(std::vector<double>(value.values().begin(), value.values().end()));
        }
        model["metrics"] = std::move(metrics);
      }
      models.push_back(std::move(model));
    }
    out["models"] = std::move(models);
  }
  if (!input.data_url().empty()) out["dataURL"] = input.data_url();
  if (!input.data_index_url().empty()) out["dataIndexURL"] = input.data_index_url();
  if (!input.output_dir().empty()) out["outputDir"] = input.output_dir();
  return out;
}

void ModelToProto(const Json& model, edge::v1::ModelInfo* out) {
  out->set_format(StringField(model, "format"));
  out->set_url(StringField(model, "url"));
  if (!model.is_object()) return;
  auto metrics = model.find("metrics");
  if (metrics == model.end() || !metrics->is_object()) return;
  for (const auto& [name, value] : metrics->items()) {
    edge::v1::MetricValue mv;
    if (value.is_array()) {
      for (const Json& v : value) {
        if (std::optional<double> d = Number(v)) mv.add_values(*d);
      }
    } else if (std::optional<double> d = Number(value)) {
      mv.add_values(*d);
    }
    if (mv.values_size() > 0) (*out->mutable_metrics())[name] = std::move(mv);
  }
}

void InputToProto(const Json& input, edge::v1::StageInput* out) {
  if (!input.is_object()) return;
  if (auto models = input.find("models"); models != input.end() && models->is_array()) {
    for (const Json& m : *models) {
      if (m.is_object()) ModelToProto(m, out->add_models());
    }
  }
  out->set_data_url(StringField(input, "dataURL"));
  out->set_data_index_url(StringField(input, "dataIndexURL"));
  out->set_output_dir(StringField(input, "outputDir"));
}

void OutputToProto(const Json& output, edge::v1::StageOutput* out) {
  if (!output.is_object()) return;
  if (auto models = output.find("models"); models != output.end() && models->is_array()) {
    for (const Json& m : *models) {
      if (m.is_object()) ModelToProto(m, out->add_models());
    }
  }
}

}  // namespace nereid::gm
