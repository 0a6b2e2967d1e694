// Status helpers: one-per-type conditions, EdgeVersion, WriteStatus.

#include <catch2/catch.hpp>

#include "absl/time/clock.h"
#include "common/api/sedna_contract.h"
#include "common/kube/errors.h"
#include "common/time/fake_clock.h"
#include "globalmanager/controllers/edge_objects.h"
#include "globalmanager/controllers/status_conditions.h"
#include "globalmanager/controllers/status_writer.h"
#include "tests/fakes/fake_kube_client.h"
#include "tests/globalmanager/controllers/controller_env.h"

namespace nereid::gm {
namespace {

using kube::Json;

TEST_CASE("SetStatusCondition keeps one condition per type and dates transitions") {
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  const absl::Time t1 = absl::FromUnixSeconds(2000);
  const absl::Time t2 = absl::FromUnixSeconds(3000);
  Json status = Json::object();
  CHECK(SetStatusCondition(&status, "Counted", "False", "PathNotFound", "no file", t0));
  CHECK_FALSE(SetStatusCondition(&status, "Counted", "False", "PathNotFound", "no file", t1));
  CHECK(SetStatusCondition(&status, "Counted", "False", "PathNotFound", "still no file", t1));
  std::optional<api::Condition> c = FindStatusCondition(status, "Counted");
  REQUIRE(c.has_value());
  CHECK(c->last_transition_time == t0);  // same status: only the heartbeat moves
  CHECK(c->last_heartbeat_time == t1);
  CHECK(SetStatusCondition(&status, "Counted", "True", "Counted", "", t2));
  c = FindStatusCondition(status, "Counted");
  CHECK(c->status == "True");
  CHECK(c->last_transition_time == t2);
  CHECK_FALSE(c->message.size());
  CHECK(SetStatusCondition(&status, "SpecValid", "True", "Valid", "", t2));
  CHECK(status["conditions"].size() == 2);
  CHECK(ConditionIs(status, "SpecValid", "True"));
  CHECK_FALSE(ConditionIs(status, "SpecValid", "False"));
  CHECK_FALSE(FindStatusCondition(status, "Ready").has_value());
  // A null status becomes an object; malformed entries are dropped when rewritten.
  Json null_status;
  CHECK(SetStatusCondition(&null_status, "A", "True", "", "", t0));
  Json messy = {{"conditions", Json::array({42, {{"type", "B"}, {"status", "True"}}})}};
  CHECK(SetStatusCondition(&messy, "A", "True", "", "", t0));
  CHECK(messy["conditions"].size() == 2);
}

TEST_CASE("EdgeVersion is the generation; without one, a stable hash of the spec") {
  Json object = {{"metadata", {{"generation", 3}, {"resourceVersion", "99"}}},
                 {"spec", {{"url", "/a"}}}};
  CHECK(EdgeVersion(object) == "3");
  CHECK(GenerationOfVersion("3") == 3);
  object["metadata"].erase("generation");
  const std::string hashed = EdgeVersion(object);
  CHECK(hashed.size() == 17);
  CHECK(hashed[0] == 'h');
  object["status"] = {{"numberOfSamples", 5}};
  object["metadata"]["resourceVersion"] = "100";
  CHECK(EdgeVersion(object) == hashed);  // status and resourceVersion do not matter
  object["spec"]["url"] = "/b";
  CHECK(EdgeVersion(object) != hashed);
  CHECK_FALSE(GenerationOfVersion(hashed).has_value());
  CHECK_FALSE(GenerationOfVersion("").has_value());
  CHECK_FALSE(GenerationOfVersion("0").has_value());
}

TEST_CASE("WriteStatus writes through the status subresource only when something changed") {
  FakeClock clock;
  fakes::FakeKubeClient client(&clock);
  const kube::Resource& datasets = api::resources::Datasets();
  Json created = *client.Create(datasets, "default", testing::DatasetObject("d1", "edge-0"));
  auto set_count = [](int n) {
    return [n](const Json&, Json* status) -> absl::Status {
      (*status)["numberOfSamples"] = n;
      return absl::OkStatus();
    };
  };
  absl::StatusOr<StatusWrite> w =
      WriteStatus(client, datasets, "default", "d1", kube::Uid(created), set_count(4));
  REQUIRE(w.ok());
  CHECK(w->written);
  CHECK(w->before == Json::object());
  CHECK(w->after == Json{{"numberOfSamples", 4}});
  CHECK(client.CountActions(fakes::Verb::kUpdateStatus) == 1);
  w = WriteStatus(client, datasets, "default", "d1", "", set_count(4));
  REQUIRE(w.ok());
  CHECK_FALSE(w->written);
  CHECK(client.CountActions(fakes::Verb::kUpdateStatus) == 1);

  SECTION("a stale cached copy: the conflict is followed by a fresh read at once") {
    auto stale = std::make_shared<const Json>(created);  // before the first write
    client.ClearActions();
    w = WriteStatus(client, datasets, "default", "d1", kube::Uid(created), set_count(5), stale);
    REQUIRE(w.ok());
    CHECK(w->written);
    CHECK(w->before == Json{{"numberOfSamples", 4}});
    CHECK(client.CountActions(fakes::Verb::kUpdateStatus) == 2);
    CHECK(client.CountActions(fakes::Verb::kGet) == 1);
  }
  SECTION("a stale cached copy that looks unchanged is confirmed on a fresh read") {
    auto stale = std::make_shared<const Json>(created);  // shows no status
    client.ClearActions();
    w = WriteStatus(client, datasets, "default", "d1", "",
                    [](const Json&, Json* status) -> absl::Status {
                      status->erase("numberOfSamples");
                      return absl::OkStatus();
                    },
                    stale);
    REQUIRE(w.ok());
    CHECK(w->written);  // The API had numberOfSamples; the stale copy did not.
    CHECK(client.CountActions(fakes::Verb::kGet) == 1);
  }
  SECTION("a cached copy that has seen our last write answers 'unchanged' without a GET") {
    auto current = std::make_shared<const Json>(*client.Get(datasets, "default", "d1"));
    client.ClearActions();
    for (int resync = 0; resync < 3; ++resync) {
      w = WriteStatus(client, datasets, "default", "d1", kube::Uid(created), set_count(4), current);
      REQUIRE(w.ok());
      CHECK_FALSE(w->written);
    }
    CHECK(client.Actions().empty());
  }
  SECTION("a copy that looks unchanged but predates our last write is confirmed on a fresh read") {
    // The cache shows 4 (our first write) but not our second write of 5: concluding "unchanged"
    // from it would leave 5 in the API for good.
    auto shows_four = std::make_shared<const Json>(*client.Get(datasets, "default", "d1"));
    REQUIRE(WriteStatus(client, datasets, "default", "d1", "", set_count(5)).ok());
    client.ClearActions();
    w = WriteStatus(client, datasets, "default", "d1", "", set_count(4), shows_four);
    REQUIRE(w.ok());
    CHECK(w->written);
    CHECK(w->before == Json{{"numberOfSamples", 5}});
    CHECK(client.CountActions(fakes::Verb::kGet) == 1);
    CHECK(client.CountActions(fakes::Verb::kUpdateStatus) == 1);
  }
  SECTION("uid mismatch and missing objects are NotFound; mutator errors are returned") {
    CHECK(absl::IsNotFound(
        WriteStatus(client, datasets, "default", "d1", "other-uid", set_count(1)).status()));
    CHECK(absl::IsNotFound(
        WriteStatus(client, datasets, "default", "nope", "", set_count(1)).status()));
    absl::Status refused =
        WriteStatus(client, datasets, "default", "d1", "",
                    [](const Json&, Json*) { return absl::FailedPreconditionError("no"); })
            .status();
    CHECK(refused.code() == absl::StatusCode::kFailedPrecondition);
  }
  // Conflicts are retried at once on the calling thread: a reconcile worker never sleeps holding
  // its key (the fake clock here is never advanced; a wait on any clock would show as time).
  SECTION("conflicts on fresh copies are retried at once, kMaxFreshStatusAttempts times") {
    auto stale = std::make_shared<const Json>(created);
    client.ClearActions();
    client.FailNext(fakes::Verb::kUpdateStatus, kMaxFreshStatusAttempts,
                    kube::ConflictError("datasets.sedna.io", "d1", "modified"));
    const absl::Time started = absl::Now();
    w = WriteStatus(client, datasets, "default", "d1", kube::Uid(created), set_count(6), stale);
    REQUIRE(w.ok());  // The cached copy's and 4 fresh conflicts, then the last fresh attempt.
    CHECK(w->written);
    CHECK(absl::Now() - started < absl::Seconds(5));
    CHECK(client.CountActions(fakes::Verb::kUpdateStatus) == 1 + kMaxFreshStatusAttempts);
    CHECK(client.CountActions(fakes::Verb::kGet) == kMaxFreshStatusAttempts);
  }
  SECTION("conflicts beyond the attempts are returned (the workqueue or the LC retries)") {
    client.ClearActions();
    client.FailNext(fakes::Verb::kUpdateStatus, kMaxFreshStatusAttempts + 1,
                    kube::ConflictError("datasets.sedna.io", "d1", "modified"));
    absl::Status s = WriteStatus(client, datasets, "default", "d1", "", set_count(7)).status();
    CHECK(kube::IsConflict(s));
    CHECK(client.CountActions(fakes::Verb::kUpdateStatus) == kMaxFreshStatusAttempts);
    CHECK(client.CountActions(fakes::Verb::kGet) == kMaxFreshStatusAttempts);
  }
}

}  // namespace
}  // namespace nereid::gm
