#pragma once

// Shared fixtures for devapiserver unit tests: a Store on a FakeClock with small history.

#include <memory>
#include <string>

#include "common/kube/object.h"
#include "common/time/fake_clock.h"
#include "tools/devapiserver/registry.h"
#include "tools/devapiserver/storage.h"

namespace nereid::devapi::testing {

inline Json WidgetCrd() {
  return Json::parse(R"({
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.test.nereid.io"},
    "spec": {"group": "test.nereid.io", "scope": "Namespaced",
      "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                "shortNames": ["wdg"], "categories": ["nereidtest"]},
      "versions": [{"name": "v1alpha1", "served": true, "storage": true,
        "subresources": {"status": {}},
        "additionalPrinterColumns": [
          {"name": "Format", "type": "string", "jsonPath": ".spec.format"},
          {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
          {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"},
          {"name": "Owner", "type": "string", "priority": 1, "jsonPath": ".spec.owner"},
          {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}],
        "schema": {"openAPIV3Schema": {"type": "object", "properties": {
          "spec": {"type": "object", "required": ["format"], "properties": {
            "format": {"type": "string", "enum": ["txt", "csv", "json"]},
            "replicas": {"type": "integer", "minimum": 0, "maximum": 10, "default": 1},
            "owner": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 8},
            "tags": {"type": "array", "maxItems": 2, "items": {"type": "string"}},
            "port": {"x-kubernetes-int-or-string": true},
            "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
          "status": {"type": "object", "properties": {
            "phase": {"type": "string"},
            "conditions": {"type": "array", "items": {"type": "object", "properties": {
              "type": {"type": "string"}, "status": {"type": "string"}}}}}}}}}}]}})");
}

inline Json Widget(const std::string& name, const std::string& format = "csv") {
  return Json{{"apiVersion", "test.nereid.io/v1alpha1"},
              {"kind", "Widget"},
              {"metadata", {{"name", name}}},
              {"spec", {{"format", format}}}};
}

inline Json ConfigMap(const std::string& name, Json data = Json::object()) {
  return Json{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", name}}}, {"data", data}};
}

class StoreFixture {
 public:
  explicit StoreFixture(size_t history = 1000, Persistence* persistence = nullptr) {
    StoreOptions options;
    options.clock = &clock;
    options.history_size = history;
    options.persistence = persistence;
    store = std::make_unique<Store>(&registry, options);
    status = store->Start();
  }

  const ResourceType& Type(const std::string& storage_key) {
    ResourceTypePtr t = registry.FindByStorageKey(storage_key);
    if (t == nullptr) throw std::runtime_error("no type " + storage_key);
    keep.push_back(t);
    return *t;
  }
  const ResourceType& ConfigMaps() { return Type("/configmaps"); }
  const ResourceType& Pods() { return Type("/pods"); }
  const ResourceType& Namespaces() { return Type("/namespaces"); }
  const ResourceType& Widgets() { return Type("test.nereid.io/widgets"); }
  void InstallWidgets() {
    auto created = store->Create(Type("apiextensions.k8s.io/customresourcedefinitions"), "", WidgetCrd());
    if (!created.ok()) throw std::runtime_error(created.status().ToString());
  }

  FakeClock clock;
  Registry registry;
  std::unique_ptr<Store> store;
  absl::Status status;
  std::vector<ResourceTypePtr> keep;
};

}  // namespace nereid::devapi::testing
