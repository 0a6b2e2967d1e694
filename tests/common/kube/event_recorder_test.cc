#include "common/kube/event_recorder.h"

#include <catch2/catch.hpp>
#include <map>
#include <optional>
#include <string>

#include "common/kube/errors.h"
#include "common/kube/resource.h"
#include "common/time/fake_clock.h"
#include "tests/fakes/eventually.h"
#include "tests/fakes/fake_kube_client.h"
#include "tests/fakes/intercepting_kube_client.h"

namespace nereid::kube {
namespace {

using fakes::Eventually;
using fakes::FakeKubeClient;
using fakes::Verb;

Json Dataset(const std::string& name, const std::string& ns = "ns") {
  Json object = {{"apiVersion", "sedna.io/v1alpha1"},
                 {"kind", "Dataset"},
                 {"metadata", {{"name", name}, {"uid", "uid-" + name}, {"resourceVersion", "7"}}}};
  if (!ns.empty()) object["metadata"]["namespace"] = ns;
  return object;
}

EventRecorderOptions Options() {
  EventRecorderOptions options;
  options.component = "nereid-gm";
  options.host = "gm-0";
  options.reporting_instance = "gm-0";
  return options;
}

struct Fixture {
  FakeClock clock;
  FakeKubeClient client{&clock};

