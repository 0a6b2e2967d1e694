#include "tools/devapiserver/discovery.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"

namespace nereid::devapi {
namespace {

using kube::Json;

std::string GroupVersion(const std::string& group, const std::string& version) {
  return group.empty() ? version : absl::StrCat(group, "/", version);
}

bool Serves(const ResourceType& t, const std::string& version) {
  return std::find(t.served_versions.begin(), t.served_versions.end(), version) !=
         t.served_versions.end();
}

// group -> served versions in preference order (first CRD/built-in order seen).
std::map<std::string, std::vector<std::string>> GroupVersions(const Registry& registry) {
  std::map<std::string, std::vector<std::string>> out;
  for (const ResourceTypePtr& t : registry.All()) {
    auto& versions = out[t->resource.group];
    for (const std::string& v : t->served_versions) {
      if (std::find(versions.begin(), versions.end(), v) == versions.end()) versions.push_back(v);
    }
  }
  return out;
}

Json GroupJson(const std::string& group, const std::vector<std::string>& versions) {
  Json list = Json::array();
  for (const std::string& v : versions) {
    list.push_back({{"groupVersion", GroupVersion(group, v)}, {"version", v}});
  }
  return {{"name", group}, {"versions", list}, {"preferredVersion", list.empty() ? Json::object() : list[0]}};
}

}  // namespace

Json VersionDocument() {
  return {{"major", "1"},
          {"minor", "32"},
          {"gitVersion", "v1.32.0-nereid-devapiserver"},
          {"gitCommit", "0000000000000000000000000000000000000000"},
          {"gitTreeState", "clean"},
          {"buildDate", "2025-01-01T00:00:00Z"},
          {"goVersion", "n/a (C++)"},
          {"compiler", "gc"},
          {"platform", "linux/amd64"}};
}

Json ApiVersions(const std::string& server_address) {
  return {{"kind", "APIVersions"},
          {"versions", Json::array({"v1"})},
          {"serverAddressByClientCIDRs",
           Json::array({{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", server_address}}})}};
}

Json ApiGroupList(const Registry& registry) {
  Json groups = Json::array();
  for (const auto& [group, versions] : GroupVersions(registry)) {
    if (group.empty()) continue;
    groups.push_back(GroupJson(group, versions));
  }
  return {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}};
}

Json ApiGroup(const Registry& registry, const std::string& group) {
  auto all = GroupVersions(registry);
  auto it = all.find(group);
  if (group.empty() || it == all.end()) return nullptr;
  Json doc = GroupJson(group, it->second);
  doc["kind"] = "APIGroup";
  doc["apiVersion"] = "v1";
  return doc;
}

Json ApiResourceList(const Registry& registry, const std::string& group, const std::string& version) {
  Json resources = Json::array();
  for (const ResourceTypePtr& t : registry.All()) {
    if (t->resource.group != group || !Serves(*t, version)) continue;
    Json r = {{"name", t->resource.resource},
              {"singularName", t->singular},
              {"namespaced", t->resource.namespaced},
              {"kind", t->resource.kind},
              {"verbs", Json::array({"create", "delete", "get", "list", "patch", "update", "watch"})}};
    if (!t->short_names.empty()) r["shortNames"] = t->short_names;
    if (!t->categories.empty()) r["categories"] = t->categories;
    resources.push_back(std::move(r));
    if (t->has_status) {
      resources.push_back({{"name", t->resource.resource + "/status"},
                           {"singularName", ""},
                           {"namespaced", t->resource.namespaced},
                           {"kind", t->resource.kind},
                           {"verbs", Json::array({"get", "patch", "update"})}});
    }
    if (t->scale) {
      resources.push_back({{"name", t->resource.resource + "/scale"},
                           {"singularName", ""},
                           {"namespaced", t->resource.namespaced},
                           {"group", "autoscaling"},
                           {"version", "v1"},
                           {"kind", "Scale"},
                           {"verbs", Json::array({"get", "patch", "update"})}});
    }
  }
  if (resources.empty()) return nullptr;
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", GroupVersion(group, version)},
          {"resources", resources}};
}

Json OpenApiV3Index(const Registry& registry) {
  Json paths = Json::object();
  for (const auto& [group, versions] : GroupVersions(registry)) {
    for (const std::string& v : versions) {
      std::string path = group.empty() ? absl::StrCat("api/", v) : absl::StrCat("apis/", group, "/", v);
      paths[path] = {{"serverRelativeURL", absl::StrCat("/openapi/v3/", path, "?hash=0")}};
    }
  }
  return {{"paths", paths}};
}

Json OpenApiV3Document(const Registry& registry, const std::string& group, const std::string& version) {
  Json paths = Json::object();
  Json schemas = Json::object();
  bool any = false;
  std::string prefix = group.empty() ? absl::StrCat("/api/", version) : absl::StrCat("/apis/", group, "/", version);
  for (const ResourceTypePtr& t : registry.All()) {
    if (t->resource.group != group || !Serves(*t, version)) continue;
    any = true;
    Json gvk = Json::array({{{"group", group}, {"version", version}, {"kind", t->resource.kind}}});
    Json field_validation = {{"name", "fieldValidation"}, {"in", "query"}, {"schema", {{"type", "string"}}}};
    Json write = {{"parameters", Json::array({field_validation})},
                  {"x-kubernetes-group-version-kind", gvk[0]}};
    std::string collection = t->resource.namespaced
                                 ? absl::StrCat(prefix, "/namespaces/{namespace}/", t->resource.resource)
                                 : absl::StrCat(prefix, "/", t->resource.resource);
    paths[collection] = {{"post", write}};
    paths[collection + "/{name}"] = {{"put", write}, {"patch", write}};
    std::string schema_name = absl::StrCat(group.empty() ? "io.k8s.api.core" : group, ".", version, ".",
                                           t->resource.kind);
    Json schema = Json::object();
    if (auto s = t->schemas.find(version); s != t->schemas.end()) schema = s->second;
    schema["x-kubernetes-group-version-kind"] = gvk;
    schemas[schema_name] = std::move(schema);
  }
  if (!any) return nullptr;
  return {{"openapi", "3.0.0"},
          {"info", {{"title", "Kubernetes"}, {"version", "v1.32.0"}}},
          {"paths", paths},
          {"components", {{"schemas", schemas}}}};
}

}  // namespace nereid::devapi
