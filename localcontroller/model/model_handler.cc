#include "localcontroller/model/model_handler.h"

#include "common/log/log.h"
#include "common/net/edge_protocol.h"
#include "common/status/macros.h"
#include "localcontroller/dataset/dataset_handler.h"
#include "localcontroller/model/check_codec.h"
#include "localcontroller/report_writer.h"
#include "common/net/storage_credential.h"

namespace nereid::lc {
namespace {

model::ModelSpec SpecOf(const edge::v1::Resource& resource) {
  const edge::v1::ModelSpec& spec = resource.model();
  return model::ModelSpec{NsNameKey(resource.ref().namespace_(), resource.ref().name()),
                          spec.url(), spec.format(), spec.sha256(),
                          net::S3CredentialOf(spec.url(), spec.has_s3_credential(),
                                              spec.s3_credential())};
}

}  // namespace

std::string ModelHandler::MetaKey(const std::string& ns, const std::string& name) {
  return "model-check/" + ns + "/" + name;
}

bool ModelHandler::Recreated(const std::string& key, const std::string& uid) {
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = uids_.try_emplace(key, uid);
  if (inserted || it->second == uid) return false;
  it->second = uid;
  return true;
}

void ModelHandler::Apply(const edge::v1::Resource& resource) {
  if (!resource.has_model()) return;
  const model::ModelSpec spec = SpecOf(resource);
  if (Recreated(spec.key, resource.ref().uid())) {
    LOG(INFO) << "model " << spec.key << ": re-created (uid " << resource.ref().uid()
              << "), checking afresh";
    keeper_->Remove(spec.key);
  }
  keeper_->Upsert(spec);
}

void ModelHandler::Restore(const edge::v1::Resource& resource) {
  if (!resource.has_model()) return;
  const std::string key = MetaKey(resource.ref().namespace_(), resource.ref().name());
  std::optional<model::Check> prior;
  absl::StatusOr<std::optional<std::string>> stored = db_->GetMeta(key);
  if (!stored.ok()) {
    LOG(WARNING) << "model " << resource.ref().namespace_() << "/" << resource.ref().name()
                 << ": reading its last check failed: " << stored.status();
  } else if (stored->has_value()) {
    absl::StatusOr<model::Check> check = model::ParseCheck(**stored);
    if (check.ok()) {
      prior = std::move(*check);
    } else {
      LOG(WARNING) << "model " << resource.ref().namespace_() << "/" << resource.ref().name()
                   << ": stored check ignored: " << check.status();
    }
  }
  Recreated(NsNameKey(resource.ref().namespace_(), resource.ref().name()), resource.ref().uid());
  keeper_->Upsert(SpecOf(resource), std::move(prior));
}

void ModelHandler::Forget(const edge::v1::ObjectRef& ref) {
  keeper_->Remove(NsNameKey(ref.namespace_(), ref.name()));
  {
    absl::MutexLock lock(&mu_);
    uids_.erase(NsNameKey(ref.namespace_(), ref.name()));
  }
  absl::Status erased = db_->Write([&](db::LcDatabase::Tables& tables) {
    return tables.meta.Erase(MetaKey(ref.namespace_(), ref.name()));
  });
  if (!erased.ok()) {
    LOG(WARNING) << "model " << ref.namespace_() << "/" << ref.name()
                 << ": dropping its last check failed: " << erased;
  }
}

absl::Status ModelHandler::OnReport(const model::ModelReport& report) {
  const NsName ref = SplitNsNameKey(report.spec.key);
  edge::v1::StatusReport status_report;
  status_report.mutable_ref()->set_kind(std::string(net::kKindModel));
  status_report.mutable_ref()->set_namespace_(ref.ns);
  status_report.mutable_ref()->set_name(ref.name);
  edge::v1::ModelStatus* status = status_report.mutable_model();
  status->set_verified(report.check.verified);
  status->set_sha256(report.check.sha256);
  *status->mutable_update_time() = net::ToProtoTime(report.check_time);
  status->set_error_reason(report.check.reason);
  status->set_error_message(report.check.message);
  absl::Status written = db_->Write([&](db::LcDatabase::Tables& tables) -> absl::Status {
    RETURN_IF_ERROR(StampFromDesired(tables, status_report));
    RETURN_IF_ERROR(
        tables.meta.Set(MetaKey(ref.ns, ref.name), model::SerializeCheck(report.check)));
    return EnqueueInTransaction(tables, status_report);
  });
  if (absl::IsNotFound(written)) {
    LOG(DEBUG) << "model " << report.spec.key << ": deleted meanwhile, result dropped";
    return absl::OkStatus();
  }
  if (!written.ok()) {
    LOG(ERROR) << "model " << report.spec.key << ": storing the result failed: " << written;
  }
  return written;
}

}  // namespace nereid::lc
