#include "tools/devapiserver/table.h"

#include <functional>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/kube/object.h"
#include "tools/devapiserver/jsonpath.h"

namespace nereid::devapi {
namespace {

using Cell = std::function<Json(const Json& obj, absl::Time now)>;

struct Column {
  PrinterColumn def;
  Cell cell;
};

PrinterColumn Def(std::string name, std::string type = "string", int priority = 0,
                  std::string format = "") {
  PrinterColumn c;
  c.name = std::move(name);
  c.type = std::move(type);
  c.priority = priority;
  c.format = std::move(format);
  return c;
}

Json Age(const Json& obj, absl::Time now) {
  auto created = kube::CreationTimestamp(obj);
  return created ? HumanDuration(now - *created) : "<unknown>";
}

std::string Or(std::string s, std::string fallback) { return s.empty() ? fallback : s; }

Cell Path(std::string path, std::string fallback = "<none>") {
  return [path, fallback](const Json& obj, absl::Time) { return Or(kube::StringAt(obj, path), fallback); };
}

int64_t IntAt(const Json& obj, std::string_view path, int64_t fallback = 0) {
  const Json* v = kube::FindPath(obj, path);
  return v != nullptr && v->is_number_integer() ? v->get<int64_t>() : fallback;
}

// An integer column: the number at `path`, `fallback` when it is missing.
Cell IntPath(std::string path, int64_t fallback = 0) {
  return [path, fallback](const Json& obj, absl::Time) { return Json(IntAt(obj, path, fallback)); };
}

size_t CountOf(const Json& obj, std::string_view path) {
  const Json* v = kube::FindPath(obj, path);
  return v != nullptr && (v->is_object() || v->is_array()) ? v->size() : 0;
}

std::string SelectorText(const Json* selector) {
  if (selector == nullptr || !selector->is_object()) return "<none>";
  std::vector<std::string> parts;
  const Json* labels = selector->contains("matchLabels") ? &(*selector)["matchLabels"] : selector;
  if (labels->is_object()) {
    for (const auto& [k, v] : labels->items()) {
      if (v.is_string()) parts.push_back(absl::StrCat(k, "=", v.get<std::string>()));
    }
  }
  return parts.empty() ? "<none>" : absl::StrJoin(parts, ",");
}

std::vector<Column> PodColumns() {
  return {
      {Def("Ready"),
       [](const Json& pod, absl::Time) {
         size_t total = CountOf(pod, "spec.containers");
         size_t ready = 0;
         if (const Json* st = kube::FindPath(pod, "status.containerStatuses"); st && st->is_array()) {
           for (const Json& c : *st) ready += c.is_object() && c.value("ready", false);
         }
         return absl::StrCat(ready, "/", total);
       }},
      {Def("Status"),
       [](const Json& pod, absl::Time) {
         if (kube::IsBeingDeleted(pod)) return std::string("Terminating");
         std::string reason = kube::StringAt(pod, "status.reason");
         return Or(reason, Or(kube::StringAt(pod, "status.phase"), "Pending"));
       }},
      {Def("Restarts", "integer"),
       [](const Json& pod, absl::Time) {
         int64_t restarts = 0;
         if (const Json* st = kube::FindPath(pod, "status.containerStatuses"); st && st->is_array()) {
           for (const Json& c : *st) restarts += c.is_object() ? c.value("restartCount", 0) : 0;
         }
         return Json(restarts);
       }},
      {Def("Age"), Age},
      {Def("IP", "string", 1), Path("status.podIP")},
      {Def("Node", "string", 1), Path("spec.nodeName")},
      {Def("Nominated Node", "string", 1), Path("status.nominatedNodeName")},
      {Def("Readiness Gates", "string", 1), Path("spec.readinessGates", "<none>")},
  };
}

std::vector<Column> ServiceColumns() {
  return {
      {Def("Type"), Path("spec.type", "ClusterIP")},
      {Def("Cluster-IP"), Path("spec.clusterIP")},
      {Def("External-IP"), Path("spec.externalIPs")},
      {Def("Port(s)"),
       [](const Json& svc, absl::Time) {
         std::vector<std::string> ports;
         if (const Json* p = kube::FindPath(svc, "spec.ports"); p && p->is_array()) {
           for (const Json& port : *p) {
             if (!port.is_object()) continue;
             std::string text = absl::StrCat(port.value("port", 0));
             if (port.contains("nodePort")) absl::StrAppend(&text, ":", port.value("nodePort", 0));
             absl::StrAppend(&text, "/", port.value("protocol", "TCP"));
             ports.push_back(text);
           }
         }
         return ports.empty() ? std::string("<none>") : absl::StrJoin(ports, ",");
       }},
      {Def("Age"), Age},
      {Def("Selector", "string", 1),
       [](const Json& svc, absl::Time) { return SelectorText(kube::FindPath(svc, "spec.selector")); }},
  };
}

std::vector<Column> DeploymentColumns() {
  return {
      {Def("Ready"),
       [](const Json& d, absl::Time) {
         return absl::StrCat(IntAt(d, "status.readyReplicas"), "/", IntAt(d, "spec.replicas", 1));
       }},
      {Def("Up-to-date", "integer"), IntPath("status.updatedReplicas")},
      {Def("Available", "integer"), IntPath("status.availableReplicas")},
      {Def("Age"), Age},
      {Def("Containers", "string", 1),
       [](const Json& d, absl::Time) {
         std::vector<std::string> names;
         if (const Json* c = kube::FindPath(d, "spec.template.spec.containers"); c && c->is_array()) {
           for (const Json& x : *c) names.push_back(x.is_object() ? x.value("name", "") : "");
         }
         return absl::StrJoin(names, ",");
       }},
      {Def("Images", "string", 1),
       [](const Json& d, absl::Time) {
         std::vector<std::string> images;
         if (const Json* c = kube::FindPath(d, "spec.template.spec.containers"); c && c->is_array()) {
           for (const Json& x : *c) images.push_back(x.is_object() ? x.value("image", "") : "");
         }
         return absl::StrJoin(images, ",");
       }},
      {Def("Selector", "string", 1),
       [](const Json& d, absl::Time) { return SelectorText(kube::FindPath(d, "spec.selector")); }},
  };
}

std::vector<Column> NodeColumns() {
  return {
      {Def("Status"),
       [](const Json& node, absl::Time) {
         std::string status = "Unknown";
         if (const Json* c = kube::FindPath(node, "status.conditions"); c && c->is_array()) {
           for (const Json& cond : *c) {
             if (cond.is_object() && cond.value("type", "") == "Ready") {
               status = cond.value("status", "") == "True" ? "Ready" : "NotReady";
             }
           }
         }
         if (const Json* u = kube::FindPath(node, "spec.unschedulable"); u && u->is_boolean() && u->get<bool>()) {
           status += ",SchedulingDisabled";
         }
         return status;
       }},
      {Def("Roles"),
       [](const Json& node, absl::Time) {
         std::vector<std::string> roles;
         for (const auto& [k, v] : kube::Labels(node)) {
           constexpr std::string_view kPrefix = "node-role.kubernetes.io/";
           if (k.rfind(kPrefix, 0) == 0) roles.push_back(k.substr(kPrefix.size()));
         }
         return roles.empty() ? std::string("<none>") : absl::StrJoin(roles, ",");
       }},
      {Def("Age"), Age},
      {Def("Version"), Path("status.nodeInfo.kubeletVersion", "")},
      {Def("Internal-IP", "string", 1),
       [](const Json& node, absl::Time) {
         if (const Json* a = kube::FindPath(node, "status.addresses"); a && a->is_array()) {
           for (const Json& addr : *a) {
             if (addr.is_object() && addr.value("type", "") == "InternalIP") return addr.value("address", "");
           }
         }
         return std::string("<none>");
       }},
      {Def("OS-Image", "string", 1), Path("status.nodeInfo.osImage", "<unknown>")},
      {Def("Container-Runtime", "string", 1), Path("status.nodeInfo.containerRuntimeVersion", "<unknown>")},
  };
}

std::vector<Column> EventColumns() {
  return {
      {Def("Last Seen"),
       [](const Json& ev, absl::Time now) {
         std::string ts = kube::StringAt(ev, "lastTimestamp");
         if (ts.empty()) ts = kube::StringAt(ev, "eventTime");
         if (ts.empty()) ts = kube::StringAt(ev, "metadata.creationTimestamp");
         auto t = kube::ParseTimestamp(ts);
         return t ? HumanDuration(now - *t) : std::string("<unknown>");
       }},
      {Def("Type"), Path("type", "")},
      {Def("Reason"), Path("reason", "")},
      {Def("Object"),
       [](const Json& ev, absl::Time) {
         std::string kind = kube::StringAt(ev, "involvedObject.kind");
         for (char& c : kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
         return absl::StrCat(kind, "/", kube::StringAt(ev, "involvedObject.name"));
       }},
      {Def("Message"), Path("message", "")},
  };
}

std::vector<Column> BuiltinColumns(const ResourceType& type) {
  const std::string& r = type.resource.resource;
  const std::string& g = type.resource.group;
  if (g.empty() && r == "pods") return PodColumns();
  if (g.empty() && r == "services") return ServiceColumns();
  if (g == "apps" && r == "deployments") return DeploymentColumns();
  if (g.empty() && r == "nodes") return NodeColumns();
  if (g == "apps" && r == "daemonsets") {
    return {{Def("Desired", "integer"), IntPath("status.desiredNumberScheduled")},
            {Def("Current", "integer"), IntPath("status.currentNumberScheduled")},
            {Def("Ready", "integer"), IntPath("status.numberReady")},
            {Def("Up-to-date", "integer"), IntPath("status.updatedNumberScheduled")},
            {Def("Available", "integer"), IntPath("status.numberAvailable")},
            {Def("Age"), Age}};
  }
  if (g.empty() && r == "events") return EventColumns();
  if (g.empty() && r == "namespaces") {
    return {{Def("Status"), Path("status.phase", "Active")}, {Def("Age"), Age}};
  }
  if (g.empty() && r == "configmaps") {
    return {{Def("Data", "integer"),
             [](const Json& o, absl::Time) {
               return Json(CountOf(o, "data") + CountOf(o, "binaryData"));
             }},
            {Def("Age"), Age}};
  }
  if (g.empty() && r == "secrets") {
    return {{Def("Type"), Path("type", "Opaque")},
            {Def("Data", "integer"), [](const Json& o, absl::Time) { return Json(CountOf(o, "data")); }},
            {Def("Age"), Age}};
  }
  if (g.empty() && r == "endpoints") {
    return {{Def("Endpoints"),
             [](const Json& o, absl::Time) {
               std::vector<std::string> eps;
               if (const Json* s = kube::FindPath(o, "subsets"); s && s->is_array()) {
                 for (const Json& subset : *s) {
                   const Json* addrs = kube::FindPath(subset, "addresses");
                   const Json* ports = kube::FindPath(subset, "ports");
                   if (!addrs || !addrs->is_array()) continue;
                   for (const Json& a : *addrs) {
                     std::string ip = a.is_object() ? a.value("ip", "") : "";
                     if (ports && ports->is_array() && !ports->empty() && (*ports)[0].is_object()) {
                       eps.push_back(absl::StrCat(ip, ":", (*ports)[0].value("port", 0)));
                     } else {
                       eps.push_back(ip);
                     }
                   }
                 }
               }
               return eps.empty() ? std::string("<none>") : absl::StrJoin(eps, ",");
             }},
            {Def("Age"), Age}};
  }
  if (g.empty() && r == "serviceaccounts") {
    return {{Def("Secrets", "integer"), [](const Json& o, absl::Time) { return Json(CountOf(o, "secrets")); }},
            {Def("Age"), Age}};
  }
  if (g == "coordination.k8s.io" && r == "leases") {
    return {{Def("Holder"), Path("spec.holderIdentity", "")}, {Def("Age"), Age}};
  }
  if (g == "autoscaling" && r == "horizontalpodautoscalers") {
    return {{Def("Reference"),
             [](const Json& o, absl::Time) {
               return absl::StrCat(kube::StringAt(o, "spec.scaleTargetRef.kind"), "/",
                                   kube::StringAt(o, "spec.scaleTargetRef.name"));
             }},
            {Def("MinPods", "integer"), IntPath("spec.minReplicas", 1)},
            {Def("MaxPods", "integer"), IntPath("spec.maxReplicas")},
            {Def("Replicas", "integer"), IntPath("status.currentReplicas")},
            {Def("Age"), Age}};
  }
  if (g == "apiextensions.k8s.io" && r == "customresourcedefinitions") {
    return {{Def("Created At", "date"), Path("metadata.creationTimestamp", "")}};
  }
  return {{Def("Age"), Age}};
}

Json CrdCell(const PrinterColumn& col, const Json& obj, absl::Time now) {
  auto results = EvalJsonPath(obj, col.json_path);
  if (!results.ok() || results->empty()) return nullptr;
  const Json& v = *results->front();
  if (col.type == "date") {
    if (!v.is_string()) return nullptr;
    auto t = kube::ParseTimestamp(v.get<std::string>());
    return t ? Json(HumanDuration(now - *t)) : Json(nullptr);
  }
  if (col.type == "integer") return v.is_number_integer() ? v : Json(nullptr);
  if (col.type == "number") return v.is_number() ? v : Json(nullptr);
  if (col.type == "boolean") return v.is_boolean() ? v : Json(nullptr);
  if (v.is_string()) return v;
  return kube::DumpCompact(v);
}

}  // namespace

std::string HumanDuration(absl::Duration d) {
  if (d < -absl::Seconds(1)) return "<invalid>";
  if (d < absl::ZeroDuration()) return "0s";
  int64_t seconds = absl::ToInt64Seconds(d);
  int64_t minutes = seconds / 60;
  int64_t hours = seconds / 3600;
  if (seconds < 120) return absl::StrCat(seconds, "s");
  if (minutes < 10) {
    int64_t s = seconds % 60;
    return s == 0 ? absl::StrCat(minutes, "m") : absl::StrCat(minutes, "m", s, "s");
  }
  if (minutes < 180) return absl::StrCat(minutes, "m");
  if (hours < 8) {
    int64_t m = minutes % 60;
    return m == 0 ? absl::StrCat(hours, "h") : absl::StrCat(hours, "h", m, "m");
  }
  if (hours < 48) return absl::StrCat(hours, "h");
  if (hours < 24 * 8) {
    int64_t h = hours % 24;
    return h == 0 ? absl::StrCat(hours / 24, "d") : absl::StrCat(hours / 24, "d", h, "h");
  }
  if (hours < 24 * 365 * 2) return absl::StrCat(hours / 24, "d");
  if (hours < 24 * 365 * 8) {
    int64_t days = (hours / 24) % 365;
    return days == 0 ? absl::StrCat(hours / 24 / 365, "y")
                     : absl::StrCat(hours / 24 / 365, "y", days, "d");
  }
  return absl::StrCat(hours / 24 / 365, "y");
}

std::vector<PrinterColumn> TableColumns(const ResourceType& type) {
  std::vector<PrinterColumn> out;
  PrinterColumn name = Def("Name", "string", 0, "name");
  name.description = "Name must be unique within a namespace.";
  out.push_back(name);
  if (!type.builtin) {
    if (type.columns.empty()) {
      out.push_back(Def("Age", "date"));
    } else {
      for (const PrinterColumn& c : type.columns) out.push_back(c);
    }
    return out;
  }
  for (const Column& c : BuiltinColumns(type)) out.push_back(c.def);
  return out;
}

Json BuildTable(const ResourceType& type, const std::vector<Json>& objects,
                const TableOptions& options) {
  Json table = {{"kind", "Table"}, {"apiVersion", "meta.k8s.io/v1"}, {"metadata", Json::object()}};
  std::vector<PrinterColumn> defs = TableColumns(type);
  Json columns = Json::array();
  if (options.include_column_definitions) {
    for (const PrinterColumn& c : defs) {
      columns.push_back({{"name", c.name},
                         {"type", c.type},
                         {"format", c.format},
                         {"description", c.description},
                         {"priority", c.priority}});
    }
  }
  table["columnDefinitions"] = std::move(columns);
  std::vector<Column> builtin;
  if (type.builtin) builtin = BuiltinColumns(type);
  Json rows = Json::array();
  for (const Json& obj : objects) {
    Json cells = Json::array();
    cells.push_back(kube::Name(obj));
    // Built-in kinds are stored unvalidated, so a mistyped field must cost one cell, not the table.
    auto safe = [](const auto& compute) -> Json {
      try {
        return compute();
      } catch (const Json::exception&) {
        return nullptr;
      }
    };
    if (type.builtin) {
      for (const Column& c : builtin) cells.push_back(safe([&] { return c.cell(obj, options.now); }));
    } else if (type.columns.empty()) {
      cells.push_back(Age(obj, options.now));
    } else {
      for (const PrinterColumn& c : type.columns) {
        cells.push_back(safe([&] { return CrdCell(c, obj, options.now); }));
      }
    }
    Json row = {{"cells", std::move(cells)}};
    if (options.include_object == "Object") {
      row["object"] = obj;
    } else if (options.include_object != "None") {
      row["object"] = {{"kind", "PartialObjectMetadata"},
                       {"apiVersion", "meta.k8s.io/v1"},
                       {"metadata", obj.contains("metadata") ? obj["metadata"] : Json::object()}};
    }
    rows.push_back(std::move(row));
  }
  table["rows"] = std::move(rows);
  return table;
}

}  // namespace nereid::devapi
