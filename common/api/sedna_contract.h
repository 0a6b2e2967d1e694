#pragma once

// The Sedna contract in one place: the sedna.io/v1alpha1 resources, the labels Sedna puts on every
// worker it creates, the worker types, the env vars injected into workers, well-known ports,
// annotations and paths. Existing Sedna worker images and the Sedna Python SDK depend on these
// exact spellings (docs/sedna-compatibility.md), so controllers must take them from here, never
// retype them.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/kube/resource.h"

namespace nereid::api {

inline constexpr std::string_view kGroup = "sedna.io";
inline constexpr std::string_view kVersion = "v1alpha1";
inline constexpr std::string_view kApiVersion = "sedna.io/v1alpha1";
// Every Nereid CRD is in this category, so `kubectl get sedna` lists all of them.
inline constexpr std::string_view kCategory = "sedna";

namespace kinds {
inline constexpr std::string_view kDataset = "Dataset";
inline constexpr std::string_view kModel = "Model";
inline constexpr std::string_view kJointInferenceService = "JointInferenceService";
inline constexpr std::string_view kFederatedLearningJob = "FederatedLearningJob";
inline constexpr std::string_view kIncrementalLearningJob = "IncrementalLearningJob";
inline constexpr std::string_view kLifelongLearningJob = "LifelongLearningJob";
// The multi-edge inference family (pedestrian tracking, object search, video analytics).
inline constexpr std::string_view kFeatureExtractionService = "FeatureExtractionService";
inline constexpr std::string_view kVideoAnalyticsJob = "VideoAnalyticsJob";
inline constexpr std::string_view kReidJob = "ReidJob";
inline constexpr std::string_view kObjectSearchService = "ObjectSearchService";
inline constexpr std::string_view kObjectTrackingService = "ObjectTrackingService";
}  // namespace kinds

namespace resources {
const kube::Resource& Datasets();
const kube::Resource& Models();
const kube::Resource& JointInferenceServices();
const kube::Resource& FederatedLearningJobs();
const kube::Resource& IncrementalLearningJobs();
const kube::Resource& LifelongLearningJobs();
const kube::Resource& FeatureExtractionServices();
const kube::Resource& VideoAnalyticsJobs();
const kube::Resource& ReidJobs();
const kube::Resource& ObjectSearchServices();
const kube::Resource& ObjectTrackingServices();
// Every kind whose CRD is in deploy/crds and whose typed model is in common/api.
const std::vector<const kube::Resource*>& All();
// The resource of a sedna.io kind ("Dataset", ...), or nullptr for any other kind.
const kube::Resource* ForKind(std::string_view kind);
}  // namespace resources

// ---- Labels on every object a controller creates for a CR (Pods, Deployments, Services, HPAs).
// Keys are "<lower-case kind>.sedna.io/{name,uid,worker-type}", e.g.
// "federatedlearningjob.sedna.io/name". Selectors use name + uid.
std::string LabelKeyName(std::string_view kind);
std::string LabelKeyUid(std::string_view kind);
std::string LabelKeyWorkerType(std::string_view kind);
// name + uid: what a controller selects its children with.
std::map<std::string, std::string> SelectorLabels(std::string_view kind, std::string_view name,
                                                  std::string_view uid);
// name + uid + worker-type (lower-cased, as Sedna writes it).
std::map<std::string, std::string> WorkerLabels(std::string_view kind, std::string_view name,
                                                std::string_view uid, std::string_view worker_type);
// Sedna's Deployments also carry app.sedna.io=<cr name>-<worker type>-svc (EdgeMesh selector).
inline constexpr std::string_view kAppLabelKey = "app.sedna.io";
std::string AppLabelValue(std::string_view name, std::string_view worker_type);

// ---- Worker types (the worker-type label value; lower case).
namespace worker_types {
inline constexpr std::string_view kEdge = "edge";    // JointInferenceService edge worker.
inline constexpr std::string_view kCloud = "cloud";  // JointInferenceService cloud worker.
inline constexpr std::string_view kAggregation = "aggregation";  // FederatedLearningJob.
inline constexpr std::string_view kTrain = "train";              // FL training, IL/LL train stage.
inline constexpr std::string_view kEval = "eval";                // IL/LL eval stage.
inline constexpr std::string_view kInference = "inference";      // IL/LL deploy stage.
inline constexpr std::string_view kFeatureExtraction = "fe";     // FeatureExtractionService.
inline constexpr std::string_view kVideoAnalytics = "videoanalytics";  // VideoAnalyticsJob.
inline constexpr std::string_view kReid = "reid";                      // ReidJob.
// ObjectSearchService / ObjectTrackingService.
inline constexpr std::string_view kReidWorker = "reidworker";
inline constexpr std::string_view kUserWorker = "userworker";
inline constexpr std::string_view kTrackingWorker = "trackingworker";
}  // namespace worker_types

// ---- Names of generated children (Sedna's scheme, so operators find them where they expect).
// Deployment "<name>-deployment-<type>".
std::string DeploymentName(std::string_view name, std::string_view worker_type);
// Service "<name>-<type>" (e.g. "<ji>-cloud", "<fl>-aggregation").
std::string ServiceName(std::string_view name, std::string_view worker_type);
// Pod generateName "<name>-<type>-".
std::string PodGenerateName(std::string_view name, std::string_view worker_type);
// HPA "hpa-<deployment name>".
std::string HpaName(std::string_view deployment_name);

// ---- Ports.
namespace ports {
inline constexpr int kLocalController = 9100;      // LC worker-report REST server (LC_SERVER).
inline constexpr int kJointInferenceCloud = 5000;  // JI cloud worker (BIG_MODEL_BIND_PORT).
inline constexpr int kAggregation = 7363;          // FL aggregation worker (AGG_BIND_PORT).
// Multi-edge inference Services (the Python SDK's plugin defaults).
inline constexpr int kFeatureExtraction = 6000;
inline constexpr int kVideoAnalytics = 4000;
inline constexpr int kReid = 5000;
inline constexpr int kReidWorker = 9378;  // ObjectSearchService reid workers (EDGEMESH_URL).
inline constexpr int kUserWorker = 9379;  // ObjectSearchService user worker (USERWORKER_URL).
}  // namespace ports

// ---- Env vars injected into every container of a worker.
namespace env {
// All workers.
inline constexpr std::string_view kNamespace = "NAMESPACE";
inline constexpr std::string_view kJobName = "JOB_NAME";          // FL/IL/LL.
inline constexpr std::string_view kServiceName = "SERVICE_NAME";  // JI.
inline constexpr std::string_view kWorkerName = "WORKER_NAME";    // "<type>worker-<rand5>".
inline constexpr std::string_view kLcServer = "LC_SERVER";
// JointInferenceService.
inline constexpr std::string_view kBigModelBindPort = "BIG_MODEL_BIND_PORT";
inline constexpr std::string_view kBigModelIp = "BIG_MODEL_IP";
inline constexpr std::string_view kBigModelPort = "BIG_MODEL_PORT";
inline constexpr std::string_view kHemName = "HEM_NAME";
inline constexpr std::string_view kHemParameters = "HEM_PARAMETERS";  // JSON of the params array.
// FederatedLearningJob.
inline constexpr std::string_view kAggBindPort = "AGG_BIND_PORT";
inline constexpr std::string_view kParticipantsCount = "PARTICIPANTS_COUNT";
inline constexpr std::string_view kTransmitter = "TRANSMITTER";  // "ws" | "s3".
inline constexpr std::string_view kAggIp = "AGG_IP";
inline constexpr std::string_view kAggPort = "AGG_PORT";
inline constexpr std::string_view kModelName = "MODEL_NAME";
inline constexpr std::string_view kDatasetName = "DATASET_NAME";
// LifelongLearningJob.
inline constexpr std::string_view kKbServer = "KB_SERVER";
inline constexpr std::string_view kHasCompletedInitialTraining = "HAS_COMPLETED_INITIAL_TRAINING";
inline constexpr std::string_view kCloudKbIndex = "CLOUD_KB_INDEX";
// Multi-edge inference.
inline constexpr std::string_view kKafkaEnabled = "KAFKA_ENABLED";  // "true" with kafkaSupport.
inline constexpr std::string_view kUserWorkerUrl = "USERWORKER_URL";  // "<svc>.<ns>:9379".
inline constexpr std::string_view kEdgemeshUrl = "EDGEMESH_URL";      // "<svc>.<ns>:9378".
// Model hot update (IL deploy stage).
inline constexpr std::string_view kModelHotUpdate = "MODEL_HOT_UPDATE";
inline constexpr std::string_view kModelPollPeriodSeconds = "MODEL_POLL_PERIOD_SECONDS";
inline constexpr std::string_view kModelHotUpdateConfig = "MODEL_HOT_UPDATE_CONFIG";
// Where the worker finds its inputs/outputs after storage injection.
inline constexpr std::string_view kModelUrl = "MODEL_URL";
inline constexpr std::string_view kModelUrls = "MODEL_URLS";  // Several, joined by ';'.
inline constexpr std::string_view kBaseModelUrl = "BASE_MODEL_URL";
inline constexpr std::string_view kPretrainedModelUrl = "PRETRAINED_MODEL_URL";
inline constexpr std::string_view kTrainDatasetUrl = "TRAIN_DATASET_URL";
inline constexpr std::string_view kTestDatasetUrl = "TEST_DATASET_URL";
inline constexpr std::string_view kOriginalDatasetUrl = "ORIGINAL_DATASET_URL";
inline constexpr std::string_view kAggDataPath = "AGG_DATA_PATH";
inline constexpr std::string_view kOutputUrl = "OUTPUT_URL";
inline constexpr std::string_view kDataPathPrefix = "DATA_PATH_PREFIX";  // "/home/data".
// S3 credentials (from the Secret named by credentialName).
inline constexpr std::string_view kS3EndpointUrl = "S3_ENDPOINT_URL";
inline constexpr std::string_view kAccessKeyId = "ACCESS_KEY_ID";
inline constexpr std::string_view kSecretAccessKey = "SECRET_ACCESS_KEY";
}  // namespace env

// ---- Annotations and paths.
namespace annotations {
// Prefix of Sedna's annotations; IL/LL stage nodes are "sedna.io/Train|Eval|Deploy" = node name.
inline constexpr std::string_view kPrefix = "sedna.io/";
inline constexpr std::string_view kModelHotUpdateConfig = "sedna.io/model-hot-update-config";
}  // namespace annotations
// "sedna.io/<Stage>": the node a stage pod of an IL/LL job runs on.
std::string StageNodeAnnotation(std::string_view stage);

namespace paths {
inline constexpr std::string_view kHostDataPrefix = "/home/data";  // hostPath mounts in workers.
inline constexpr std::string_view kModelHotUpdateHostPrefix = "/var/lib/sedna/model-hot-update";
inline constexpr std::string_view kModelHotUpdateContainerPrefix = "/model-hot-update";
inline constexpr std::string_view kModelHotUpdateVolumeName = "sedna-model-hot-update-volume";
inline constexpr std::string_view kModelHotUpdateConfigFile = "model_config.json";
}  // namespace paths

// The kind names Sedna uses in LC messages and worker reports (ownerKind): the lower-cased kind.
std::string LowerKind(std::string_view kind);

}  // namespace nereid::api
