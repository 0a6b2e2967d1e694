#include "localcontroller/trigger/job_manager.h"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/time/fake_clock.h"
#include "localcontroller/cloudlink/lc_db_adapter.h"
#include "tests/fakes/eventually.h"
#include "tests/support/subprocess.h"

namespace nereid::lc::trigger {
namespace {

namespace v1 = edge::v1;

constexpr char kNode[] = "edge-1";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Fixture {
  Fixture() {
    absl::StatusOr<testing::TempDir> created = testing::TempDir::Create("lc-jobs");
    REQUIRE(created.ok());
    dir.emplace(*std::move(created));
    root = dir->File("root");
    std::filesystem::create_directories(root + "/data");
    db = OpenDb();
    AddDataset();
    manager = MakeManager();
  }

  std::unique_ptr<db::LcDatabase> OpenDb() {
    db::LcDatabase::Options o;
    o.path = dir->File("lc.db");
    o.node_name = kNode;
    o.clock = &clock;
    absl::StatusOr<std::unique_ptr<db::LcDatabase>> opened = db::LcDatabase::Open(o);
    REQUIRE(opened.ok());
    return *std::move(opened);
  }

  std::unique_ptr<JobManager> MakeManager(std::string node = kNode,
                                          std::vector<std::string> data_roots = {}) {
    JobManager::Options o;
    o.db = db.get();
    o.node_name = std::move(node);
    o.host_root = root;
    o.data_roots = dataset::DataRoots(data_roots);
    o.clock = &clock;
    o.zone = absl::UTCTimeZone();
    o.dataset_count = [this](const std::string& key) -> std::optional<uint64_t> {
      const int64_t n = count.load();
      if (key != "default/ds" || n < 0) return std::nullopt;
      return static_cast<uint64_t>(n);
    };
    return std::make_unique<JobManager>(std::move(o));
  }

  void Store(const v1::Resource& r) {
    REQUIRE(db->Upsert(ToDbRef(r.ref()), r.version(), r.SerializeAsString()).ok());
  }

  void AddDataset() {
    v1::Resource ds;
    ds.mutable_ref()->set_kind("Dataset");
    ds.mutable_ref()->set_namespace_("default");
    ds.mutable_ref()->set_name("ds");
    ds.mutable_ref()->set_uid("ds-uid");
    ds.set_version("1");
    ds.mutable_dataset()->set_url("/data/train.txt");
    ds.mutable_dataset()->set_format("txt");
    ds.mutable_dataset()->set_node_name(kNode);
    Store(ds);
    for (auto [name, url] :
         {std::pair{"init", "/models/init.pb"}, {"deploy", "/models/deploy.pb"}}) {
      v1::Resource m;
      m.mutable_ref()->set_kind("Model");
      m.mutable_ref()->set_namespace_("default");
      m.mutable_ref()->set_name(name);
      m.set_version("1");
      m.mutable_model()->set_url(url);
      Store(m);
    }
  }

  void WriteSamples(int n) {
    std::ofstream out(root + "/data/train.txt", std::ios::trunc);
    for (int i = 0; i < n; ++i) out << "img" << i << ".jpg label\n";
    count = n;
  }

  v1::Resource Il(const std::string& stage, const std::string& type, std::string version = "1") {
    v1::Resource r;
    r.mutable_ref()->set_kind("IncrementalLearningJob");
    r.mutable_ref()->set_namespace_("default");
    r.mutable_ref()->set_name("il");
    r.mutable_ref()->set_uid("il-uid");
    r.set_version(std::move(version));
    v1::IncrementalLearningJobSpec* s = r.mutable_incremental_learning_job();
    s->mutable_dataset()->set_name("ds");
    s->mutable_dataset()->set_train_prob(1.0);
    s->set_initial_model_name("init");
    s->set_deploy_model_name("deploy");
    s->mutable_train_trigger()->set_check_period_seconds(30);
    s->mutable_train_trigger()->mutable_condition()->set_operator_(">");
    s->mutable_train_trigger()->mutable_condition()->set_threshold(5);
    s->mutable_train_trigger()->mutable_condition()->set_metric("num_of_samples");
    s->mutable_deploy_trigger()->set_check_period_seconds(30);
    s->mutable_deploy_trigger()->mutable_condition()->set_operator_(">");
    s->mutable_deploy_trigger()->mutable_condition()->set_threshold(0.1);
    s->mutable_deploy_trigger()->mutable_condition()->set_metric("precision_delta");
    s->set_hot_update_enabled(true);
    s->set_output_dir("/output");
    s->mutable_current()->set_stage(stage);
    s->mutable_current()->set_type(type);
    return r;
  }

  // Applies (and stores, as the daemon's DispatchingStore does first) a job spec.
  void Apply(const v1::Resource& r) {
    Store(r);
    manager->Apply(r);
  }

  std::vector<v1::StatusReport> Outbox() {
    absl::StatusOr<std::vector<db::OutboxEntry>> pending = db->Pending(100);
    REQUIRE(pending.ok());
    std::vector<v1::StatusReport> out;
    for (const db::OutboxEntry& e : *pending) {
      absl::StatusOr<v1::StatusReport> r = DecodeReport(e);
      REQUIRE(r.ok());
      if (r->has_trigger()) out.push_back(*r);
    }
    return out;
  }
  void AckAll() {
    absl::StatusOr<std::vector<db::OutboxEntry>> pending = db->Pending(100);
    REQUIRE(pending.ok());
    for (const db::OutboxEntry& e : *pending) REQUIRE(db->Ack(e.seq).ok());
  }

  FakeClock clock{absl::FromUnixSeconds(1'700'000'000)};
  std::optional<testing::TempDir> dir;
  std::string root;
  std::atomic<int64_t> count{-1};  // -1: not counted yet (read by the manager's thread)
  std::unique_ptr<db::LcDatabase> db;
  std::unique_ptr<JobManager> manager;
};

TEST_CASE("train trigger fires on the dataset's live count, every checkPeriodSeconds") {
  Fixture f;
  f.WriteSamples(3);
  f.Apply(f.Il("Train", "Waiting"));
  absl::Time next = f.manager->Poll();
  CHECK(next == f.clock.Now() + absl::Seconds(30));  // checkPeriodSeconds honoured
  CHECK(f.Outbox().empty());                         // 3 > 5 does not hold

  // More samples arrive, but the next check is only due after the period.
  f.WriteSamples(8);
  f.clock.Advance(absl::Seconds(29));
  f.manager->Poll();
  CHECK(f.Outbox().empty());
  f.clock.Advance(absl::Seconds(1));
  f.manager->Poll();
  std::vector<v1::StatusReport> reports = f.Outbox();
  REQUIRE(reports.size() == 1);
  const v1::TriggerEvent& e = reports[0].trigger();
  CHECK(reports[0].ref().uid() == "il-uid");
  CHECK(reports[0].observed_version() == "1");
  CHECK(e.stage() == "Train");
  CHECK(e.status() == "Ready");
  CHECK(e.num_of_samples() == 8);
  CHECK(e.reason() == "num_of_samples 8 > 5");
  CHECK(e.input().data_url() == "/output/data/train/1/data.txt");
  CHECK(e.input().output_dir() == "/output/train/1");
  REQUIRE(e.input().models_size() == 1);
  CHECK(e.input().models(0).url() == "/models/init.pb");
  const std::string data = ReadFile(f.root + "/output/data/train/1/data.txt");
  CHECK(data.find("img0.jpg label\n") == 0);
  CHECK(data.find("img7.jpg") != std::string::npos);
  std::optional<JobState> state = f.manager->State("IncrementalLearningJob/default/il");
  REQUIRE(state.has_value());
  CHECK(state->rounds == 1);
  CHECK(state->consumed == 8);

  // Still Waiting(Train) at the GM (the report is in flight): nothing is sent again.
  f.AckAll();
  f.clock.Advance(absl::Seconds(60));
  f.manager->Poll();
  CHECK(f.Outbox().empty());

  // The round runs and the job comes back to Waiting(Train): only new samples count.
  f.Apply(f.Il("Train", "Starting", "2"));
  f.manager->Poll();
  f.Apply(f.Il("Train", "Waiting", "3"));
  f.WriteSamples(12);  // 4 new
  f.manager->Poll();
  CHECK(f.Outbox().empty());
  f.WriteSamples(14);  // 6 new
  f.clock.Advance(absl::Seconds(30));
  f.manager->Poll();
  reports = f.Outbox();
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].trigger().num_of_samples() == 6);
  CHECK(reports[0].trigger().input().data_url() == "/output/data/train/2/data.txt");
  // Round 2's base model is the deployed one.
  CHECK(reports[0].trigger().input().models(0).url() == "/models/deploy.pb");
  CHECK(ReadFile(f.root + "/output/data/train/2/data.txt") ==
        "img8.jpg label\nimg9.jpg label\nimg10.jpg label\nimg11.jpg label\nimg12.jpg label\n"
        "img13.jpg label\n");
}

TEST_CASE("LC restart resumes rounds and consumed samples from the database") {
  Fixture f;
  f.WriteSamples(10);
  f.Apply(f.Il("Train", "Waiting"));
  f.manager->Poll();
  REQUIRE(f.Outbox().size() == 1);
  f.AckAll();

  // A new manager over a reopened database (the daemon restarts, the stored spec is applied).
  f.manager.reset();
  f.db.reset();
  f.db = f.OpenDb();
  f.manager = f.MakeManager();
  f.manager->Apply(f.Il("Train", "Waiting"));
  f.manager->Poll();
  CHECK(f.Outbox().empty());  // the same condition was reported before the restart
  std::optional<JobState> state = f.manager->State("IncrementalLearningJob/default/il");
  REQUIRE(state.has_value());
  CHECK(state->rounds == 1);
  CHECK(state->consumed == 10);

  f.manager->Apply(f.Il("Train", "Running", "2"));
  f.manager->Poll();
  f.manager->Apply(f.Il("Train", "Waiting", "3"));
  f.WriteSamples(13);  // 3 new: not enough
  f.manager->Poll();
  CHECK(f.Outbox().empty());
  f.WriteSamples(16);
  f.clock.Advance(absl::Seconds(30));
  f.manager->Poll();
  std::vector<v1::StatusReport> reports = f.Outbox();
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].trigger().num_of_samples() == 6);
  CHECK(reports[0].trigger().input().output_dir() == "/output/train/2");

