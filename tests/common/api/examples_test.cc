// The examples in examples/: each parses, validates, passes its CRD's schema and round-trips
// without losing a field; together they cover every kind, reference only each other, use the
// quickstart's nodes, and prepare-host-root.sh creates every host path they name.

#include <openssl/evp.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/api/dataset.h"
#include "common/api/feature_extraction_service.h"
#include "common/api/federated_learning_job.h"
#include "common/api/incremental_learning_job.h"
#include "common/api/joint_inference_service.h"
#include "common/api/lifelong_learning_job.h"
#include "common/api/model.h"
#include "common/api/object_search_service.h"
#include "common/api/object_tracking_service.h"
#include "common/api/object_validation.h"
#include "common/api/reid_job.h"
#include "common/api/sedna_contract.h"
#include "common/api/validation.h"
#include "common/api/video_analytics_job.h"
#include "tests/common/api/schema_check.h"
#include "tests/common/api/test_data.h"

namespace nereid::api {
namespace {

using kube::Json;

template <typename Kind>
Kind Parse(const Json& doc) {
  auto parsed = Kind::FromJson(doc);
  INFO((parsed.ok() ? std::string() : std::string(parsed.status().message())));
  REQUIRE(parsed.ok());
  return *std::move(parsed);
}

TEST_CASE("every example parses, validates, fits its CRD and round-trips") {
  std::vector<std::string> files = testing::ListFiles("examples", ".yaml");
  REQUIRE(files.size() == 12);  // One per kind here, plus distributedjob.yaml (tests/common/job).
  std::map<std::string, int> per_kind;
  for (const std::string& file : files) {
    std::vector<Json> docs = testing::LoadYamlDocs("examples/" + file);
    REQUIRE_FALSE(docs.empty());
    for (const Json& doc : docs) {
      std::string kind = kube::StringAt(doc, "kind");
      CAPTURE(file, kind, kube::Name(doc));
      if (kind == "DistributedJob") continue;  // common/job's kind, checked in tests/common/job.
      REQUIRE(resources::ForKind(kind) != nullptr);
      CHECK(doc["apiVersion"] == "sedna.io/v1alpha1");
      CHECK(IsDnsSubdomain(kube::Name(doc)));
      ++per_kind[kind];

      auto causes = ValidateObject(doc);
      REQUIRE(causes.ok());
      INFO(FormatCauses(*causes));
      CHECK(causes->empty());

      std::vector<std::string> errors = testing::CheckAgainstSchema(testing::SchemaFor(kind), doc);
      std::string joined;
      for (const auto& e : errors) joined += e + "\n";
      INFO(joined);
      CHECK(errors.empty());

      // The typed model writes back exactly the spec that was read.
      Json spec;
      if (kind == kinds::kDataset) spec = Parse<Dataset>(doc).ToJson()["spec"];
      if (kind == kinds::kModel) spec = Parse<Model>(doc).ToJson()["spec"];
      if (kind == kinds::kJointInferenceService) {
        spec = Parse<JointInferenceService>(doc).ToJson()["spec"];
      }
      if (kind == kinds::kFederatedLearningJob) {
        spec = Parse<FederatedLearningJob>(doc).ToJson()["spec"];
      }
      if (kind == kinds::kIncrementalLearningJob) {
        spec = Parse<IncrementalLearningJob>(doc).ToJson()["spec"];
      }
      if (kind == kinds::kLifelongLearningJob) {
        spec = Parse<LifelongLearningJob>(doc).ToJson()["spec"];
      }
      if (kind == kinds::kFeatureExtractionService) {
        spec = Parse<FeatureExtractionService>(doc).ToJson()["spec"];
      }
      if (kind == kinds::kObjectSearchService) {
        spec = Parse<ObjectSearchService>(doc).ToJson()["spec"];
      }
      if (kind == kinds::kObjectTrackingService) {
        spec = Parse<ObjectTrackingService>(doc).ToJson()["spec"];
      }
      if (kind == kinds::kVideoAnalyticsJob) spec = Parse<VideoAnalyticsJob>(doc).ToJson()["spec"];
      if (kind == kinds::kReidJob) spec = Parse<ReidJob>(doc).ToJson()["spec"];
      CHECK(spec == doc["spec"]);
    }
  }
  for (const kube::Resource* r : resources::All()) {
    CAPTURE(r->kind);
    CHECK(per_kind[r->kind] >= 1);
  }
}

TEST_CASE("examples reference each other consistently on nodes edge-0 and edge-1") {
  std::map<std::string, Dataset> datasets;
  std::set<std::string> models;
  std::vector<Json> all = testing::AllExamples();
  for (const Json& doc : all) {
    if (doc["kind"] == "Dataset") {
      Dataset d = Parse<Dataset>(doc);
      datasets.emplace(d.metadata.name, d);
    }
    if (doc["kind"] == "Model") models.insert(kube::Name(doc));
  }
  const std::set<std::string> nodes = {"edge-0", "edge-1"};
  std::set<std::string> nodes_used;
  auto check_node = [&](const PodTemplate& t) {
    std::string node = TemplateNodeName(t);
    if (!node.empty()) {
      CHECK(nodes.count(node) == 1);
      nodes_used.insert(node);
    }
    return node;
  };
  for (const auto& [name, d] : datasets) {
    CHECK(nodes.count(d.spec.node_name) == 1);
    nodes_used.insert(d.spec.node_name);
  }
  for (const Json& doc : all) {
    CAPTURE(kube::Name(doc));
    if (doc["kind"] == "JointInferenceService") {
      auto s = Parse<JointInferenceService>(doc);
      CHECK(models.count(s.spec.edge_worker.model.name) == 1);
      CHECK(models.count(s.spec.cloud_worker.model.name) == 1);
      CHECK(check_node(s.spec.edge_worker.pod_template) == "edge-0");
      check_node(s.spec.cloud_worker.pod_template);
    }
    if (doc["kind"] == "FederatedLearningJob") {
      auto j = Parse<FederatedLearningJob>(doc);
      CHECK(models.count(j.spec.aggregation_worker.model.name) == 1);
      std::set<std::string> worker_nodes;
      for (const TrainingWorker& w : j.spec.training_workers) {
        REQUIRE(datasets.count(w.dataset.name) == 1);
        // A training worker runs where its dataset is.
        CHECK(check_node(w.pod_template) == datasets.at(w.dataset.name).spec.node_name);
        worker_nodes.insert(TemplateNodeName(w.pod_template));
      }
      CHECK(worker_nodes == nodes);
    }
    if (doc["kind"] == "IncrementalLearningJob") {
      auto j = Parse<IncrementalLearningJob>(doc);
      REQUIRE(datasets.count(j.spec.dataset.name) == 1);
      CHECK(models.count(j.spec.initial_model.name) == 1);
      CHECK(models.count(j.spec.deploy_spec.model.name) == 1);
      const std::string& node = datasets.at(j.spec.dataset.name).spec.node_name;
      CHECK(check_node(j.spec.train_spec.pod_template) == node);
      CHECK(check_node(j.spec.eval_spec.pod_template) == node);
      CHECK(check_node(j.spec.deploy_spec.pod_template) == node);
    }
    if (doc["kind"] == "FeatureExtractionService") {
      auto s = Parse<FeatureExtractionService>(doc);
      CHECK(models.count(s.spec.model.name) == 1);
      check_node(s.spec.deployment.pod_template);
    }
    if (doc["kind"] == "ObjectSearchService" || doc["kind"] == "ObjectTrackingService") {
      std::vector<TemplateWorker> tracking =
          doc["kind"] == "ObjectSearchService"
              ? Parse<ObjectSearchService>(doc).spec.tracking_workers
              : Parse<ObjectTrackingService>(doc).spec.tracking_workers;
      for (const TemplateWorker& w : tracking) CHECK_FALSE(check_node(w.pod_template).empty());
    }
    if (doc["kind"] == "VideoAnalyticsJob") {
      auto j = Parse<VideoAnalyticsJob>(doc);
      CHECK(models.count(j.spec.model.name) == 1);
      check_node(j.spec.job.pod_template);
    }
    if (doc["kind"] == "ReidJob") check_node(Parse<ReidJob>(doc).spec.job.pod_template);
    if (doc["kind"] == "LifelongLearningJob") {
      auto j = Parse<LifelongLearningJob>(doc);
      REQUIRE(datasets.count(j.spec.dataset.name) == 1);
      const std::string& node = datasets.at(j.spec.dataset.name).spec.node_name;
      CHECK(check_node(j.spec.train_spec.pod_template) == node);
      CHECK(check_node(j.spec.eval_spec.pod_template) == node);
      CHECK(check_node(j.spec.deploy_spec.pod_template) == node);
    }
  }
  CHECK(nodes_used == nodes);
}

std::string Sha256File(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string data = buffer.str();
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr);
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

size_t CountLines(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) ++n;
  return n;
}

TEST_CASE("prepare-host-root.sh creates every host path the examples use") {
  namespace fs = std::filesystem;
  fs::path root = fs::temp_directory_path() / ("nereid-api-test-" + std::to_string(::getpid()));
  fs::remove_all(root);
  std::string cmd = "bash '" + testing::SourceDir() + "/examples/prepare-host-root.sh' '" +
                    root.string() + "' > /dev/null";
  REQUIRE(std::system(cmd.c_str()) == 0);
  // Idempotent: a second run succeeds and keeps what is there.
  std::ofstream(root / "data/helmet_detection/train_data/train_data.txt", std::ios::app)
      << "extra.jpg 1\n";
  REQUIRE(std::system(cmd.c_str()) == 0);
  CHECK(CountLines((root / "data/helmet_detection/train_data/train_data.txt").string()) == 11);

  for (const Json& doc : testing::AllExamples()) {
    CAPTURE(kube::Name(doc));
    if (doc["kind"] == "Dataset") {
      Dataset d = Parse<Dataset>(doc);
      fs::path file = root.string() + d.spec.url;
      REQUIRE(fs::is_regular_file(file));
      // Enough samples for the IL/LL train triggers (num_of_samples > 5) to fire.
      CHECK(CountLines(file.string()) >= 10);
    }
    if (doc["kind"] == "Model") {
      Model m = Parse<Model>(doc);
      fs::path file = root.string() + m.spec.url;
      REQUIRE(fs::is_regular_file(file));
      if (!m.spec.sha256.empty()) CHECK(Sha256File(file.string()) == m.spec.sha256);
    }
    if (doc["kind"] == "IncrementalLearningJob") {
      CHECK(fs::is_directory(root.string() + Parse<IncrementalLearningJob>(doc).spec.output_dir));
    }
    if (doc["kind"] == "LifelongLearningJob") {
      CHECK(fs::is_directory(root.string() + Parse<LifelongLearningJob>(doc).spec.output_dir));
    }
  }
  CHECK(std::system(
            ("bash '" + testing::SourceDir() + "/examples/prepare-host-root.sh' > /dev/null 2>&1")
                .c_str()) != 0);
  fs::remove_all(root);
}

}  // namespace
}  // namespace nereid::api
