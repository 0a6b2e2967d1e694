// S3 credentials in the GM: a Dataset or Model that names `credentialName` carries its Secret's
// credential (Sedna's format) to its node only, with the Secret's resourceVersion folded into the
// edge version; an unusable Secret (403, 404, wrong format) is a condition and an Event, and no
// credential value ever appears in a status, an Event or an error.

#include "globalmanager/controllers/s3_credentials.h"

#include <catch2/catch.hpp>

#include <functional>
#include <memory>

#include "common/api/sedna_contract.h"
#include "common/kube/errors.h"
#include "common/kube/resource.h"
#include "globalmanager/controllers/dataset_controller.h"
#include "globalmanager/controllers/edge_objects.h"
#include "globalmanager/controllers/model_controller.h"
#include "globalmanager/controllers/secret_cache.h"
#include "globalmanager/controllers/spec_validity.h"
#include "globalmanager/controllers/status_conditions.h"
#include "tests/fakes/eventually.h"
#include "tests/globalmanager/controllers/controller_env.h"

namespace nereid::gm {
namespace {

using fakes::Eventually;
using fakes::Verb;
using kube::Json;
using testing::ControllerEnv;
using testing::DatasetObject;
using testing::ModelObject;

constexpr char kKeyId[] = "AKIDEXAMPLEKEYID0001";
constexpr char kSecretKey[] = "sEcReTvAlUe/DoNotLeak+0001";
constexpr char kD1[] = "Dataset/default/d1";

const kube::Resource& Secrets() { return kube::resources::Secrets(); }
const kube::Resource& Datasets() { return api::resources::Datasets(); }
const kube::Resource& Models() { return api::resources::Models(); }

Json SednaSecret(const std::string& name, const std::string& ns = "default") {
  return testing::SednaS3Secret(name, kSecretKey, ns, "127.0.0.1:9000", kKeyId);
}

Json S3Dataset(const std::string& credential = "mysecret") {
  Json d = DatasetObject("d1", "edge-0", "s3://bucket/train.txt");
  if (!credential.empty()) d["spec"]["credentialName"] = credential;
  return d;
}

bool Leaks(const Json& json) {
  const std::string text = json.dump();
  return text.find(kSecretKey) != std::string::npos || text.find(kKeyId) != std::string::npos;
}

// Advances the fake clock past the credential recheck until `condition` holds (bounded). A recheck
// is scheduled when its reconcile ends, which may be just after an advance: hence a few rounds.
bool AfterRechecks(FakeClock& clock, const std::function<bool()>& condition) {
  for (int round = 0; round < 20; ++round) {
    clock.Advance(kCredentialRecheckPeriod + absl::Seconds(1));
    if (Eventually(condition, absl::Milliseconds(500))) return true;
  }
  return false;
}

struct DatasetFixture {
  ControllerEnv env;
  std::unique_ptr<DatasetController> controller;

  DatasetFixture() {
    controller = env.Run(DatasetController::Create(env.context()));
  }
  ~DatasetFixture() { env.StopInformersAndController(*controller); }