  std::vector<Json> Events() { return client.Objects(resources::Events()); }
};

TEST_CASE("event recorder creates a core/v1 Event", "[events]") {
  Fixture f;
  EventRecorder recorder(&f.client, Options(), &f.clock);
  recorder.Start();
  recorder.Record(Dataset("ds1"), EventType::kWarning, "CountFailed", "cannot read /data/a.txt");
  REQUIRE(recorder.WaitIdle(absl::Seconds(10)));
  auto events = f.Events();
  REQUIRE(events.size() == 1);
  const Json& event = events[0];
  CHECK(Namespace(event) == "ns");
  CHECK(Name(event).rfind("ds1.", 0) == 0);
  CHECK(Name(event).size() > 4);
  CHECK(event["involvedObject"] == Json{{"apiVersion", "sedna.io/v1alpha1"},
                                        {"kind", "Dataset"},
                                        {"namespace", "ns"},
                                        {"name", "ds1"},
                                        {"uid", "uid-ds1"},
                                        {"resourceVersion", "7"}});
  CHECK(event["reason"] == "CountFailed");
  CHECK(event["message"] == "cannot read /data/a.txt");
  CHECK(event["type"] == "Warning");
  CHECK(event["source"] == Json{{"component", "nereid-gm"}, {"host", "gm-0"}});
  CHECK(event["reportingComponent"] == "nereid-gm");
  CHECK(event["reportingInstance"] == "gm-0");
  CHECK(event["count"] == 1);
  CHECK(event["firstTimestamp"] == FormatTimestamp(f.clock.Now()));
  CHECK(event["lastTimestamp"] == FormatTimestamp(f.clock.Now()));
  CHECK(recorder.GetStats().created == 1);
}

TEST_CASE("event recorder aggregates repeats into count and lastTimestamp", "[events]") {
  Fixture f;
  EventRecorder recorder(&f.client, Options(), &f.clock);
  recorder.Start();
  const absl::Time first = f.clock.Now();
  recorder.Record(Dataset("ds1"), EventType::kNormal, "Synced", "sent to node edge-1");
  REQUIRE(recorder.WaitIdle(absl::Seconds(10)));
  f.clock.Advance(absl::Minutes(1));
  recorder.Record(Dataset("ds1"), EventType::kNormal, "Synced", "sent to node edge-1");
  f.clock.Advance(absl::Minutes(1));
  recorder.Record(Dataset("ds1"), EventType::kNormal, "Synced", "sent to node edge-1");
  REQUIRE(recorder.WaitIdle(absl::Seconds(10)));

  auto events = f.Events();
  REQUIRE(events.size() == 1);
  CHECK(events[0]["count"] == 3);
  CHECK(events[0]["firstTimestamp"] == FormatTimestamp(first));
  CHECK(events[0]["lastTimestamp"] == FormatTimestamp(first + absl::Minutes(2)));
  CHECK(f.client.CountActions(Verb::kCreate, "events") == 1);
  CHECK(f.client.CountActions(Verb::kPatch, "events") == 2);
  CHECK(recorder.GetStats().aggregated == 2);

  SECTION("a different message, type or object is a different Event") {
    recorder.Record(Dataset("ds1"), EventType::kNormal, "Synced", "sent to node edge-2");
    recorder.Record(Dataset("ds1"), EventType::kWarning, "Synced", "sent to node edge-1");
    recorder.Record(Dataset("ds2"), EventType::kNormal, "Synced", "sent to node edge-1");
    REQUIRE(recorder.WaitIdle(absl::Seconds(10)));
    CHECK(f.Events().size() == 4);
  }
  SECTION("a repeat after the aggregation window starts a new Event") {
    f.clock.Advance(absl::Minutes(11));
    recorder.Record(Dataset("ds1"), EventType::kNormal, "Synced", "sent to node edge-1");
    REQUIRE(recorder.WaitIdle(absl::Seconds(10)));
    CHECK(f.Events().size() == 2);
  }
  SECTION("a repeat whose Event was deleted creates it again with the running count") {
    REQUIRE(f.client.Delete(resources::Events(), "ns", Name(events[0])).ok());
    recorder.Record(Dataset("ds1"), EventType::kNormal, "Synced", "sent to node edge-1");
    REQUIRE(recorder.WaitIdle(absl::Seconds(10)));
    auto now = f.Events();
    REQUIRE(now.size() == 1);
    CHECK(now[0]["count"] == 4);
    CHECK(now[0]["firstTimestamp"] == FormatTimestamp(first));
  }
}

TEST_CASE("event recorder rate-limits per object: burst 25, then one per 5 minutes", "[events]") {
  Fixture f;
  EventRecorder recorder(&f.client, Options(), &f.clock);
  recorder.Start();
  for (int i = 0; i < 30; ++i) {
    recorder.Record(Dataset("noisy"), EventType::kNormal, "Step", "step " + std::to_string(i));
  }
  recorder.Record(Dataset("quiet"), EventType::kNormal, "Step", "own bucket");
  REQUIRE(recorder.WaitIdle(absl::Seconds(10)));
  CHECK(recorder.GetStats().dropped_rate_limited == 5);
  CHECK(f.Events().size() == 26);
  recorder.Record(Dataset("noisy"), EventType::kNormal, "Step", "still limited");
  f.clock.Advance(absl::Minutes(5));
  recorder.Record(Dataset("noisy"), EventType::kNormal, "Step", "after refill");
  recorder.Record(Dataset("noisy"), EventType::kNormal, "Step", "limited again");
  REQUIRE(recorder.WaitIdle(absl::Seconds(10)));
  CHECK(recorder.GetStats().dropped_rate_limited == 7);
  CHECK(f.Events().size() == 27);
}

TEST_CASE("event recorder drops and counts when its queue is full; Record never blocks",
          "[events]") {
  Fixture f;
  EventRecorderOptions options = Options();
  options.queue_capacity = 3;
  EventRecorder recorder(&f.client, options, &f.clock);  // Not started: nothing drains.
  for (int i = 0; i < 5; ++i) {
    recorder.Record(Dataset("ds" + std::to_string(i)), EventType::kNormal, "Created", "x");
  }
  CHECK(recorder.GetStats().recorded == 3);
  CHECK(recorder.GetStats().dropped_queue_full == 2);
  recorder.Start();
  REQUIRE(recorder.WaitIdle(absl::Seconds(10)));
  CHECK(f.Events().size() == 3);
}

TEST_CASE("event recorder retries transient failures on the clock, then gives up", "[events]") {
  Fixture f;
  EventRecorder recorder(&f.client, Options(), &f.clock);
  recorder.Start();
  f.client.FailNext(Verb::kCreate, 1, absl::UnavailableError("apiserver down"), "events");
  recorder.Record(Dataset("ds1"), EventType::kNormal, "Created", "x");
  REQUIRE(Eventually([&] { return f.clock.timed_waiters() == 1; }));  // Waiting to retry.
  f.clock.Advance(absl::Seconds(1));
  REQUIRE(recorder.WaitIdle(absl::Seconds(10)));
  CHECK(f.Events().size() == 1);
  CHECK(recorder.GetStats().failed == 0);

  f.client.FailNext(Verb::kCreate, 3, absl::UnavailableError("apiserver down"), "events");
  recorder.Record(Dataset("ds2"), EventType::kNormal, "Created", "x");
  for (int retry = 0; retry < 2; ++retry) {
    // Attempt made (the previous wait is over) and parked in the next wait.
    REQUIRE(Eventually([&] {
      return f.client.CountActions(Verb::kCreate, "events") == 2 + retry + 1 &&
             f.clock.timed_waiters() == 1;
    }));
    f.clock.Advance(absl::Seconds(1));
  }
  REQUIRE(Eventually([&] { return recorder.GetStats().failed == 1; }));
  CHECK(f.Events().size() == 1);

  // Permanent errors are not retried.
  f.client.FailNext(Verb::kCreate, 1, MakeError("Forbidden", "no RBAC for events"), "events");
  recorder.Record(Dataset("ds3"), EventType::kNormal, "Created", "x");
  REQUIRE(Eventually([&] { return recorder.GetStats().failed == 2; }));
  CHECK(f.client.CountActions(Verb::kCreate, "events") == 2 + 3 + 1);
}

TEST_CASE("event recorder puts events of cluster-scoped objects in default", "[events]") {
  Fixture f;
  EventRecorder recorder(&f.client, Options(), &f.clock);
  recorder.Start();
  recorder.Record(Json{{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "edge-1"}}}},
                  EventType::kNormal, "Joined", "edge-1 connected");
  REQUIRE(recorder.WaitIdle(absl::Seconds(10)));
  auto events = f.Events();
  REQUIRE(events.size() == 1);
  CHECK(Namespace(events[0]) == "default");
  CHECK_FALSE(events[0]["involvedObject"].contains("namespace"));
}