  // A job re-created under the same name (new uid) starts afresh.
  f.AckAll();
  v1::Resource recreated = f.Il("Train", "Waiting", "9");
  recreated.mutable_ref()->set_uid("il-uid-2");
  f.manager.reset();
  f.manager = f.MakeManager();
  f.Apply(recreated);
  f.manager->Poll();
  state = f.manager->State("IncrementalLearningJob/default/il");
  REQUIRE(state.has_value());
  CHECK(state->rounds == 1);
  CHECK(state->consumed == 16);
}

TEST_CASE("a node without the dataset does not evaluate the train trigger") {
  Fixture f;
  f.WriteSamples(100);
  REQUIRE(*f.db->Delete(db::ObjectRef{"Dataset", "default", "ds", ""}));
  f.Apply(f.Il("Train", "Waiting"));
  f.manager->Poll();
  CHECK(f.Outbox().empty());
}

TEST_CASE("eval is made ready with the trained model; deploy trigger on metric deltas") {
  Fixture f;
  f.WriteSamples(10);
  f.Apply(f.Il("Train", "Waiting"));
  f.manager->Poll();
  f.AckAll();

  v1::Resource eval = f.Il("Eval", "Waiting", "2");
  eval.mutable_incremental_learning_job()
      ->mutable_current()
      ->mutable_output()
      ->add_models()
      ->set_url("/output/train/1/model.pb");
  f.Apply(eval);
  f.manager->Poll();
  std::vector<v1::StatusReport> reports = f.Outbox();
  REQUIRE(reports.size() == 1);
  const v1::TriggerEvent& e = reports[0].trigger();
  CHECK(e.stage() == "Eval");
  CHECK(e.status() == "Ready");
  REQUIRE(e.input().models_size() == 2);
  CHECK(e.input().models(0).url() == "/output/train/1/model.pb");
  CHECK(e.input().models(1).url() == "/models/deploy.pb");
  CHECK(e.input().data_url() == "/output/data/train/1/data.txt");
  f.AckAll();

  auto deploy_waiting = [&](double new_p, double old_p, std::string version) {
    v1::Resource r = f.Il("Deploy", "Waiting", std::move(version));
    v1::StageOutput* out =
        r.mutable_incremental_learning_job()->mutable_current()->mutable_output();
    v1::ModelInfo* m0 = out->add_models();
    m0->set_url("/output/train/1/model.pb");
    (*m0->mutable_metrics())["precision"].add_values(new_p);
    v1::ModelInfo* m1 = out->add_models();
    m1->set_url("/models/deploy.pb");
    (*m1->mutable_metrics())["precision"].add_values(old_p);
    return r;
  };
  f.Apply(deploy_waiting(0.9, 0.7, "3"));  // delta 0.2 > 0.1
  f.manager->Poll();
  reports = f.Outbox();
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].trigger().stage() == "Deploy");
  CHECK(reports[0].trigger().status() == "Ready");
  REQUIRE(reports[0].trigger().input().models_size() == 1);
  CHECK(reports[0].trigger().input().models(0).url() == "/output/train/1/model.pb");
  f.AckAll();

  // The GM starts the deploy on this node (the deploy node): the hot-update file is written.
  v1::Resource starting = f.Il("Deploy", "Starting", "4");
  starting.mutable_incremental_learning_job()
      ->mutable_current()
      ->mutable_input()
      ->add_models()
      ->set_url("/output/train/1/model.pb");
  f.Apply(starting);
  f.manager->Poll();
  reports = f.Outbox();
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].trigger().status() == "Installed");
  const std::string config = ReadFile(
      f.root +
      "/var/lib/sedna/model-hot-update/default/incrementallearningjob/il/model_config.json");
  nlohmann::json j = nlohmann::json::parse(config, nullptr, false);
  REQUIRE(j.is_object());
  CHECK(j["model_config"]["model_path"] == "/output/train/1/model.pb");
  CHECK(j["model_config"]["model_update_time"] == "2023-11-14 22:13:20");
  f.AckAll();

  // Next round: a delta that is too small completes the deploy stage without deploying.
  f.Apply(f.Il("Train", "Waiting", "5"));
  f.manager->Poll();
  f.Apply(deploy_waiting(0.75, 0.7, "6"));
  f.manager->Poll();
  reports = f.Outbox();
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].trigger().status() == "Completed");
  CHECK(reports[0].trigger().reason().find("precision_delta") != std::string::npos);
}