  Json Status() { return env.StatusOf(Datasets(), "d1"); }

};

TEST_CASE("an s3 Dataset carries its Secret's credential to its node, versioned by the Secret") {
  DatasetFixture f;
  Json secret = f.env.Create(Secrets(), SednaSecret("mysecret"));
  f.env.Create(Datasets(), S3Dataset());
  REQUIRE(Eventually([&] { return f.env.edge().Holds("edge-0", kD1); }));
  edge::v1::Resource r = *f.env.edge().Get("edge-0", kD1);
  REQUIRE(r.dataset().has_s3_credential());
  CHECK(r.dataset().s3_credential().endpoint() == "127.0.0.1:9000");
  CHECK_FALSE(r.dataset().s3_credential().use_https());
  CHECK(r.dataset().s3_credential().access_key_id() == kKeyId);
  CHECK(r.dataset().s3_credential().secret_access_key() == kSecretKey);
  CHECK(r.version() == "1/s" + kube::ResourceVersion(secret));
  CHECK(GenerationOfVersion(r.version()) == 1);
  CHECK(f.env.edge().NodesOf(kD1) == std::vector<std::string>{"edge-0"});
  // Only the named Secret, only in the Dataset's namespace; never a list or watch of Secrets.
  for (const fakes::Action& a : f.env.client().ActionsOf(Verb::kGet, "secrets")) {
    CHECK(a.ns == "default");
    CHECK(a.name == "mysecret");
  }
  CHECK(f.env.client().CountActions(Verb::kList, "secrets") == 0);
  CHECK(f.env.client().CountActions(Verb::kWatch, "secrets") == 0);
  CHECK_FALSE(Leaks(f.env.Get(Datasets(), "default", "d1")));

  SECTION("a rotated Secret is re-sent with a new version") {
    Json rotated = f.env.Patch(Secrets(), "default", "mysecret",
                               {{"stringData", {{"SECRET_ACCESS_KEY", "rotated-key"}}}});
    REQUIRE(AfterRechecks(f.env.clock(), [&] {
      return f.env.edge().Get("edge-0", kD1)->dataset().s3_credential().secret_access_key() ==
             "rotated-key";
    }));
    CHECK(f.env.edge().Get("edge-0", kD1)->version() == "1/s" + kube::ResourceVersion(rotated));
  }
}

TEST_CASE("an unchanged Secret is re-read each recheck period and sends nothing again") {
  DatasetFixture f;
  f.env.Create(Secrets(), SednaSecret("mysecret"));
  f.env.Create(Datasets(), S3Dataset());
  REQUIRE(Eventually([&] { return f.env.edge().Holds("edge-0", kD1); }));
  const int gets = f.env.client().CountActions(Verb::kGet, "secrets");
  const size_t edge_calls = f.env.edge().Calls().size();
  REQUIRE(AfterRechecks(f.env.clock(), [&] {
    return f.env.client().CountActions(Verb::kGet, "secrets") >= gets + 5;
  }));
  CHECK(f.env.edge().Calls().size() == edge_calls);  // Same version: no upsert to the node.
  CHECK(f.env.client().CountActions(Verb::kUpdateStatus) == 0);
}

TEST_CASE("a Dataset that needs no credential reads no Secret") {
  DatasetFixture f;
  Json host = DatasetObject("d1", "edge-0", "/data/train.txt");
  host["spec"]["credentialName"] = "mysecret";  // Named, but a host path has no use for it.
  f.env.Create(Datasets(), host);
  f.env.Create(Datasets(), DatasetObject("d2", "edge-0", "s3://bucket/public.txt"));
  REQUIRE(Eventually([&] { return f.env.edge().Holds("edge-0", kD1); }));
  REQUIRE(Eventually([&] { return f.env.edge().Holds("edge-0", "Dataset/default/d2"); }));
  CHECK(f.env.client().CountActions(Verb::kGet, "secrets") == 0);
  CHECK_FALSE(f.env.edge().Get("edge-0", kD1)->dataset().has_s3_credential());
  CHECK(f.env.edge().Get("edge-0", kD1)->version() == "1");
}

TEST_CASE("a missing Secret is CredentialsNotFound until it appears") {
  DatasetFixture f;
  f.env.Create(Datasets(), S3Dataset());
  REQUIRE(Eventually([&] { return ConditionIs(f.Status(), kSpecValidCondition, "False"); }));
  std::optional<api::Condition> c = FindStatusCondition(f.Status(), kSpecValidCondition);
  REQUIRE(c.has_value());
  CHECK(c->reason == credential_reasons::kNotFound);
  CHECK(c->message.find("\"mysecret\"") != std::string::npos);
  CHECK(f.Status()["reason"] == credential_reasons::kNotFound);
  CHECK_FALSE(f.env.edge().Holds("edge-0", kD1));
  REQUIRE(Eventually([&] { return f.env.Events("d1", "CredentialsNotFound").size() == 1; }));
  CHECK(f.env.Events("d1", "CredentialsNotFound")[0]["type"] == "Warning");

  f.env.Create(Secrets(), SednaSecret("mysecret"));
  REQUIRE(AfterRechecks(f.env.clock(), [&] { return f.env.edge().Holds("edge-0", kD1); }));
  REQUIRE(Eventually([&] { return ConditionIs(f.Status(), kSpecValidCondition, "True"); }));
  CHECK_FALSE(f.Status().contains("reason"));
}

TEST_CASE("a Secret the GM may not read is CredentialsForbidden, and the Dataset is withdrawn") {
  DatasetFixture f;
  f.env.Create(Secrets(), SednaSecret("mysecret"));
  f.env.Create(Datasets(), S3Dataset());
  REQUIRE(Eventually([&] { return f.env.edge().Holds("edge-0", kD1); }));
  // The RoleBinding is removed: the API server answers 403 from now on (the same with the real
  // GM and devapiserver's injected 403: tests/integration/s3_credentials_test.cc).
  f.env.client().FailNext(Verb::kGet, 1000,
                          kube::StatusFromResponse(403, ""),
                          "secrets");
  REQUIRE(AfterRechecks(f.env.clock(),
                        [&] { return ConditionIs(f.Status(), kSpecValidCondition, "False"); }));
  std::optional<api::Condition> c = FindStatusCondition(f.Status(), kSpecValidCondition);
  REQUIRE(c.has_value());
  CHECK(c->reason == credential_reasons::kForbidden);
  CHECK(c->message.find("s3-credentials-rbac.yaml") != std::string::npos);
  CHECK_FALSE(f.env.edge().Holds("edge-0", kD1));
  REQUIRE(Eventually([&] { return f.env.Events("d1", "CredentialsForbidden").size() == 1; }));
  f.env.client().ClearFailures();
}

TEST_CASE("a Secret not in Sedna's format is CredentialsInvalid, naming the field, not values") {
  DatasetFixture f;
  Json secret = SednaSecret("mysecret");
  secret["metadata"].erase("annotations");  // No s3-endpoint.
  f.env.Create(Secrets(), secret);
  f.env.Create(Datasets(), S3Dataset());
  REQUIRE(Eventually([&] { return ConditionIs(f.Status(), kSpecValidCondition, "False"); }));
  std::optional<api::Condition> c = FindStatusCondition(f.Status(), kSpecValidCondition);
  REQUIRE(c.has_value());
  CHECK(c->reason == credential_reasons::kInvalid);
  CHECK(c->message.find("s3-endpoint") != std::string::npos);
  REQUIRE(Eventually([&] { return f.env.Events("d1", "CredentialsInvalid").size() == 1; }));
  CHECK_FALSE(Leaks(f.env.Events("d1", "CredentialsInvalid")[0]));
  CHECK_FALSE(Leaks(f.env.Get(Datasets(), "default", "d1")));
}

TEST_CASE("the reader maps API answers to reasons and reads one namespace") {
  fakes::FakeKubeClient client;
  ControllerContext context;
  context.client = &client;
  S3CredentialReader reader(context);
  std::optional<CredentialProblem> problem;
  REQUIRE(client.Create(Secrets(), "team-a", SednaSecret("s", "team-a")).ok());
  absl::StatusOr<SecretCredential> read = reader.Read("team-a", "s", &problem);
  REQUIRE(read.ok());
  CHECK_FALSE(problem.has_value());
  CHECK(read->credential.EndpointUrl() == "http://127.0.0.1:9000");
  CHECK(VersionWithCredential("3", *read) == "3/s" + read->resource_version);

  CHECK_FALSE(reader.Read("team-b", "s", &problem).ok());  // Not the other namespace's.
  REQUIRE(problem.has_value());
  CHECK(problem->reason == credential_reasons::kNotFound);

  client.FailNext(Verb::kGet, 1, absl::UnavailableError("connection refused"));
  absl::StatusOr<SecretCredential> transient = reader.Read("team-a", "s", &problem);
  CHECK(absl::IsUnavailable(transient.status()));
  CHECK_FALSE(problem.has_value());  // Retried, not reported.

  absl::StatusOr<std::optional<SecretCredential>> none =
      reader.ReadFor("team-a", "https://host/m.pb", "s", &problem);
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());
}

TEST_CASE("the Secret cache: one GET per ttl, errors never cached, bounded in size") {
  fakes::FakeKubeClient client;
  FakeClock clock;
  SecretCache cache(&client, &clock, {.ttl = absl::Seconds(30), .max_entries = 2});
  for (const char* name : {"a", "b", "c"}) {
    REQUIRE(client.Create(Secrets(), "default", SednaSecret(name)).ok());
  }
  auto gets = [&] { return client.CountActions(Verb::kGet, "secrets"); };
  for (int i = 0; i < 3; ++i) REQUIRE(cache.Get("default", "a").ok());
  CHECK(gets() == 1);
  CHECK(cache.stats().hits == 2);
  CHECK_FALSE(cache.Get("other", "a").ok());  // Keyed by namespace too.
  CHECK(gets() == 2);

  clock.Advance(absl::Seconds(31));  // Expired: read again (a rotation shows).
  REQUIRE(cache.Get("default", "a").ok());
  CHECK(gets() == 3);

  // A 403 is not cached and drops the entry: the next read asks again.
  client.FailNext(Verb::kGet, 1, kube::StatusFromResponse(403, ""), "secrets");
  clock.Advance(absl::Seconds(31));
  CHECK(kube::IsForbidden(cache.Get("default", "a").status()));
  REQUIRE(cache.Get("default", "a").ok());
  CHECK(gets() == 5);

  // At most 2 entries: c evicts a (read longest ago), b and c stay.
  clock.Advance(absl::Seconds(1));
  REQUIRE(cache.Get("default", "b").ok());
  clock.Advance(absl::Seconds(1));
  REQUIRE(cache.Get("default", "c").ok());
  CHECK(gets() == 7);
  REQUIRE(cache.Get("default", "b").ok());
  REQUIRE(cache.Get("default", "c").ok());
  CHECK(gets() == 7);
  REQUIRE(cache.Get("default", "a").ok());
  CHECK(gets() == 8);

  SecretCache off(&client, &clock, {.ttl = absl::ZeroDuration()});
  REQUIRE(off.Get("default", "a").ok());
  REQUIRE(off.Get("default", "a").ok());
  CHECK(gets() == 10);
}

TEST_CASE("Datasets naming one Secret share its read through the cache") {
  ControllerEnv env;
  SecretCache cache(&env.client(), &env.clock());
  env.context().secrets = &cache;
  auto controller = env.Run(DatasetController::Create(env.context()));
  env.Create(Secrets(), SednaSecret("mysecret"));
  auto create = [&](const char* name) {
    Json d = DatasetObject(name, "edge-0", "s3://bucket/train.txt");
    d["spec"]["credentialName"] = "mysecret";
    env.Create(Datasets(), d);
  };
  create("d1");
  REQUIRE(Eventually([&] { return env.edge().Holds("edge-0", "Dataset/default/d1"); }));
  for (const char* name : {"d2", "d3", "d4"}) create(name);
  // All four, not the first and the last: the workers may take them in any order.
  REQUIRE(Eventually([&] {
    return env.edge().Holds("edge-0", "Dataset/default/d2") &&
           env.edge().Holds("edge-0", "Dataset/default/d3") &&
           env.edge().Holds("edge-0", "Dataset/default/d4");
  }));
  CHECK(env.client().CountActions(Verb::kGet, "secrets") == 1);
  CHECK(cache.stats().hits >= 3);
  env.StopInformersAndController(*controller);
}

TEST_CASE("an s3 Model carries its credential to the nodes it is sent to") {
  ControllerEnv env;
  auto controller = env.Run(ModelController::Create(env.context()));
  Json secret = env.Create(Secrets(), SednaSecret("mysecret"));
  Json model = ModelObject("m1", "s3://models/m1.pb");
  model["spec"]["credentialName"] = "mysecret";
  model["metadata"]["annotations"] = {{std::string(kModelNodesAnnotation), "edge-1"}};
  env.Create(Models(), model);
  REQUIRE(Eventually([&] { return env.edge().Holds("edge-1", "Model/default/m1"); }));
  edge::v1::Resource r = *env.edge().Get("edge-1", "Model/default/m1");
  CHECK(r.model().s3_credential().access_key_id() == kKeyId);
  CHECK(r.version() == "1/s" + kube::ResourceVersion(secret));
  CHECK(env.edge().NodesOf("Model/default/m1") == std::vector<std::string>{"edge-1"});

  SECTION("a deleted Secret withdraws the Model and says why") {
    env.Delete(Secrets(), "default", "mysecret");
    REQUIRE(AfterRechecks(env.clock(),
                          [&] { return !env.edge().Holds("edge-1", "Model/default/m1"); }));
    REQUIRE(Eventually([&] { return env.Events("m1", "CredentialsNotFound").size() == 1; }));
  }
  env.StopInformersAndController(*controller);
}

}  // namespace
}  // namespace nereid::gm
