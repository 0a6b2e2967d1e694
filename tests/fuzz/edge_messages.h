#pragma once

// Edge-link messages built from fuzz input for the targets on both ends of the GM <-> LC stream.
// Names come from small pools so that changes and reports hit the same objects often; every field
// may also be arbitrary bytes, and any message may instead be parsed from raw bytes (what a
// corrupted peer sends).

#include <cstddef>
#include <string>
#include <utility>

#include <fuzzer/FuzzedDataProvider.h>

#include "nereid/edge/v1/status.pb.h"
#include "nereid/edge/v1/sync.pb.h"

namespace nereid::fuzz {

inline std::string PoolOrBytes(FuzzedDataProvider& in, std::initializer_list<const char*> pool) {
  const size_t pick = in.ConsumeIntegralInRange<size_t>(0, pool.size());
  if (pick == pool.size()) return in.ConsumeRandomLengthString(24);
  return *(pool.begin() + pick);
}

inline edge::v1::ObjectRef MakeRef(FuzzedDataProvider& in) {
  edge::v1::ObjectRef ref;
  ref.set_kind(PoolOrBytes(in, {"Dataset", "Model", "JointInferenceService",
                                "FederatedLearningJob", "IncrementalLearningJob",
                                "LifelongLearningJob", "DistributedJob", "Worker", ""}));
  ref.set_namespace_(PoolOrBytes(in, {"default", "other", ""}));
  ref.set_name(PoolOrBytes(in, {"a", "b", "c"}));
  ref.set_uid(PoolOrBytes(in, {"u1", "u2", ""}));
  return ref;
}

inline edge::v1::Timestamp MakeTime(FuzzedDataProvider& in) {
  edge::v1::Timestamp time;
  time.set_seconds(in.ConsumeIntegral<int64_t>());
  time.set_nanos(in.ConsumeIntegral<int32_t>());
  return time;
}

// A Resource whose spec usually matches its kind (so validation gets past the envelope).
inline edge::v1::Resource MakeResource(FuzzedDataProvider& in, const char* node) {
  edge::v1::Resource resource;
  *resource.mutable_ref() = MakeRef(in);
  resource.set_version(PoolOrBytes(in, {"1", "2", ""}));
  auto name = [&] { return PoolOrBytes(in, {node, "edge-b", "", "a"}); };
  switch (in.ConsumeIntegralInRange(0, 8)) {
    case 0: {
      auto* spec = resource.mutable_dataset();
      spec->set_url(PoolOrBytes(in, {"/data/a.txt", "s3://b/k", ""}));
      spec->set_format(PoolOrBytes(in, {"txt", "csv", "coco", ""}));
      spec->set_node_name(name());
      break;
    }
    case 1: {
      auto* spec = resource.mutable_model();
      spec->set_url(PoolOrBytes(in, {"/models/m.pb", ""}));
      spec->set_sha256(in.ConsumeRandomLengthString(70));
      break;
    }
    case 2:
      resource.mutable_joint_inference_service()->mutable_edge_worker()->set_model_name(name());
      break;
    case 3:
      resource.mutable_federated_learning_job()->add_training_workers()->set_dataset_name(name());
      break;
    case 4: {
      auto* spec = resource.mutable_incremental_learning_job();
      spec->mutable_dataset()->set_name(name());
      spec->mutable_dataset()->set_train_prob(in.ConsumeFloatingPoint<double>());
      spec->set_initial_model_name(name());
      spec->mutable_train_trigger()->set_check_period_seconds(in.ConsumeIntegral<int32_t>());
      spec->mutable_train_trigger()->mutable_timer()->set_start(in.ConsumeRandomLengthString(6));
      spec->mutable_train_trigger()->mutable_timer()->set_end(in.ConsumeRandomLengthString(6));
      spec->mutable_train_trigger()->mutable_condition()->set_operator_(
          PoolOrBytes(in, {">", "ge", "lt"}));
      spec->mutable_train_trigger()->mutable_condition()->set_metric(name());
      break;
    }
    case 5: {
      auto* spec = resource.mutable_lifelong_learning_job();
      spec->mutable_dataset()->set_name(name());
      spec->mutable_dataset()->set_train_prob(in.ConsumeFloatingPoint<double>());
      break;
    }
    case 6: {
      auto* spec = resource.mutable_worker();
      spec->set_job_kind(PoolOrBytes(in, {"JointInferenceService", ""}));
      spec->set_job_name(name());
      spec->set_worker_type(PoolOrBytes(in, {"edge", "train", ""}));
      spec->set_node_name(name());
      break;
    }
    case 7: {
      auto* spec = resource.mutable_distributed_job();
      spec->set_node_name(name());
      spec->add_tasks()->set_name(name());
      break;
    }
    default: break;  // no spec
  }
  return resource;
}

inline edge::v1::StatusReport MakeReport(FuzzedDataProvider& in) {
  edge::v1::StatusReport report;
  report.set_seq(in.ConsumeIntegralInRange<uint64_t>(0, 8));
  *report.mutable_ref() = MakeRef(in);
  report.set_observed_version(PoolOrBytes(in, {"1", "2", ""}));
  switch (in.ConsumeIntegralInRange(0, 4)) {
    case 0:
      report.mutable_dataset()->set_number_of_samples(in.ConsumeIntegral<int64_t>());
      *report.mutable_dataset()->mutable_update_time() = MakeTime(in);
      break;
    case 1:
      report.mutable_model()->set_verified(in.ConsumeBool());
      report.mutable_model()->set_sha256(in.ConsumeRandomLengthString(70));
      break;
    case 2:
      report.mutable_worker()->set_worker_name(PoolOrBytes(in, {"w0", "w1", ""}));
      report.mutable_worker()->set_status(PoolOrBytes(in, {"ready", "completed", "failed"}));
      report.mutable_worker()->set_results_json(in.ConsumeRandomLengthString(64));
      *report.mutable_worker()->mutable_time() = MakeTime(in);
      break;
    case 3:
      report.mutable_trigger()->set_stage(PoolOrBytes(in, {"train", "eval", "deploy", ""}));
      report.mutable_trigger()->set_num_of_samples(in.ConsumeIntegral<int64_t>());
      break;
    default: break;  // no payload
  }
  return report;
}

// What the peer would receive of `message`: serialized and parsed again, as gRPC does. False when
// the receiving end could not parse it (e.g. a string field that is not UTF-8): it never arrives.
template <typename Message>
bool OverTheWire(Message* message) {
  Message received;
  if (!received.ParseFromString(message->SerializeAsString())) return false;
  *message = std::move(received);
  return true;
}

// Parses `message` from raw bytes instead, about one time in eight.
template <typename Message>
bool MaybeRaw(FuzzedDataProvider& in, Message* message) {
  if (in.ConsumeIntegralInRange(0, 7) != 0) return false;
  message->Clear();
  (void)message->ParseFromString(in.ConsumeRandomLengthString(256));
  return true;
}

}  // namespace nereid::fuzz