TEST_CASE("event recorder Stop sends what is queued", "[events]") {
  Fixture f;
  auto recorder = std::make_unique<EventRecorder>(&f.client, Options(), &f.clock);
  for (int i = 0; i < 3; ++i) {
    recorder->Record(Dataset("ds" + std::to_string(i)), EventType::kNormal, "Created", "x");
  }
  recorder->Start();
  recorder->Stop();
  CHECK(f.Events().size() == 3);
  recorder->Record(Dataset("late"), EventType::kNormal, "Created", "x");  // Ignored after Stop.
  recorder.reset();
  CHECK(f.Events().size() == 3);
}

TEST_CASE("event recorder Stop drains until its deadline, then drops and counts the rest",
          "[events]") {
  // Every request costs 200 ms on the clock, as a 5 q/s client rate limiter would make it.
  Fixture f;
  fakes::InterceptingKubeClient throttled(&f.client);
  throttled.SetInterceptor([&](Verb, const Resource&, const ListOptions*) {
    f.clock.Advance(absl::Milliseconds(200));
    return std::optional<absl::Status>();
  });
  EventRecorderOptions options = Options();
  // Nothing is sent before Stop: the first event waits out its window on the (still) clock.
  options.coalesce_window = absl::Seconds(3);
  EventRecorder recorder(&throttled, options, &f.clock);
  for (int i = 0; i < 20; ++i) {
    recorder.Record(Dataset("ds" + std::to_string(i)), EventType::kNormal, "Created", "x");
  }
  recorder.Start();
  const absl::Time stop = f.clock.Now();
  recorder.Stop(absl::Seconds(1));
  // Five requests fit in the second; the rest are dropped, not sent past it.
  CHECK(f.Events().size() == 5);
  CHECK(recorder.GetStats().created == 5);
  CHECK(recorder.GetStats().dropped_at_stop == 15);
  CHECK(f.clock.Now() - stop == absl::Seconds(1));
}

