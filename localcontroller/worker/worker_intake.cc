#include "localcontroller/worker/worker_intake.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "common/net/edge_protocol.h"
#include "common/strings/absl_compat.h"
#include "localcontroller/worker/message_content.h"

namespace nereid::lc::worker {
namespace {

std::string DumpOrEmpty(const nlohmann::json& j) {
  if (j.is_null()) return "";
  // Replace invalid UTF-8 rather than throw: the body came from outside.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

bool NeedsAttribution(std::string_view owner_kind) {
  return owner_kind.empty() || absl::EqualsIgnoreCase(ToAbsl(owner_kind), "default") ||
         absl::EqualsIgnoreCase(ToAbsl(owner_kind), "multiedgetrackingservice");
}

IntakeReply WorkerIntake::Submit(std::string_view worker, std::string_view body) {
  {
    absl::MutexLock lock(&mu_);
    ++stats_.received;
  }
  auto invalid = [this](std::string message) {
    LOG(WARNING) << "worker report: " << message;
    absl::MutexLock lock(&mu_);
    ++stats_.invalid;
    return IntakeReply{400, std::move(message)};
  };

  absl::StatusOr<MessageContent> parsed = ParseMessageContent(body);
  if (!parsed.ok()) {
    return invalid(absl::StrCat("read worker(name=", ToAbsl(worker),
                                ") message body failed, error: ", parsed.status().message()));
  }
  MessageContent& m = *parsed;
  if (m.name != worker) {
    return invalid(absl::StrCat("worker name(name=", ToAbsl(worker),
                                ") in the api is different from that(name=", m.name,
                                ") in the message body"));
  }

  WorkerRecord record;
  record.name = m.name;
  record.ns = m.ns;
  record.owner_kind = m.owner_kind;
  record.owner_name = m.owner_name;
  record.kind = m.kind;
  record.status = m.status;
  record.received = options_.clock->Now();
  const std::string owner_info = DumpOrEmpty(m.owner_info);
  const std::string results = DumpOrEmpty(m.results);

  std::string kind(OwnerKindToKind(m.owner_kind));
  if (kind.empty() && NeedsAttribution(m.owner_kind)) {
    absl::StatusOr<ReportOwner> owner = options_.sink->AttributeWorker(m.ns, m.name, m.owner_name);
    if (owner.ok()) {
      LOG(DEBUG) << "worker report: worker " << m.ns << "/" << m.name << " of owner kind \""
                 << m.owner_kind << "\" (" << m.owner_name << ") attributed to " << owner->kind
                 << " " << m.ns << "/" << owner->name;
      kind = owner->kind;
      m.owner_name = owner->name;
      record.attributed_kind = owner->kind;
    } else {
      LOG(INFO) << "worker report: worker " << m.ns << "/" << m.name << " of owner kind \""
                << m.owner_kind << "\" (" << m.owner_name
                << "): not attributed to an owner on this node: " << owner.status().message();
    }
  }
  if (kind.empty()) {
    LOG(INFO) << "worker report: worker " << m.ns << "/" << m.name << " of unknown owner kind \""
              << m.owner_kind << "\" (" << m.owner_name << "): accepted, not forwarded";
  } else {
    if (m.ns.empty() || m.owner_name.empty()) {
      return invalid(absl::StrCat("worker(name=", m.name, ") report for ", ToAbsl(kind),
                                  " needs \"namespace\" and \"ownerName\""));
    }
    edge::v1::StatusReport report;
    report.mutable_ref()->set_kind(std::string(kind));
    report.mutable_ref()->set_namespace_(m.ns);
    report.mutable_ref()->set_name(m.owner_name);
    edge::v1::WorkerReport* w = report.mutable_worker();
    w->set_worker_name(m.name);
    w->set_worker_kind(m.kind);
    w->set_status(m.status);
    w->set_results_json(results);
    w->set_owner_info_json(owner_info);
    *w->mutable_time() = net::ToProtoTime(record.received);
    if (absl::Status stored = options_.sink->Enqueue(std::move(report)); !stored.ok()) {
      LOG(ERROR) << "worker report: " << kind << " " << m.ns << "/" << m.owner_name << " worker "
                 << m.name << ": storing failed: " << stored;
      absl::MutexLock lock(&mu_);
      ++stats_.failed;
      return IntakeReply{500, absl::StrCat("storing the report of worker(name=", m.name,
                                           ") failed: ", stored.message())};
    }
    record.forwarded = true;
    LOG(DEBUG) << "worker report: " << kind << " " << m.ns << "/" << m.owner_name << " worker "
               << m.name << " " << m.kind << " " << m.status << " queued";
  }

  if (owner_info.size() <= options_.max_detail_bytes && results.size() <= options_.max_detail_bytes) {
    record.owner_info_json = owner_info;
    record.results_json = results;
  } else {
    record.details_truncated = true;
  }
  absl::MutexLock lock(&mu_);
  if (record.forwarded) {
    ++stats_.forwarded;
    if (!record.attributed_kind.empty()) ++stats_.attributed;
  } else {
    ++stats_.unknown_owner_kind;
  }
  Remember(std::move(record));
  return IntakeReply{};
}

void WorkerIntake::Remember(WorkerRecord record) {
  const std::string key = absl::StrCat(absl::AsciiStrToLower(record.owner_kind), "/", record.ns,
                                       "/", record.owner_name, "/", record.name);
  if (auto it = index_.find(key); it != index_.end()) {
    record.reports = it->second->reports + 1;
    records_.erase(it->second);
    index_.erase(it);
  } else {
    record.reports = 1;
  }
  records_.push_front(std::move(record));
  index_[key] = records_.begin();
  while (records_.size() > std::max<size_t>(options_.max_workers, 1)) {
    const WorkerRecord& oldest = records_.back();
    index_.erase(absl::StrCat(absl::AsciiStrToLower(oldest.owner_kind), "/", oldest.ns, "/",
                              oldest.owner_name, "/", oldest.name));
    records_.pop_back();
  }
}

std::vector<WorkerRecord> WorkerIntake::Workers() const {
  absl::MutexLock lock(&mu_);
  return std::vector<WorkerRecord>(records_.begin(), records_.end());
}

size_t WorkerIntake::size() const {
  absl::MutexLock lock(&mu_);
  return records_.size();
}

WorkerIntake::Stats WorkerIntake::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

}  // namespace nereid::lc::worker
