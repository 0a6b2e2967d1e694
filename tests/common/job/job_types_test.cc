// The common job types: RunPolicy/task parsing and validation (DI-orchestrator's validation rows),
// JobStatus JSON, the condition algebra (training-operator's plus absorbing Succeeded),
// expectations, exit-code classification, names, labels and env (training-operator and
// DI-orchestrator naming/env rows).

#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "absl/strings/str_split.h"
#include "common/api/object_validation.h"
#include "common/job/conditions.h"
#include "common/job/distributed_job.h"
#include "common/job/expectations.h"
#include "common/job/job_validation.h"
#include "common/job/pod_builder.h"
#include "common/job/pod_failure.h"
#include "common/job/quantity.h"
#include "common/time/fake_clock.h"

namespace nereid::job {
namespace {

using kube::Json;

Json Template(const std::string& container = "main") {
  return {{"spec", {{"containers", Json::array({{{"name", container}, {"image", "busybox"}}})}}}};
}

Json Job(Json tasks, Json run_policy = Json::object()) {
  Json spec = {{"tasks", std::move(tasks)}};
  if (!run_policy.empty()) spec["runPolicy"] = std::move(run_policy);
  return {{"apiVersion", "sedna.io/v1alpha1"},
          {"kind", "DistributedJob"},
          {"metadata", {{"name", "dj"}, {"namespace", "ns"}, {"uid", "u1"}}},
          {"spec", std::move(spec)}};
}

Json TaskJson(const std::string& name, const std::string& type, int replicas) {
  Json t = {{"type", type}, {"replicas", replicas}, {"template", Template()}};
  if (!name.empty()) t["name"] = name;
  return t;
}

std::set<std::string> Fields(const std::vector<kube::StatusCause>& causes) {
  std::set<std::string> out;
  for (const auto& c : causes) out.insert(c.field);
  return out;
}

TEST_CASE("DistributedJob parses runPolicy and tasks with defaults and round-trips") {
  Json doc =
      Job(Json::array({TaskJson("learner", "learner", 1), TaskJson("", "collector", 3)}),
          {{"cleanPodPolicy", "All"},
           {"ttlSecondsAfterFinished", 60},
           {"activeDeadlineSeconds", 120},
           {"backoffLimit", 2},
           {"suspend", true},
           {"schedulingPolicy", {{"minAvailable", 2}, {"queue", "q"}, {"priorityClass", "high"}}}});
  doc["spec"]["tasks"][0]["restartPolicy"] = "OnFailure";
  auto job = DistributedJob::FromJson(doc);
  REQUIRE(job.ok());
  const RunPolicy& rp = job->spec.run_policy;
  CHECK(rp.CleanPolicy() == CleanPodPolicy::kAll);
  CHECK(rp.ttl_seconds_after_finished == 60);
  CHECK(rp.active_deadline_seconds == 120);
  CHECK(rp.BackoffLimit() == 2);
  CHECK(rp.suspend);
  REQUIRE(rp.scheduling_policy.has_value());
  CHECK(rp.scheduling_policy->min_available == 2);
  CHECK(rp.scheduling_policy->queue == "q");
  CHECK(rp.scheduling_policy->priority_class == "high");
  REQUIRE(job->spec.tasks.size() == 2);
  CHECK(job->spec.tasks[0].EffectiveRestartPolicy() == RestartPolicy::kOnFailure);
  // DI-orchestrator row 38: a typed task without a name is named after its type.
  CHECK(job->spec.tasks[1].name == "collector");
  CHECK(job->spec.tasks[1].type == TaskType::kCollector);
  CHECK(job->spec.TotalReplicas() == 4);
  CHECK(job->Validate().empty());
  // Round trip of the spec (the defaulted name is written back).
  auto again = DistributedJob::FromJson(job->ToJson());
  REQUIRE(again.ok());
  CHECK(again->spec == job->spec);

  // Defaults.
  auto plain =
      DistributedJob::FromJson(Job(Json::array({{{"name", "w"}, {"template", Template()}}})));
  REQUIRE(plain.ok());
  CHECK(plain->spec.run_policy.CleanPolicy() == CleanPodPolicy::kRunning);
  CHECK(plain->spec.run_policy.BackoffLimit() == 6);
  CHECK(plain->spec.tasks[0].type == TaskType::kNone);
  CHECK(plain->spec.tasks[0].Replicas() == 1);
  CHECK(plain->spec.tasks[0].EffectiveRestartPolicy() == RestartPolicy::kExitCode);
  // The template's restartPolicy is the default when the task has none.
  Json with_template_policy = Template();
  with_template_policy["spec"]["restartPolicy"] = "Never";
  auto tp = DistributedJob::FromJson(
      Job(Json::array({{{"name", "w"}, {"template", with_template_policy}}})));
  REQUIRE(tp.ok());
  CHECK(tp->spec.tasks[0].EffectiveRestartPolicy() == RestartPolicy::kNever);
}

TEST_CASE("DistributedJob type errors are reported with their paths, all at once") {
  Json doc = Job(Json::array({{{"name", "a"},
                               {"type", "trainer"},
                               {"replicas", "two"},
                               {"restartPolicy", "Sometimes"},
                               {"template", Template()}}}),
                 {{"cleanPodPolicy", "Some"}, {"backoffLimit", -1}});
  auto job = DistributedJob::FromJson(doc);
  REQUIRE_FALSE(job.ok());
  std::set<std::string> fields = Fields(kube::Causes(job.status()));
  CHECK(fields.count("spec.tasks[0].type") == 1);
  CHECK(fields.count("spec.tasks[0].replicas") == 1);
  CHECK(fields.count("spec.tasks[0].restartPolicy") == 1);
  CHECK(fields.count("spec.runPolicy.cleanPodPolicy") == 1);
  CHECK(fields.count("spec.runPolicy.backoffLimit") == 1);
  CHECK_FALSE(DistributedJob::FromJson(Json::array()).ok());
}

TEST_CASE("validation: DI-orchestrator row 38 and Nereid's naming limits") {
  auto causes_of = [](Json tasks, Json policy = Json::object(), std::string name = "dj") {
    Json doc = Job(std::move(tasks), std::move(policy));
    doc["metadata"]["name"] = name;
    auto job = DistributedJob::FromJson(doc);
    REQUIRE(job.ok());
    return job->Validate();
  };
  // Same task name twice.
  CHECK(Fields(causes_of(Json::array({TaskJson("a", "none", 1), TaskJson("a", "none", 1)}))) ==
        std::set<std::string>{"spec.tasks[1].name"});
  // Two collector tasks.
  CHECK(Fields(causes_of(
            Json::array({TaskJson("c1", "collector", 1), TaskJson("c2", "collector", 1)}))) ==
        std::set<std::string>{"spec.tasks[1].type"});
  // A none task without a name.
  CHECK(Fields(causes_of(Json::array({TaskJson("", "none", 1)}))) ==
        std::set<std::string>{"spec.tasks[0].name"});
  // No tasks; negative replicas are refused by parsing (minimum 0).
  CHECK(Fields(causes_of(Json::array())) == std::set<std::string>{"spec.tasks"});
  // minAvailable beyond the replicas; deadline 0.
  CHECK(Fields(causes_of(
            Json::array({TaskJson("a", "none", 2)}),
            {{"schedulingPolicy", {{"minAvailable", 3}}}, {"activeDeadlineSeconds", 0}})) ==
        std::set<std::string>{"spec.runPolicy.schedulingPolicy.minAvailable",
                              "spec.runPolicy.activeDeadlineSeconds"});
  // The job name names the Service (DNS-1035) and pod names are hostnames (<= 63).
  CHECK(Fields(causes_of(Json::array({TaskJson("a", "none", 1)}), Json::object(), "1job")) ==
        std::set<std::string>{"metadata.name"});
  CHECK(Fields(causes_of(Json::array({TaskJson(std::string(60, 'x'), "none", 1)}))) ==
        std::set<std::string>{"spec.tasks[0].name"});
  // A task without a template.
  CHECK(Fields(causes_of(Json::array({{{"name", "a"}}}))) ==
        std::set<std::string>{"spec.tasks[0].template"});
}

TEST_CASE("api::ValidateObject covers DistributedJob (registered by common/job)") {
  CHECK(Fields(*api::ValidateObject(Job(Json::array({TaskJson("a", "learner", 1)})))).empty());
  // Unique task names, at most one learner/collector/evaluator, all at once with their paths.
  auto causes = api::ValidateObject(
      Job(Json::array({TaskJson("a", "learner", 1), TaskJson("a", "none", 1),
                       TaskJson("l2", "learner", 1), TaskJson("e1", "evaluator", 1),
                       TaskJson("e2", "evaluator", 1)})));
  REQUIRE(causes.ok());
  CHECK(Fields(*causes) ==
        std::set<std::string>{"spec.tasks[1].name", "spec.tasks[2].type", "spec.tasks[4].type"});
  // replicas < 0 and wrong types do not parse: InvalidArgument with the causes.
  Json negative = Job(Json::array({TaskJson("a", "none", -1)}));
  auto refused = api::ValidateObject(negative);
  REQUIRE_FALSE(refused.ok());
  CHECK(absl::IsInvalidArgument(refused.status()));
  CHECK(Fields(kube::Causes(refused.status())) == std::set<std::string>{"spec.tasks[0].replicas"});
  Json mistyped = Job(Json::array({TaskJson("a", "none", 1)}));
  mistyped["spec"]["tasks"][0]["type"] = "sampler";
  CHECK(absl::IsInvalidArgument(api::ValidateObject(mistyped).status()));
}

TEST_CASE("JobStatus JSON round-trips every field") {
  JobStatus st;
  absl::Time t = absl::FromUnixSeconds(1700000000);
  SetCondition(&st, "Created", kTrue, "JobCreated", "created", t);
  SetCondition(&st, "Running", kTrue, "JobRunning", "running", t + absl::Seconds(1));
  st.replica_statuses["learner"] = {1, 2, 3, 4, 5};
  st.task_status["learner"] = {{"Running", 1}, {"Succeeded", 2}};
  st.task_summary = "learner 3/3";
  st.restarts = 5;
  st.start_time = t;
  st.completion_time = t + absl::Seconds(5);
  st.last_reconcile_time = t + absl::Seconds(6);
  st.phase = "Running";
  api::FieldReader reader;
  JobStatus back = ReadJobStatus(st.ToJson(), "status", &reader);
  CHECK(reader.ok());
  CHECK(back == st);
  Json bad = {{"restarts", "x"}, {"conditions", Json::array({1})}};
  ReadJobStatus(bad, "status", &reader);
  CHECK(Fields(reader.causes()) ==
        std::set<std::string>{"status.restarts", "status.conditions[0]"});
}

TEST_CASE("condition algebra: one per type, transitions, exclusions, absorbing terminals") {
  JobStatus st;
  absl::Time t0 = absl::FromUnixSeconds(1700000000);
  CHECK(SetCondition(&st, "Created", kTrue, "JobCreated", "m", t0));
  CHECK_FALSE(SetCondition(&st, "Created", kTrue, "JobCreated", "m", t0 + absl::Seconds(1)));
  CHECK(SetCondition(&st, "Running", kTrue, "JobRunning", "m", t0 + absl::Seconds(1)));
  // Restarting removes Running, Running removes Restarting (not set False).
  CHECK(SetCondition(&st, "Restarting", kTrue, "JobRestarting", "m", t0 + absl::Seconds(2)));
  CHECK(st.FindCondition("Running") == nullptr);
  CHECK(SetCondition(&st, "Running", kTrue, "JobRunning", "m", t0 + absl::Seconds(3)));
  CHECK(st.FindCondition("Restarting") == nullptr);
  CHECK(PhaseOf(st) == phases::kRunning);
  // Same status, new reason: lastTransitionTime kept.
  CHECK(SetCondition(&st, "Running", kTrue, "Other", "m2", t0 + absl::Seconds(4)));
  CHECK(st.FindCondition("Running")->last_transition_time == t0 + absl::Seconds(3));
  CHECK(st.FindCondition("Running")->last_update_time == t0 + absl::Seconds(4));
  // The changed condition moves to the end.
  CHECK(st.conditions.back().type == "Running");
  // Succeeded turns Running False and is absorbing: Failed cannot follow (never both True).
  CHECK(SetCondition(&st, "Succeeded", kTrue, "JobSucceeded", "done", t0 + absl::Seconds(5)));
  CHECK(st.FindCondition("Running")->status == kFalse);
  CHECK(st.IsSucceeded());
  CHECK_FALSE(SetCondition(&st, "Failed", kTrue, "TaskFailed", "x", t0 + absl::Seconds(6)));
  CHECK_FALSE(st.IsFailed());
  CHECK_FALSE(SetCondition(&st, "Running", kTrue, "JobRunning", "x", t0 + absl::Seconds(6)));
  CHECK(PhaseOf(st) == phases::kSucceeded);

  JobStatus f;
  SetCondition(&f, "Restarting", kTrue, "JobRestarting", "m", t0);
  SetCondition(&f, "Failed", kTrue, "BackoffLimitExceeded", "m", t0);
  CHECK(f.FindCondition("Restarting")->status == kFalse);  // Upstream leaves it True.
  CHECK_FALSE(SetCondition(&f, "Succeeded", kTrue, "JobSucceeded", "m", t0));
  CHECK(PhaseOf(f) == phases::kFailed);

  JobStatus s;
  SetCondition(&s, "Suspended", kTrue, "JobSuspended", "m", t0);
  CHECK(PhaseOf(s) == phases::kSuspended);
  CHECK(PhaseOf(JobStatus{}) == phases::kPending);
}

TEST_CASE("expectations: adds counted, deletes by uid (idempotent), status fence, 5 min expiry") {
  FakeClock clock;
  Expectations e(&clock);
  CHECK(e.Satisfied("ns/j", "1"));
  e.ExpectCreations("ns/j", 2);
  e.ExpectDeletion("ns/j", "uid-a");
  CHECK_FALSE(e.Satisfied("ns/j", "1"));
  e.CreationObserved("ns/j");
  e.CreationObserved("ns/j");
  CHECK_FALSE(e.Satisfied("ns/j", "1"));
  e.DeletionObserved("ns/j", "uid-a");  // Seen terminating...
  e.DeletionObserved("ns/j", "uid-a");  // ...and gone: one deletion.
  CHECK(e.Pending("ns/j") == std::pair<int, int>{0, 0});
  CHECK(e.Satisfied("ns/j", "1"));

  e.ExpectStatus("ns/j", "10");
  CHECK_FALSE(e.Satisfied("ns/j", "9"));
  CHECK(e.Satisfied("ns/j", "11"));
  CHECK(e.Satisfied("ns/j", "9"));  // Fence cleared once reached.

  e.ExpectCreations("ns/k", 1);
  clock.Advance(absl::Minutes(4));
  CHECK_FALSE(e.Satisfied("ns/k", ""));
  CHECK(e.TimeToExpiry("ns/k") == absl::Minutes(1));
  clock.Advance(absl::Minutes(1));
  CHECK(e.Satisfied("ns/k", ""));  // A lost event does not wedge the job.

  CHECK(ResourceVersionAtLeast("10", "9"));
  CHECK_FALSE(ResourceVersionAtLeast("9", "10"));
  CHECK(ResourceVersionAtLeast("abc", "abc"));
  CHECK_FALSE(ResourceVersionAtLeast("abd", "abc"));
}

Json FailedPod(std::optional<int> exit_code, const std::string& reason = "") {
  Json pod = {{"spec", {{"containers", Json::array({{{"name", "main"}}, {{"name", "side"}}})}}},
              {"status", {{"phase", "Failed"}}}};
  if (!reason.empty()) pod["status"]["reason"] = reason;
  Json statuses = Json::array(
      {{{"name", "side"}, {"restartCount", 1}, {"state", {{"terminated", {{"exitCode", 0}}}}}}});
  Json main = {{"name", "main"}, {"restartCount", 2}};
  if (exit_code.has_value()) {
    main["state"] = {{"terminated", {{"exitCode", *exit_code}, {"reason", "Error"}}}};
  }
  statuses.push_back(main);
  pod["status"]["containerStatuses"] = statuses;
  return pod;
}

TEST_CASE("exit codes: >=128 or none retryable, 1-127 permanent (training-operator rows 17, 18)") {
  CHECK(ClassifyFailedPod(FailedPod(130), RestartPolicy::kExitCode).retryable);
  CHECK(ClassifyFailedPod(FailedPod(137), RestartPolicy::kExitCode).retryable);
  PodFailure one = ClassifyFailedPod(FailedPod(1), RestartPolicy::kExitCode);
  CHECK_FALSE(one.retryable);
  CHECK(one.exit_code == 1);  // The first container's, not the sidecar's 0.
  CHECK(one.Describe() == "exit code 1 (Error)");
  PodFailure evicted =
      ClassifyFailedPod(FailedPod(std::nullopt, "Evicted"), RestartPolicy::kExitCode);
  CHECK(evicted.retryable);
  CHECK(evicted.Describe() == "Evicted, no exit code");
  CHECK(ClassifyFailedPod(FailedPod(1), RestartPolicy::kOnFailure).retryable);
  CHECK(ClassifyFailedPod(FailedPod(1), RestartPolicy::kAlways).retryable);
  CHECK_FALSE(ClassifyFailedPod(FailedPod(137), RestartPolicy::kNever).retryable);
  CHECK(ContainerRestarts(FailedPod(1)) == 3);
  CHECK(PodPhase(Json::object()) == "Pending");
}

JobSpec Spec(std::vector<std::pair<std::string, int>> tasks) {
  JobSpec spec;
  for (auto& [name, replicas] : tasks) {
    Task t;
    t.name = name;
    t.type = ParseTaskType(name).value_or(TaskType::kNone);
    t.replicas = replicas;
    t.pod_template = Template();
    spec.tasks.push_back(t);
  }
  return spec;
}

std::string EnvOf(const Json& pod, const std::string& name) {
  for (const Json& e : pod["spec"]["containers"][0]["env"]) {
    if (e["name"] == name) return e["value"];
  }
  return "<unset>";
}

JobIdentity Id() { return {"sedna.io/v1alpha1", "DistributedJob", "dj", "ns", "u1"}; }

TEST_CASE("pods: names, labels, owner, hostname, restartPolicy mapping (TO rows 9, 12)") {
  CHECK(PodName("job", "worker", 3) == "job-worker-3");
  JobSpec spec = Spec({{"learner", 1}, {"collector", 2}});
  spec.tasks[1].restart_policy = RestartPolicy::kExitCode;
  spec.tasks[1].pod_template["spec"]["restartPolicy"] = "Always";
  spec.tasks[1].pod_template["metadata"] = {{"labels", {{"app", "x"}}}, {"name", "ignored"}};
  BuiltPod built = BuildPod(Id(), spec, spec.tasks[1], 1, {{{"extra", "e"}}, false});
  const Json& pod = built.pod;
  CHECK(pod["metadata"]["name"] == "dj-collector-1");
  CHECK(pod["metadata"]["namespace"] == "ns");
  Json labels = pod["metadata"]["labels"];
  CHECK(labels["sedna.io/job-kind"] == "distributedjob");
  CHECK(labels["sedna.io/job-name"] == "dj");
  CHECK(labels["sedna.io/task-name"] == "collector");
  CHECK(labels["sedna.io/task-type"] == "collector");
  CHECK(labels["sedna.io/task-index"] == "1");
  CHECK(labels["app"] == "x");
  CHECK(labels["extra"] == "e");
  Json owner = pod["metadata"]["ownerReferences"][0];
  CHECK(owner["kind"] == "DistributedJob");
  CHECK(owner["uid"] == "u1");
  CHECK(owner["controller"] == true);
  CHECK(owner["blockOwnerDeletion"] == true);
  CHECK(pod["spec"]["hostname"] == "dj-collector-1");
  CHECK(pod["spec"]["subdomain"] == "dj");
  // ExitCode → Never, and the template's Always is overridden with a warning.
  CHECK(pod["spec"]["restartPolicy"] == "Never");
  REQUIRE(built.warnings.size() == 1);
  CHECK_FALSE(pod["spec"].contains("schedulerName"));
  for (auto [policy, pod_policy] : {std::pair{RestartPolicy::kAlways, "Always"},
                                    {RestartPolicy::kOnFailure, "OnFailure"},
                                    {RestartPolicy::kNever, "Never"}}) {
    spec.tasks[0].restart_policy = policy;
    CHECK(BuildPod(Id(), spec, spec.tasks[0], 0, {}).pod["spec"]["restartPolicy"] == pod_policy);
  }
  // Gang: schedulerName and the PodGroup annotations.
  Json gang = BuildPod(Id(), spec, spec.tasks[0], 0, {{}, true}).pod;
  CHECK(gang["spec"]["schedulerName"] == "volcano");
  CHECK(gang["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == "dj");
  CHECK(gang["metadata"]["annotations"]["volcano.sh/task-spec"] == "learner");
}

TEST_CASE("pods: env tells task, index, rank, replicas and peers (DI-orchestrator rows 35, 36)") {
  JobSpec spec = Spec({{"learner", 1}, {"collector", 2}, {"evaluator", 1}});
  Json pod = BuildPod(Id(), spec, spec.tasks[1], 1, {}).pod;
  CHECK(EnvOf(pod, "NEREID_JOB_NAME") == "dj");
  CHECK(EnvOf(pod, "NEREID_JOB_NAMESPACE") == "ns");
  CHECK(EnvOf(pod, "NEREID_SERVICE") == "dj");
  CHECK(EnvOf(pod, "NEREID_TASK_NAME") == "collector");
  CHECK(EnvOf(pod, "NEREID_TASK_TYPE") == "collector");
  CHECK(EnvOf(pod, "NEREID_TASK_INDEX") == "1");
  CHECK(EnvOf(pod, "NEREID_TASK_REPLICAS") == "2");
  CHECK(EnvOf(pod, "NEREID_RANK") == "2");
  CHECK(EnvOf(pod, "NEREID_WORLD_SIZE") == "4");
  CHECK(EnvOf(pod, "NEREID_TASKS") == "learner,collector,evaluator");
  CHECK(EnvOf(pod, "NEREID_LEARNER_REPLICAS") == "1");
  CHECK(EnvOf(pod, "NEREID_LEARNER_HOSTS") == "dj-learner-0.dj.ns.svc");
  CHECK(EnvOf(pod, "NEREID_COLLECTOR_HOSTS") ==
        "dj-collector-0.dj.ns.svc,dj-collector-1.dj.ns.svc");
  CHECK(EnvOf(pod, "NEREID_HOSTS") ==
        "dj-learner-0.dj.ns.svc,dj-collector-0.dj.ns.svc,dj-collector-1.dj.ns.svc,"
        "dj-evaluator-0.dj.ns.svc");
  CHECK(TaskHostsEnv("collector-a") == "NEREID_COLLECTOR_A_HOSTS");
  // A variable the user set is kept.
  Json user = Template();
  user["spec"]["containers"][0]["env"] = Json::array({{{"name", "NEREID_RANK"}, {"value", "7"}}});
  spec.tasks[0].pod_template = user;
  CHECK(EnvOf(BuildPod(Id(), spec, spec.tasks[0], 0, {}).pod, "NEREID_RANK") == "7");

  // DI-orchestrator: Σ over pods of |hosts| = 9/16/36 for replicas [1,1,1]/[1,1,2]/[1,3,2]; the
  // world size is 3/4/6 (their status.replicas).
  for (auto [layout, sum, world] : {std::tuple{std::vector<int>{1, 1, 1}, 9, 3},
                                    {std::vector<int>{1, 1, 2}, 16, 4},
                                    {std::vector<int>{1, 3, 2}, 36, 6}}) {
    JobSpec s = Spec({{"learner", layout[0]}, {"collector", layout[1]}, {"evaluator", layout[2]}});
    int total = 0;
    for (const Task& t : s.tasks) {
      for (int i = 0; i < t.Replicas(); ++i) {
        Json p = BuildPod(Id(), s, t, i, {}).pod;
        std::vector<std::string> hosts = absl::StrSplit(EnvOf(p, "NEREID_HOSTS"), ',');
        total += static_cast<int>(hosts.size());
        CHECK(EnvOf(p, "NEREID_WORLD_SIZE") == std::to_string(world));
      }
    }
    CHECK(total == sum);
  }
}

TEST_CASE("the headless Service and the PodGroup") {
  JobSpec spec = Spec({{"learner", 1}, {"collector", 2}});
  spec.tasks[0].pod_template["spec"]["containers"][0]["ports"] =
      Json::array({{{"name", "di"}, {"containerPort", 22270}}});
  spec.tasks[1].pod_template["spec"]["containers"][0]["ports"] =
      Json::array({{{"containerPort", 22270}}, {{"containerPort", 53}, {"protocol", "UDP"}}});
  Json svc = BuildService(Id(), spec, {{"extra", "e"}});
  CHECK(svc["metadata"]["name"] == "dj");
  CHECK(svc["spec"]["clusterIP"] == "None");
  CHECK(svc["spec"]["publishNotReadyAddresses"] == true);
  CHECK(svc["spec"]["selector"] ==
        Json({{"sedna.io/job-kind", "distributedjob"}, {"sedna.io/job-name", "dj"}}));
  CHECK(svc["metadata"]["labels"]["extra"] == "e");
  REQUIRE(svc["spec"]["ports"].size() == 2);
  CHECK(svc["spec"]["ports"][0]["name"] == "di");
  CHECK(svc["spec"]["ports"][1]["name"] == "udp-53");

  Json pg = BuildPodGroup(Id(), spec);
  CHECK(pg["apiVersion"] == "scheduling.volcano.sh/v1beta1");
  CHECK(pg["metadata"]["name"] == "dj");
  CHECK(pg["spec"]["minMember"] == 3);  // All replicas by default.
  CHECK(pg["spec"]["queue"] == "default");
  CHECK_FALSE(pg["spec"].contains("priorityClassName"));
  spec.run_policy.scheduling_policy = SchedulingPolicy{2, "q", "high"};
  pg = BuildPodGroup(Id(), spec);
  CHECK(pg["spec"]["minMember"] == 2);
  CHECK(pg["spec"]["queue"] == "q");
  CHECK(pg["spec"]["priorityClassName"] == "high");
  CHECK(pg["metadata"]["ownerReferences"][0]["uid"] == "u1");
  CHECK_FALSE(pg["spec"].contains("minResources"));  // Nothing requested.
}

TEST_CASE("quantities: parse, format, pod requests") {
  auto milli = [](std::string_view q) {
    auto v = ParseQuantityMilli(q);
    INFO(q);
    REQUIRE(v.ok());
    return *v;
  };
  CHECK(milli("500m") == 500);
  CHECK(milli("2") == 2000);
  CHECK(milli("1.5") == 1500);
  CHECK(milli("0.1") == 100);
  CHECK(milli("1Ki") == 1024'000);
  CHECK(milli("1.5Gi") == int64_t{3} * (int64_t{1} << 29) * 1000);
  CHECK(milli("1k") == 1000'000);
  CHECK(milli("1e3") == 1000'000);
  CHECK(milli("1G") == int64_t{1000'000'000'000});
  CHECK(milli("1n") == 1);  // Rounded up to a milli-unit.
  CHECK(milli("-1") == -1000);
  for (std::string_view bad : {"", "m", "1x", "1.2.3", "Gi", "1e", "1Gi5", "99999999999Ei", "1E"}) {
    INFO(bad);
    CHECK_FALSE(ParseQuantityMilli(bad).ok());
  }
  CHECK(FormatQuantityMilli(500) == "500m");
  CHECK(FormatQuantityMilli(3000) == "3");
  CHECK(FormatQuantityMilli((int64_t{2} << 30) * 1000) == "2Gi");
  CHECK(FormatQuantityMilli(1000'000'000) == "1000000");
  CHECK(FormatQuantityMilli(0) == "0");

  // Containers add up, init containers count by their maximum, limits stand in for requests.
  Json pod = Json::parse(R"({
    "containers": [
      {"name": "a", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}},
      {"name": "b", "resources": {"limits": {"cpu": "1", "nvidia.com/gpu": 1}}},
      {"name": "c"}],
    "initContainers": [
      {"name": "i", "resources": {"requests": {"cpu": "2", "memory": "64Mi"}}}],
    "overhead": {"memory": "1Mi"}})");
  auto requests = PodRequests(pod);
  REQUIRE(requests.ok());
  CHECK(ResourceListToJson(*requests) ==
        Json({{"cpu", "2"}, {"memory", "1025Mi"}, {"nvidia.com/gpu", "1"}}));
  pod["containers"][0]["resources"]["requests"]["cpu"] = "lots";
  auto bad = PodRequests(pod);
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("spec.containers[0].resources.requests.cpu") !=
        std::string::npos);
}

TEST_CASE("PodGroup minResources: the requests of the minMember first pods in spec order") {
  JobSpec spec = Spec({{"learner", 1}, {"collector", 3}});
  spec.tasks[0].pod_template["spec"]["containers"][0]["resources"] = {
      {"requests", {{"cpu", "2"}, {"memory", "4Gi"}, {"nvidia.com/gpu", "1"}}}};
  spec.tasks[1].pod_template["spec"]["containers"][0]["resources"] = {
      {"requests", {{"cpu", "500m"}, {"memory", "512Mi"}}}};
  // All four pods by default.
  Json pg = BuildPodGroup(Id(), spec);
  CHECK(pg["spec"]["minResources"] ==
        Json({{"cpu", "3500m"}, {"memory", "5632Mi"}, {"nvidia.com/gpu", "1"}}));
  // minAvailable 2: the learner and one collector.
  spec.run_policy.scheduling_policy = SchedulingPolicy{2, "", ""};
  pg = BuildPodGroup(Id(), spec);
  CHECK(pg["spec"]["minMember"] == 2);
  CHECK(pg["spec"]["minResources"] ==
        Json({{"cpu", "2500m"}, {"memory", "4608Mi"}, {"nvidia.com/gpu", "1"}}));
  // A malformed quantity: no minResources (pod creation reports the error).
  spec.tasks[1].pod_template["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "?";
  CHECK_FALSE(BuildPodGroup(Id(), spec)["spec"].contains("minResources"));
}

}  // namespace
}  // namespace nereid::job