TEST_CASE("event recorder Stop counts what a never-started recorder had queued", "[events]") {
  Fixture f;
  EventRecorder recorder(&f.client, Options(), &f.clock);
  recorder.Record(Dataset("ds1"), EventType::kNormal, "Created", "x");
  recorder.Stop(absl::Seconds(1));
  CHECK(f.Events().empty());
  CHECK(recorder.GetStats().dropped_at_stop == 1);
}

TEST_CASE("event recorder coalesces an object's events of one reason within the window",
          "[events]") {
  Fixture f;
  EventRecorderOptions options = Options();
  options.coalesce_window = absl::Seconds(1);
  EventRecorder recorder(&f.client, options, &f.clock);
  recorder.Start();
  recorder.Record(Dataset("a"), EventType::kNormal, "SuccessfulCreate", "Created Deployment a-1");
  recorder.Record(Dataset("a"), EventType::kNormal, "SuccessfulCreate", "Created Deployment a-2");
  recorder.Record(Dataset("a"), EventType::kNormal, "SuccessfulCreate", "Created Deployment a-1");
  recorder.Record(Dataset("a"), EventType::kWarning, "SuccessfulCreate", "other type");
  recorder.Record(Dataset("a"), EventType::kNormal, "Running", "other reason");
  recorder.Record(Dataset("b"), EventType::kNormal, "SuccessfulCreate", "Created Deployment b-1");
  // Held for the window: nothing is sent before it passes.
  CHECK_FALSE(recorder.WaitIdle(absl::Milliseconds(100)));
  CHECK(f.Events().empty());
  f.clock.Advance(absl::Seconds(1));
  REQUIRE(recorder.WaitIdle(absl::Seconds(10)));

  std::map<std::string, Json> by_key;
  for (const Json& e : f.Events()) {
    by_key[StringAt(e, "involvedObject.name") + " " + StringAt(e, "type") + " " +
           StringAt(e, "reason")] = e;
  }
  REQUIRE(by_key.size() == 4);
  const Json& a = by_key["a Normal SuccessfulCreate"];
  CHECK(a["message"] == "Created Deployment a-1; Created Deployment a-2");
  CHECK(a["count"] == 3);
  CHECK(by_key["b Normal SuccessfulCreate"]["count"] == 1);
  CHECK(by_key["a Normal Running"]["message"] == "other reason");
  CHECK(by_key["a Warning SuccessfulCreate"]["count"] == 1);
  CHECK(f.client.CountActions(Verb::kCreate, resources::Events().QualifiedName()) == 4);
  const EventRecorder::Stats stats = recorder.GetStats();
  CHECK(stats.coalesced == 2);
  CHECK(stats.created == 4);

  // After it was sent, the same event again is a repeat: aggregated into the Event's count.
  recorder.Record(Dataset("b"), EventType::kNormal, "SuccessfulCreate", "Created Deployment b-1");
  f.clock.Advance(absl::Seconds(1));
  REQUIRE(recorder.WaitIdle(absl::Seconds(10)));
  CHECK(recorder.GetStats().aggregated == 1);
}

TEST_CASE("event recorder caps a coalesced message", "[events]") {
  Fixture f;
  EventRecorderOptions options = Options();
  options.coalesce_window = absl::Seconds(1);
  options.max_message_bytes = 40;
  EventRecorder recorder(&f.client, options, &f.clock);
  for (int i = 0; i < 10; ++i) {
    recorder.Record(Dataset("a"), EventType::kNormal, "SuccessfulCreate",
                    "Created Deployment d-" + std::to_string(i));
  }
  recorder.Start();
  f.clock.Advance(absl::Seconds(1));
  REQUIRE(recorder.WaitIdle(absl::Seconds(10)));
  REQUIRE(f.Events().size() == 1);
  const std::string message = StringAt(f.Events()[0], "message");
  CHECK(message.size() <= 40);
  CHECK(message.rfind("Created Deployment d-0; ", 0) == 0);
  CHECK(f.Events()[0]["count"] == 10);
}

}  // namespace
}  // namespace nereid::kube
