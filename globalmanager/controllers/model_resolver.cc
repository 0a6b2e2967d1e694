#include "globalmanager/controllers/model_resolver.h"

#include "absl/strings/str_cat.h"
#include "common/api/sedna_contract.h"
#include "common/strings/absl_compat.h"
#include "globalmanager/controllers/spec_validity.h"

namespace nereid::gm {
namespace {

template <typename T>
absl::StatusOr<T> Resolve(const kube::Lister& lister, std::string_view kind, std::string_view ns,
                          std::string_view name) {
  absl::StatusOr<kube::ObjectPtr> cached = lister.Get(ns, name);
  if (!cached.ok()) {
    if (!absl::IsNotFound(cached.status())) return cached.status();
    return absl::NotFoundError(MissingReferenceMessage(kind, ns, name));
  }
  return ReadSpec<T>(**cached).value_or(T{});
}

}  // namespace

std::string MissingReferenceMessage(std::string_view kind, std::string_view ns,
                                    std::string_view name) {
  return absl::StrCat(ToAbsl(kind), " \"", ToAbsl(name), "\" does not exist in namespace ",
                      ToAbsl(ns), "; waiting for it to be created");
}

absl::StatusOr<api::Model> ResolveModel(const kube::Lister& models, std::string_view ns,
                                        std::string_view name) {
  return Resolve<api::Model>(models, api::kinds::kModel, ns, name);
}

absl::StatusOr<api::Dataset> ResolveDataset(const kube::Lister& datasets, std::string_view ns,
                                            std::string_view name) {
  return Resolve<api::Dataset>(datasets, api::kinds::kDataset, ns, name);
}

}  // namespace nereid::gm
