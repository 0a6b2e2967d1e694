#pragma once

// Reads deploy/optional/monitoring/ for the monitoring tests: the PrometheusRule's spec as a plain
// Prometheus rule file, and every PromQL expression of the rules and the Grafana dashboards with
// the metric names they use. Header-only; Catch2 REQUIREs on unreadable files.

#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/api/yaml_json.h"
#include "common/kube/object.h"

namespace nereid::testing {

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  INFO("reading " << path);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline const std::string& MonitoringDir() {
  static const std::string dir = std::string(NEREID_SOURCE_DIR) + "/deploy/optional/monitoring";
  return dir;
}

// The PrometheusRule's spec ({"groups": [...]}), which is what a Prometheus rule file holds.
inline kube::Json RuleFileSpec() {
  auto docs = api::YamlToJson(ReadText(MonitoringDir() + "/prometheusrule.yaml"));
  INFO(docs.status().ToString());
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 1);
  REQUIRE((*docs)[0].value("kind", "") == "PrometheusRule");
  return (*docs)[0].at("spec");
}

// Every alerting and recording rule of the spec.
inline std::vector<kube::Json> Rules(const kube::Json& spec) {
  std::vector<kube::Json> rules;
  for (const kube::Json& group : spec.at("groups")) {
    for (const kube::Json& rule : group.at("rules")) rules.push_back(rule);
  }
  return rules;
}

inline const std::vector<std::string>& DashboardFiles() {
  static const std::vector<std::string> files = {"nereid-fleet.json", "nereid-gm.json",
                                                 "nereid-node.json"};
  return files;
}

inline kube::Json Dashboard(const std::string& file) {
  kube::Json dashboard =
      kube::Json::parse(ReadText(MonitoringDir() + "/dashboards/" + file), nullptr, false);
  INFO(file << " is not JSON");
  REQUIRE(dashboard.is_object());
  return dashboard;
}

struct Expression {
  std::string where;  // "rule NereidGMNoLeader", "nereid-gm.json: Work queue depth"
  std::string promql;
};

// The expressions of every rule, every dashboard panel target and every templating query.
inline std::vector<Expression> AllExpressions() {
  std::vector<Expression> out;
  for (const kube::Json& rule : Rules(RuleFileSpec())) {
    out.push_back({"rule " + rule.value("alert", rule.value("record", "")),
                   rule.at("expr").get<std::string>()});
  }
  for (const std::string& file : DashboardFiles()) {
    const kube::Json dashboard = Dashboard(file);
    for (const kube::Json& panel : dashboard.value("panels", kube::Json::array())) {
      for (const kube::Json& target : panel.value("targets", kube::Json::array())) {
        out.push_back(
            {file + ": " + panel.value("title", ""), target.at("expr").get<std::string>()});
      }
    }
    for (const kube::Json& variable : dashboard["templating"].value("list", kube::Json::array())) {
      if (variable.value("type", "") != "query") continue;
      out.push_back({file + ": variable " + variable.value("name", ""),
                     variable.at("definition").get<std::string>()});
    }
  }
  return out;
}

// The metric names an expression reads. Nereid's metrics all start with `nereid_`, and no label,
// function or keyword does, so the names are exactly the `nereid_...` words.
inline std::set<std::string> MetricNames(const std::string& promql) {
  static const std::regex name(R"(\bnereid_[a-zA-Z0-9_:]*)");
  std::set<std::string> names;
  for (auto it = std::sregex_iterator(promql.begin(), promql.end(), name);
       it != std::sregex_iterator(); ++it) {
    names.insert(it->str());
  }
  return names;
}

}  // namespace nereid::testing