TEST_CASE("deploy without hot update copies the trained model over the deploy model") {
  Fixture f;
  std::filesystem::create_directories(f.root + "/output/train/1");
  std::filesystem::create_directories(f.root + "/models");
  { std::ofstream(f.root + "/output/train/1/model.pb") << "NEW"; }
  { std::ofstream(f.root + "/models/deploy.pb") << "OLD"; }
  v1::Resource r = f.Il("Deploy", "Starting");
  r.mutable_incremental_learning_job()->set_hot_update_enabled(false);
  r.mutable_incremental_learning_job()->mutable_current()->mutable_input()->add_models()->set_url(
      "/output/train/1/model.pb");
  f.Apply(r);
  f.manager->Poll();
  std::vector<v1::StatusReport> reports = f.Outbox();
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].trigger().status() == "Installed");
  CHECK(ReadFile(f.root + "/models/deploy.pb") == "NEW");

  // Another node is the deploy node: this one does nothing.
  Fixture g;
  v1::Resource other = g.Il("Deploy", "Starting");
  other.mutable_incremental_learning_job()->mutable_stage_nodes()->set_deploy("edge-2");
  g.Apply(other);
  g.manager->Poll();
  CHECK(g.Outbox().empty());
}

TEST_CASE("an outputDir that cannot be written is Failed(Train) with its cause, retried later") {
  Fixture f;
  f.WriteSamples(8);
  // Something that is not a directory where the outputDir's data/ must go.
  std::filesystem::create_directories(f.root + "/output");
  { std::ofstream(f.root + "/output/data") << "not a directory"; }
  f.Apply(f.Il("Train", "Waiting"));
  f.manager->Poll();
  std::vector<v1::StatusReport> reports = f.Outbox();
  REQUIRE(reports.size() == 1);
  const v1::TriggerEvent& e = reports[0].trigger();
  CHECK(e.stage() == "Train");
  CHECK(e.status() == "Failed");
  // The host path (not the LC's /rootfs view) and the system's cause.
  CHECK(e.reason().find("writing /output/data/train/1/data.txt: creating its directory: ") !=
        std::string::npos);
  CHECK(e.reason().find(f.root) == std::string::npos);
  std::optional<JobState> state = f.manager->State("IncrementalLearningJob/default/il");
  REQUIRE(state.has_value());
  CHECK(state->rounds == 0);  // nothing consumed: the samples stay new
  CHECK(state->consumed == 0);
  f.AckAll();

  // The GM records Failed(Train) and waits for the trigger again; the write is not retried at
  // once (that would flood the job with failures), but after the trigger period (here the
  // 1-minute floor).
  f.Apply(f.Il("Train", "Failed", "2"));
  f.manager->Poll();
  f.Apply(f.Il("Train", "Waiting", "3"));
  f.manager->Poll();
  CHECK(f.Outbox().empty());
  std::filesystem::remove(f.root + "/output/data");
  f.clock.Advance(absl::Seconds(59));
  f.manager->Poll();
  CHECK(f.Outbox().empty());
  f.clock.Advance(absl::Seconds(1));
  f.manager->Poll();
  reports = f.Outbox();
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].trigger().status() == "Ready");
  CHECK(reports[0].trigger().num_of_samples() == 8);
  CHECK(ReadFile(f.root + "/output/data/train/1/data.txt").find("img7.jpg") != std::string::npos);
}

