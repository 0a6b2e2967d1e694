#include "tests/compat/release_0_1_0.h"

namespace nereid::compat::release_0_1_0 {
namespace {

using edge::v1::Resource;
using edge::v1::StatusReport;
using edge::v1::SyncRequest;
using edge::v1::SyncResponse;

void SetRef(edge::v1::ObjectRef* ref, const std::string& kind, const std::string& name) {
  ref->set_kind(kind);
  ref->set_namespace_("default");
  ref->set_name(name);
  ref->set_uid("00000000-0000-4000-8000-" + std::string(12 - std::min<size_t>(12, name.size()), '0') +
               name.substr(0, 12));
}

void SetTime(edge::v1::Timestamp* t) {
  t->set_seconds(1764000000);
  t->set_nanos(500000000);
}

void SetTrigger(edge::v1::Trigger* trigger) {
  trigger->set_check_period_seconds(60);
  trigger->mutable_timer()->set_start("02:00");
  trigger->mutable_timer()->set_end("04:00");
  trigger->mutable_condition()->set_operator_(">");
  trigger->mutable_condition()->set_threshold(500);
  trigger->mutable_condition()->set_metric("num_of_samples");
}

void SetStage(edge::v1::JobStage* stage) {
  stage->set_stage("Eval");
  stage->set_type("Waiting");
  edge::v1::ModelInfo* model = stage->mutable_input()->add_models();
  model->set_format("pb");
  model->set_url("/output/train/1/model.pb");
  (*model->mutable_metrics())["precision"].add_values(0.91);
  stage->mutable_input()->set_data_url("/output/data/eval/1/data.txt");
  stage->mutable_input()->set_data_index_url("/data/index.txt");
  stage->mutable_input()->set_output_dir("/output/eval/1");
  stage->mutable_output()->add_models()->set_url("/output/eval/1/model.pb");
}

void SetStageNodes(edge::v1::StageNodes* nodes) {
  nodes->set_train(kNode);
  nodes->set_eval(kNode);
  nodes->set_deploy(kNode);
}

Resource Dataset() {
  Resource r;
  SetRef(r.mutable_ref(), "Dataset", kDatasetName);
  r.set_version("3");
  edge::v1::DatasetSpec* spec = r.mutable_dataset();
  spec->set_url(kDatasetFile);
  spec->set_format("txt");
  spec->set_node_name(kNode);
  spec->set_credential_name("golden-s3");
  spec->mutable_s3_credential()->set_endpoint("127.0.0.1:9000");
  spec->mutable_s3_credential()->set_use_https(true);
  spec->mutable_s3_credential()->set_access_key_id("AKIAGOLDEN");
  spec->mutable_s3_credential()->set_secret_access_key("golden-secret");
  return r;
}

Resource Model() {
  Resource r;
  SetRef(r.mutable_ref(), "Model", "golden-model");
  r.set_version("2");
  edge::v1::ModelSpec* spec = r.mutable_model();
  spec->set_url("/models/golden/model.pb");
  spec->set_format("pb");
  spec->set_sha256(std::string(64, 'a'));
  spec->add_device_soc_versions("ascend310");
  spec->set_credential_name("golden-s3");
  return r;
}

Resource JointInference() {
  Resource r;
  SetRef(r.mutable_ref(), "JointInferenceService", "golden-ji");
  r.set_version("4");
  auto* spec = r.mutable_joint_inference_service();
  spec->mutable_edge_worker()->set_model_name("golden-model");
  spec->mutable_edge_worker()->set_node_name(kNode);
  spec->mutable_edge_worker()->mutable_hard_example_mining()->set_name("IBT");
  edge::v1::KeyValue* p = spec->mutable_edge_worker()->mutable_hard_example_mining()->add_parameters();
  p->set_key("threshold_img");
  p->set_value("0.9");
  spec->mutable_cloud_worker()->set_model_name("golden-big-model");
  return r;
}

Resource FederatedLearning() {
  Resource r;
  SetRef(r.mutable_ref(), "FederatedLearningJob", "golden-fl");
  r.set_version("5");
  auto* spec = r.mutable_federated_learning_job();
  spec->set_aggregation_model_name("golden-model");
  auto* worker = spec->add_training_workers();
  worker->set_dataset_name(kDatasetName);
  worker->set_node_name(kNode);
  spec->set_pretrained_model_name("golden-pretrained");
  spec->set_transmitter("ws");
  return r;
}

Resource IncrementalLearning() {
  Resource r;
  SetRef(r.mutable_ref(), "IncrementalLearningJob", "golden-il");
  r.set_version("6");
  auto* spec = r.mutable_incremental_learning_job();
  spec->mutable_dataset()->set_name(kDatasetName);
  spec->mutable_dataset()->set_train_prob(0.8);
  spec->set_initial_model_name("golden-model");
  SetTrigger(spec->mutable_train_trigger());
  spec->set_initial_eval_model_name("golden-eval-model");
  spec->set_deploy_model_name("golden-deploy-model");
  spec->set_hot_update_enabled(true);
  spec->set_poll_period_seconds(60);
  SetTrigger(spec->mutable_deploy_trigger());
  spec->mutable_hard_example_mining()->set_name("IBT");
  spec->set_output_dir("/output");
  spec->set_credential_name("golden-s3");
  SetStageNodes(spec->mutable_stage_nodes());
  SetStage(spec->mutable_current());
  return r;
}

Resource LifelongLearning() {
  Resource r;
  SetRef(r.mutable_ref(), "LifelongLearningJob", "golden-ll");
  r.set_version("7");
  auto* spec = r.mutable_lifelong_learning_job();
  spec->mutable_dataset()->set_name(kDatasetName);
  spec->mutable_dataset()->set_train_prob(0.7);
  SetTrigger(spec->mutable_train_trigger());
  spec->set_output_dir("/output-ll");
  spec->set_credential_name("golden-s3");
  SetStageNodes(spec->mutable_stage_nodes());
  SetStage(spec->mutable_current());
  return r;
}

Resource Worker() {
  Resource r;
  SetRef(r.mutable_ref(), "Worker", "golden-fe-worker");
  r.set_version("8");
  auto* spec = r.mutable_worker();
  spec->set_job_kind("ObjectSearchService");
  spec->set_job_name("golden-search");
  spec->set_worker_type("userWorker");
  spec->set_node_name(kNode);
  return r;
}

Resource DistributedJob() {
  Resource r;
  SetRef(r.mutable_ref(), "DistributedJob", "golden-dj");
  r.set_version("9");
  auto* spec = r.mutable_distributed_job();
  spec->set_node_name(kNode);
  auto* task = spec->add_tasks();
  task->set_name("worker");
  task->set_type("Worker");
  task->set_replicas(2);
  task->add_pods("golden-dj-worker-0");
  task->add_pods("golden-dj-worker-1");
  return r;
}

Resource InferenceJob(const std::string& kind, const std::string& name, const std::string& type,
                      edge::v1::InferenceJobSpec* (Resource::*spec_of)()) {
  Resource r;
  SetRef(r.mutable_ref(), kind, name);
  r.set_version("10");
  edge::v1::InferenceJobSpec* spec = (r.*spec_of)();
  spec->set_node_name(kNode);
  spec->set_worker_type(type);
  spec->add_pods(name + "-0");
  return r;
}

StatusReport Report(const std::string& kind, const std::string& name) {
  StatusReport report;
  report.set_seq(41);
  SetRef(report.mutable_ref(), kind, name);
  report.set_observed_version("3");
  return report;
}

StatusReport DatasetReport() {
  StatusReport report = Report("Dataset", kDatasetName);
  report.mutable_dataset()->set_number_of_samples(kDatasetSamples);
  SetTime(report.mutable_dataset()->mutable_update_time());
  return report;
}

StatusReport DatasetErrorReport() {
  StatusReport report = Report("Dataset", "golden-broken-dataset");
  report.mutable_dataset()->set_error_reason("LineTooLong");
  report.mutable_dataset()->set_error_message("line 7 is longer than 16 MiB");
  SetTime(report.mutable_dataset()->mutable_update_time());
  return report;
}

StatusReport ModelReport() {
  StatusReport report = Report("Model", "golden-model");
  report.mutable_model()->set_verified(true);
  report.mutable_model()->set_sha256(std::string(64, 'a'));
  SetTime(report.mutable_model()->mutable_update_time());
  report.mutable_model()->set_error_reason("");
  return report;
}

StatusReport WorkerReport() {
  StatusReport report = Report("JointInferenceService", "golden-ji");
  edge::v1::WorkerReport* worker = report.mutable_worker();
  worker->set_worker_name("golden-ji-edge-abc12");
  worker->set_worker_kind("inference");
  worker->set_status("completed");
  worker->set_results_json(R"([{"key":"inferenceNumber","value":490}])");
  worker->set_owner_info_json(R"({"ownerKind":"jointinferenceservice","ownerName":"golden-ji"})");
  SetTime(worker->mutable_time());
  return report;
}

StatusReport TriggerReport() {
  StatusReport report = Report("IncrementalLearningJob", "golden-il");
  edge::v1::TriggerEvent* trigger = report.mutable_trigger();
  trigger->set_stage("Train");
  trigger->set_reason("num_of_samples > 500");
  trigger->set_num_of_samples(612);
  SetTime(trigger->mutable_time());
  trigger->set_status("ready");
  trigger->mutable_input()->set_data_url("/output/data/train/1/data.txt");
  trigger->mutable_input()->set_output_dir("/output/train/1");
  return report;
}

std::vector<StatusReport> Reports() {
  return {DatasetReport(), DatasetErrorReport(), ModelReport(), WorkerReport(), TriggerReport()};
}

std::vector<Resource> Upserts() {
  return {Dataset(),
          Model(),
          JointInference(),
          FederatedLearning(),
          IncrementalLearning(),
          LifelongLearning(),
          Worker(),
          DistributedJob(),
          InferenceJob("VideoAnalyticsJob", "golden-va", "edge",
                       &Resource::mutable_video_analytics_job),
          InferenceJob("ReidJob", "golden-reid", "reid", &Resource::mutable_reid_job),
          InferenceJob("FeatureExtractionService", "golden-fe", "featureExtraction",
                       &Resource::mutable_feature_extraction_service)};
}

// "dataset" for the Dataset's upsert, "joint_inference_service" for the JI's, ...
std::string SpecName(const Resource& r) {
  switch (r.spec_case()) {
    case Resource::kDataset: return "dataset";
    case Resource::kModel: return "model";
    case Resource::kJointInferenceService: return "joint_inference_service";
    case Resource::kFederatedLearningJob: return "federated_learning_job";
    case Resource::kIncrementalLearningJob: return "incremental_learning_job";
    case Resource::kLifelongLearningJob: return "lifelong_learning_job";
    case Resource::kWorker: return "worker";
    case Resource::kDistributedJob: return "distributed_job";
    case Resource::kVideoAnalyticsJob: return "video_analytics_job";
    case Resource::kReidJob: return "reid_job";
    case Resource::kFeatureExtractionService: return "feature_extraction_service";
    case Resource::SPEC_NOT_SET: break;
  }
  return "none";
}

std::string PayloadName(const StatusReport& r) {
  switch (r.payload_case()) {
    case StatusReport::kDataset: return r.dataset().error_reason().empty() ? "dataset" : "dataset_error";
    case StatusReport::kModel: return "model";
    case StatusReport::kWorker: return "worker";
    case StatusReport::kTrigger: return "trigger";
    case StatusReport::PAYLOAD_NOT_SET: break;
  }
  return "none";
}

}  // namespace

std::vector<std::pair<std::string, SyncRequest>> Requests() {
  std::vector<std::pair<std::string, SyncRequest>> out;
  SyncRequest hello;
  hello.mutable_hello()->set_node_name(kNode);
  hello.mutable_hello()->set_lc_version("0.1.0");
  hello.mutable_hello()->set_protocol_version(edge::v1::PROTOCOL_VERSION_V1);
  for (const Resource& r : Upserts()) {
    edge::v1::InventoryItem* item = hello.mutable_hello()->add_inventory();
    *item->mutable_ref() = r.ref();
    item->set_version(r.version());
  }
  out.emplace_back("request_hello", hello);

  SyncRequest ack;
  ack.mutable_change_ack()->set_nonce("n-17");
  SetRef(ack.mutable_change_ack()->mutable_ref(), "Dataset", kDatasetName);
  ack.mutable_change_ack()->set_version("3");
  out.emplace_back("request_change_ack", ack);

  SyncRequest nack = ack;
  nack.mutable_change_ack()->set_nonce("n-18");
  nack.mutable_change_ack()->mutable_error_detail()->set_code(3);
  nack.mutable_change_ack()->mutable_error_detail()->set_message("spec.url: not a path");
  out.emplace_back("request_change_nack", nack);

  for (const StatusReport& report : Reports()) {
    SyncRequest request;
    *request.mutable_report() = report;
    out.emplace_back("request_report_" + PayloadName(report), request);
  }
  return out;
}

std::vector<std::pair<std::string, SyncResponse>> Responses() {
  std::vector<std::pair<std::string, SyncResponse>> out;
  SyncResponse reply;
  reply.mutable_hello_reply()->set_node_name(kNode);
  reply.mutable_hello_reply()->set_protocol_version(edge::v1::PROTOCOL_VERSION_V1);
  reply.mutable_hello_reply()->set_gm_version("0.1.0");
  out.emplace_back("response_hello_reply", reply);

  int nonce = 1;
  for (const Resource& r : Upserts()) {
    SyncResponse change;
    change.mutable_change()->set_nonce("n-" + std::to_string(nonce++));
    *change.mutable_change()->mutable_upsert() = r;
    out.emplace_back("response_upsert_" + SpecName(r), change);
  }
  SyncResponse removal;
  removal.mutable_change()->set_nonce("n-99");
  SetRef(removal.mutable_change()->mutable_remove()->mutable_ref(), "Model", "golden-old-model");
  removal.mutable_change()->mutable_remove()->set_version("12");
  out.emplace_back("response_remove", removal);

  SyncResponse done;
  done.mutable_resync_done()->set_upserts(11);
  done.mutable_resync_done()->set_removes(1);
  out.emplace_back("response_resync_done", done);

  SyncResponse accepted;
  accepted.mutable_report_ack()->set_seq(41);
  accepted.mutable_report_ack()->set_result(edge::v1::REPORT_ACCEPTED);
  out.emplace_back("response_report_ack_accepted", accepted);

  SyncResponse busy;
  busy.mutable_report_ack()->set_seq(42);
  busy.mutable_report_ack()->set_result(edge::v1::REPORT_RETRY);
  busy.mutable_report_ack()->set_reason("Busy");
  busy.mutable_report_ack()->set_message("the GM holds 5000 reports");
  busy.mutable_report_ack()->set_retry_after_ms(2500);
  out.emplace_back("response_report_ack_busy", busy);
  return out;
}

std::vector<Resource> DesiredObjects() { return Upserts(); }

std::vector<StatusReport> UndeliveredReports() {
  std::vector<StatusReport> reports = Reports();
  for (StatusReport& report : reports) report.clear_seq();  // the outbox assigns it
  return reports;
}

}  // namespace nereid::compat::release_0_1_0
