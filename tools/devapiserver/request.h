#pragma once

// Decoding one HTTP request into what the Store needs: the REST path (group, version, namespace,
// resource, name, subresource), query parameters (selectors, paging, watch, dryRun,
// fieldValidation, delete options), the body (JSON, or protobuf for a few kinds) and the patch to
// apply; plus the error body every failure is sent as, and the autoscaling/v1 Scale view.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/kube/object.h"
#include "httplib.h"
#include "tools/devapiserver/registry.h"
#include "tools/devapiserver/storage.h"

namespace nereid::devapi {

// What a REST path names.
struct Target {
  std::string group;
  std::string version;
  std::string ns;
  std::string resource;
  std::string name;
  std::string subresource;
  bool watch = false;  // legacy /watch/ prefix
};

absl::StatusOr<Target> ParseTarget(const std::vector<std::string>& parts);

// 404 "the server could not find the requested resource".
absl::Status NotFoundPath();
// The metav1.Status body for `status`, with details.kind/name for Invalid errors.
Json ErrorJson(const absl::Status& status);

std::string Param(const httplib::Request& req, const char* name);
bool TrueParam(const httplib::Request& req, const char* name);
// Content-Type without parameters.
std::string MediaType(const httplib::Request& req);
// Accept asks for a meta.k8s.io Table.
bool WantsTable(const httplib::Request& req);
absl::StatusOr<Json> ParseBody(const httplib::Request& req);

WriteOptions WriteOptionsFrom(const httplib::Request& req, std::vector<std::string>* warnings);
ListRequest ListRequestFrom(const httplib::Request& req, const Target& target);
// Delete options from the body (DeleteOptions) and/or the query.
absl::StatusOr<DeleteRequest> DeleteRequestFrom(const httplib::Request& req);
// The mutation a PATCH body describes, by Content-Type (merge, JSON, strategic for built-ins;
// server-side apply is refused).
absl::StatusOr<MutateFn> PatchFunction(const httplib::Request& req, const ResourceType& type,
                                       const std::string& api_version);

// The autoscaling/v1 Scale view of an object with a scale subresource.
Json ScaleOf(const ResourceType& type, const Json& obj);
// Sets a dotted path, creating objects on the way.
void SetPath(Json& obj, std::string_view dotted, Json value);

}  // namespace nereid::devapi