TEST_CASE("paths outside the data roots are refused with a clear reason") {
  Fixture f;
  f.manager = f.MakeManager(kNode, {"/data", "/models"});
  f.WriteSamples(8);
  f.Apply(f.Il("Train", "Waiting"));  // outputDir /output is not a data root
  f.manager->Poll();
  std::vector<v1::StatusReport> reports = f.Outbox();
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].trigger().status() == "Failed");
  CHECK(reports[0].trigger().reason().find(
            "host path /output/data/train/1/data.txt is outside the LC's data roots "
            "(/data, /models)") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(f.root + "/output"));
  f.AckAll();

  // The hot-update directory too: Failed(Deploy), nothing written.
  v1::Resource starting = f.Il("Deploy", "Starting", "2");
  starting.mutable_incremental_learning_job()->mutable_current()->mutable_input()->add_models()
      ->set_url("/models/new.pb");
  f.Apply(starting);
  f.manager->Poll();
  reports = f.Outbox();
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].trigger().status() == "Failed");
  CHECK(reports[0].trigger().reason().find("/var/lib/sedna/model-hot-update/default/"
                                           "incrementallearningjob/il/model_config.json is "
                                           "outside the LC's data roots") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(f.root + "/var/lib/sedna"));
}

TEST_CASE("the evaluation thread waits on the injected clock") {
  Fixture f;
  f.WriteSamples(2);
  f.Apply(f.Il("Train", "Waiting"));
  f.manager->Start();
  f.WriteSamples(9);
  // Bounded: the thread re-checks once the fake clock passes the trigger's period.
  const bool reported = fakes::Eventually(
      [&] {
        if (f.clock.timed_waiters() > 0) f.clock.Advance(absl::Seconds(30));
        return !f.Outbox().empty();
      },
      absl::Seconds(10), absl::Milliseconds(10));
  f.manager->Stop();
  CHECK(reported);
}

TEST_CASE("steps of the wall clock back or forward do not stall the train trigger") {
  Fixture f;
  f.WriteSamples(3);
  f.Apply(f.Il("Train", "Waiting"));
  f.manager->Poll();  // 3 > 5 does not hold: next check in 30 s
  f.WriteSamples(8);

  // Stepped back an hour (the loop looks within a slice, here at once), then 30 s pass: the
  // check is due now, not in an hour and 30 s.
  f.clock.SetTime(f.clock.Now() - absl::Hours(1));
  f.manager->Poll();
  CHECK(f.Outbox().empty());
  f.clock.Advance(absl::Seconds(30));
  f.manager->Poll();
  REQUIRE(f.Outbox().size() == 1);

  // The report is not acted on: it is sent again 5 min after it was sent, though the clock went
  // back an hour meanwhile.
  f.AckAll();
  f.clock.SetTime(f.clock.Now() - absl::Hours(1));
  f.manager->Poll();
  f.clock.Advance(absl::Minutes(5));
  f.manager->Poll();
  CHECK(f.Outbox().size() == 1);

  // The round runs and the job waits again: 4 new samples do not fire (next check in 30 s).
  f.AckAll();
  f.Apply(f.Il("Train", "Starting", "2"));
  f.manager->Poll();
  f.Apply(f.Il("Train", "Waiting", "3"));
  f.WriteSamples(12);
  f.manager->Poll();
  CHECK(f.Outbox().empty());
  // Stepped forward: whatever became due runs at the next look.
  f.WriteSamples(15);  // 7 new
  f.clock.SetTime(f.clock.Now() + absl::Hours(1));
  f.manager->Poll();
  std::vector<v1::StatusReport> reports = f.Outbox();
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].trigger().num_of_samples() == 7);
}

TEST_CASE("the evaluation thread is not stalled by a step of the clock back") {
  Fixture f;
  f.WriteSamples(2);
  f.Apply(f.Il("Train", "Waiting"));
  f.manager->Start();
  REQUIRE(fakes::Eventually([&] { return f.clock.timed_waiters() > 0; }));
  f.WriteSamples(9);
  f.clock.SetTime(f.clock.Now() - absl::Hours(1));
  // Time passes a second at a time; the trigger's 30 s period is what it takes, not an hour more.
  absl::Duration passed;
  const bool reported = fakes::Eventually(
      [&] {
        if (f.clock.timed_waiters() > 0 && passed < absl::Hours(2)) {
          f.clock.Advance(absl::Seconds(1));
          passed += absl::Seconds(1);
        }
        return !f.Outbox().empty();
      },
      absl::Seconds(20), absl::Milliseconds(2));
  f.manager->Stop();
  INFO("fake time passed: " << passed);
  CHECK(reported);
  CHECK(passed <= absl::Seconds(40));  // the period, give or take a few slices; not an hour
}

}  // namespace
}  // namespace nereid::lc::trigger
