#include "common/kube/workqueue.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/kube/rate_limiter.h"
#include "common/time/fake_clock.h"
#include "tests/fakes/drain_queue.h"
#include "tests/fakes/eventually.h"

namespace nereid::kube {
namespace {

using fakes::DrainReady;
using fakes::Eventually;

WorkQueue::Options QueueOn(Clock* clock) {
  WorkQueue::Options options;
  options.name = "test";
  options.clock = clock;
  return options;
}

TEST_CASE("workqueue: low-priority keys wait behind every other key", "[workqueue]") {
  FakeClock clock;
  WorkQueue queue(QueueOn(&clock));
  queue.AddLowPriority("r1");
  queue.AddLowPriority("r2");
  queue.AddLowPriority("r1");  // Collapsed, as any duplicate.
  queue.Add("news");
  CHECK(queue.Len() == 3);
  CHECK(queue.GetMetrics().depth == 3);
  CHECK(DrainReady(queue) == std::vector<std::string>{"news", "r1", "r2"});
  CHECK(queue.GetMetrics().adds == 3);
}

TEST_CASE("workqueue: news for a key waiting low moves it forward, handed out once",
          "[workqueue]") {
  FakeClock clock;
  WorkQueue queue(QueueOn(&clock));
  queue.AddLowPriority("r1");
  queue.AddLowPriority("r2");
  queue.Add("a");
  queue.Add("r2");  // News: behind "a", ahead of "r1".
  queue.AddLowPriority("r2");  // No news: stays where it is.
  CHECK(queue.Len() == 3);
  CHECK(DrainReady(queue) == std::vector<std::string>{"a", "r2", "r1"});
  CHECK(queue.Len() == 0);
  // The entry left behind in the low lane is not handed out later.
  queue.AddLowPriority("r3");
  CHECK(DrainReady(queue) == std::vector<std::string>{"r3"});
}

TEST_CASE("workqueue: a key added while processed comes back in the lane of its adds",
          "[workqueue]") {
  FakeClock clock;
  WorkQueue queue(QueueOn(&clock));
  queue.Add("x");
  queue.Add("y");
  REQUIRE(queue.Get() == "x");
  REQUIRE(queue.Get() == "y");
  queue.AddLowPriority("x");  // A resync while x is processed.
  queue.AddLowPriority("y");
  queue.Add("y");  // And news for y.
  queue.Add("z");
  queue.Done("x");
  queue.Done("y");
  CHECK(queue.Len() == 3);
  CHECK(DrainReady(queue) == std::vector<std::string>{"z", "y", "x"});
}

TEST_CASE("workqueue: a worker waiting in Get wakes for a low-priority key", "[workqueue]") {
  WorkQueue queue;
  std::optional<std::string> got;
  std::thread worker([&] { got = queue.Get(); });
  queue.AddLowPriority("r");
  worker.join();
  CHECK(got == "r");
}

TEST_CASE("workqueue hands out keys in FIFO order and collapses duplicates", "[workqueue]") {
  FakeClock clock;
  WorkQueue queue(QueueOn(&clock));
  queue.Add("a");
  queue.Add("b");
  queue.Add("a");
  queue.Add("c");
  queue.Add("b");
  REQUIRE(queue.Len() == 3);
  CHECK(queue.Get() == "a");
  CHECK(queue.Get() == "b");
  CHECK(queue.Get() == "c");
  CHECK(queue.Len() == 0);
  CHECK(queue.GetMetrics().adds == 3);
}

TEST_CASE("workqueue reports how long each key waited, from the add that queued it",
          "[workqueue]") {
  FakeClock clock;
  WorkQueue queue(QueueOn(&clock));
  std::vector<absl::Duration> waits;
  queue.SetWaitObserver([&](absl::Duration waited) { waits.push_back(waited); });
  queue.Add("a");
  clock.Advance(absl::Milliseconds(5));
  queue.Add("a");  // collapsed: "a" still waits from its first add
  queue.Add("b");
  clock.Advance(absl::Milliseconds(10));
  CHECK(queue.Get() == "a");
  queue.Add("a");  // while "a" is processed: queued again at Done, waiting from now
  clock.Advance(absl::Milliseconds(1));
  CHECK(queue.Get() == "b");
  clock.Advance(absl::Milliseconds(2));
  queue.Done("a");
  queue.AddAfter("c", absl::Milliseconds(4));  // a delayed key waits from when it is due
  clock.Advance(absl::Milliseconds(7));
  CHECK(queue.Get() == "a");
  CHECK(queue.Get() == "c");
  CHECK(waits == std::vector<absl::Duration>{absl::Milliseconds(15), absl::Milliseconds(11),
                                             absl::Milliseconds(10), absl::Milliseconds(3)});
  queue.SetWaitObserver(nullptr);
  queue.Add("d");
  CHECK(queue.Get() == "d");
  CHECK(waits.size() == 4);
}

TEST_CASE("workqueue never hands a key out twice at once and re-runs it after Done",
          "[workqueue]") {
  FakeClock clock;
  WorkQueue queue(QueueOn(&clock));
  queue.Add("a");
  REQUIRE(queue.Get() == "a");
  CHECK(queue.GetMetrics().processing == 1);

  // Re-added while processing: only marked dirty, not queued.
  queue.Add("a");
  queue.Add("a");
  CHECK(queue.Len() == 0);
  queue.Add("b");
  CHECK(queue.Get() == "b");
  queue.Done("b");

  queue.Done("a");
  REQUIRE(queue.Len() == 1);
  CHECK(queue.Get() == "a");
  queue.Done("a");
  CHECK(queue.Len() == 0);
  CHECK(queue.GetMetrics().processing == 0);

  SECTION("Done without a re-add does not queue the key again") {
    queue.Add("c");
    REQUIRE(queue.Get() == "c");
    queue.Done("c");
    CHECK(queue.Len() == 0);
  }
}

TEST_CASE("workqueue AddAfter waits on the clock; the earliest time wins", "[workqueue]") {
  FakeClock clock;
  WorkQueue queue(QueueOn(&clock));
  queue.AddAfter("x", absl::Seconds(3));
  queue.AddAfter("y", absl::Seconds(1));
  queue.AddAfter("b", absl::Seconds(10));
  queue.AddAfter("b", absl::Seconds(2));  // Earlier: replaces.
  queue.AddAfter("c", absl::Seconds(1));
  queue.AddAfter("c", absl::Seconds(5));  // Later: ignored.
  queue.AddAfter("now", absl::ZeroDuration());
  CHECK(queue.Len() == 1);
  CHECK(queue.Get() == "now");
  CHECK(queue.GetMetrics().waiting == 4);

  clock.Advance(absl::Milliseconds(999));
  CHECK(queue.Len() == 0);
  clock.Advance(absl::Milliseconds(1));
  CHECK(queue.Len() == 2);  // y and c at 1 s
  clock.Advance(absl::Seconds(1));
  CHECK(queue.Len() == 3);  // b at 2 s
  clock.Advance(absl::Seconds(1));
  CHECK(queue.Len() == 4);  // x at 3 s
  CHECK(queue.Get() == "y");
  CHECK(queue.Get() == "c");
  CHECK(queue.Get() == "b");
  CHECK(queue.Get() == "x");
  clock.Advance(absl::Hours(1));
  CHECK(queue.Len() == 0);  // c's later AddAfter was absorbed into the earlier one
}

TEST_CASE("workqueue Get sleeps until the next delayed key is due", "[workqueue]") {
  FakeClock clock;
  WorkQueue queue(QueueOn(&clock));
  queue.AddAfter("k", absl::Seconds(30));
  std::atomic<bool> got{false};
  std::thread worker([&] {
    auto key = queue.Get();
    got = key.has_value() && *key == "k";
  });
  REQUIRE(Eventually([&] { return clock.timed_waiters() == 1; }));
  clock.Advance(absl::Seconds(29));
  CHECK_FALSE(got.load());
  clock.Advance(absl::Seconds(1));
  REQUIRE(Eventually([&] { return got.load(); }));
  worker.join();
}

TEST_CASE("workqueue wakes a sleeping Get when an earlier key is added (real clock)",
          "[workqueue]") {
  WorkQueue queue(QueueOn(Clock::Real()));
  queue.AddAfter("late", absl::Hours(1));
  std::atomic<bool> got{false};
  std::thread worker([&] {
    auto key = queue.Get();
    got = key.has_value() && *key == "soon";
  });
  queue.AddAfter("soon", absl::Milliseconds(20));
  REQUIRE(Eventually([&] { return got.load(); }, absl::Seconds(5)));
  worker.join();
}

TEST_CASE("workqueue AddRateLimited backs off per key and Forget resets", "[workqueue]") {
  FakeClock clock;
  WorkQueue queue(QueueOn(&clock));
  queue.AddRateLimited("k");
  CHECK(queue.NumRequeues("k") == 1);
  CHECK(queue.Len() == 0);
  clock.Advance(absl::Milliseconds(5));
  REQUIRE(queue.Len() == 1);
  REQUIRE(queue.Get() == "k");
  queue.AddRateLimited("k");  // Second failure: 10 ms.
  queue.Done("k");
  clock.Advance(absl::Milliseconds(9));
  CHECK(queue.Len() == 0);
  clock.Advance(absl::Milliseconds(1));
  CHECK(queue.Len() == 1);
  CHECK(queue.NumRequeues("k") == 2);
  CHECK(queue.GetMetrics().retries == 2);
  queue.Forget("k");
  CHECK(queue.NumRequeues("k") == 0);
}

TEST_CASE("workqueue ShutDown drains what is queued, drops what waits, ignores adds",
          "[workqueue]") {
  FakeClock clock;
  WorkQueue queue(QueueOn(&clock));
  queue.Add("a");
  queue.Add("b");
  queue.AddAfter("later", absl::Seconds(1));
  queue.ShutDown();
  CHECK(queue.ShuttingDown());
  queue.Add("c");
  queue.AddRateLimited("d");
  CHECK(queue.Get() == "a");
  CHECK(queue.Get() == "b");
  clock.Advance(absl::Seconds(2));
  CHECK(queue.Get() == std::nullopt);
}

TEST_CASE("workqueue ShutDown wakes blocked workers", "[workqueue]") {
  WorkQueue queue(QueueOn(Clock::Real()));
  std::atomic<int> finished{0};
  std::vector<std::thread> workers;
  for (int i = 0; i < 3; ++i) {
    workers.emplace_back([&] {
      if (!queue.Get().has_value()) ++finished;
    });
  }
  queue.ShutDown();
  REQUIRE(Eventually([&] { return finished.load() == 3; }));
  for (auto& worker : workers) worker.join();
}

TEST_CASE("workqueue ShutDownWithDrain waits for keys in flight", "[workqueue]") {
  WorkQueue queue(QueueOn(Clock::Real()));
  queue.Add("a");
  REQUIRE(queue.Get() == "a");
  std::atomic<bool> drained{false};
  std::thread stopper([&] {
    queue.ShutDownWithDrain();
    drained = true;
  });
  REQUIRE(Eventually([&] { return queue.ShuttingDown(); }));
  // Still processing "a": the drain cannot have finished (a bounded check of a negative).
  absl::SleepFor(absl::Milliseconds(50));
  CHECK_FALSE(drained.load());
  queue.Done("a");
  REQUIRE(Eventually([&] { return drained.load(); }));
  stopper.join();
}

TEST_CASE("workqueue is stingy under concurrent workers", "[workqueue]") {
  WorkQueue queue(QueueOn(Clock::Real()));
  constexpr int kKeys = 8;
  std::map<std::string, std::atomic<int>> in_flight;
  std::map<std::string, std::atomic<int>> processed;
  for (int i = 0; i < kKeys; ++i) {
    in_flight[std::to_string(i)] = 0;
    processed[std::to_string(i)] = 0;
  }
  std::atomic<bool> overlap{false};
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&] {
      while (auto key = queue.Get()) {
        if (in_flight[*key].fetch_add(1) != 0) overlap = true;
        std::this_thread::yield();
        in_flight[*key].fetch_sub(1);
        processed[*key].fetch_add(1);
        queue.Done(*key);
      }
    });
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 5000; ++i) queue.Add(std::to_string(rng() % kKeys));
  // After the last add every key must still be processed at least once more.
  std::map<std::string, int> seen_at_end;
  for (auto& [key, count] : processed) seen_at_end[key] = count.load();
  for (int i = 0; i < kKeys; ++i) queue.Add(std::to_string(i));
  REQUIRE(Eventually([&] {
    for (auto& [key, count] : processed) {
      if (count.load() <= seen_at_end[key]) return false;
    }
    return true;
  }));
  queue.ShutDownWithDrain();
  for (auto& worker : workers) worker.join();
  CHECK_FALSE(overlap.load());
}

TEST_CASE("item exponential rate limiter: 5 ms·2ⁿ capped at 1000 s", "[ratelimiter]") {
  ItemExponentialRateLimiter limiter(absl::Milliseconds(5), absl::Seconds(1000));
  CHECK(limiter.When("a") == absl::Milliseconds(5));
  CHECK(limiter.When("a") == absl::Milliseconds(10));
  CHECK(limiter.When("a") == absl::Milliseconds(20));
  CHECK(limiter.When("b") == absl::Milliseconds(5));  // Per item.
  CHECK(limiter.NumRequeues("a") == 3);
  for (int i = 0; i < 30; ++i) limiter.When("a");
  CHECK(limiter.When("a") == absl::Seconds(1000));
  limiter.Forget("a");
  CHECK(limiter.NumRequeues("a") == 0);
  CHECK(limiter.When("a") == absl::Milliseconds(5));
}

TEST_CASE("default controller rate limiter adds an overall 10 qps burst 100 bucket",
          "[ratelimiter]") {
  FakeClock clock;
  std::unique_ptr<RateLimiter> limiter = DefaultControllerRateLimiter(&clock);
  for (int i = 0; i < 100; ++i) {
    REQUIRE(limiter->When("item-" + std::to_string(i)) == absl::Milliseconds(5));
  }
  // Burst spent, time frozen: each further retry waits for the next 100 ms token.
  CHECK(limiter->When("x") == absl::Milliseconds(100));
  CHECK(limiter->When("y") == absl::Milliseconds(200));
  clock.Advance(absl::Seconds(10));  // Bucket refills.
  CHECK(limiter->When("z") == absl::Milliseconds(5));
  CHECK(limiter->NumRequeues("x") == 1);
  limiter->Forget("x");
  CHECK(limiter->NumRequeues("x") == 0);
}

}  // namespace
}  // namespace nereid::kube

namespace nereid::kube {
namespace {

// Throughput, not correctness: run by hand with `kube_workqueue_test "[.perf]"`.
TEST_CASE("workqueue throughput", "[.perf]") {
  constexpr int kOps = 1'000'000;
  {
    WorkQueue queue(QueueOn(Clock::Real()));
    const absl::Time start = absl::Now();
    for (int i = 0; i < kOps; ++i) {
      const std::string key = "ns/obj-" + std::to_string(i % 1000);
      queue.Add(key);
      auto got = queue.Get();
      queue.Done(*got);
    }
    const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
    WARN("single thread Add+Get+Done: " << kOps / seconds / 1e6 << " M/s");
  }
  {
    WorkQueue queue(QueueOn(Clock::Real()));
    std::atomic<int> done{0};
    std::vector<std::thread> workers;
    for (int w = 0; w < 4; ++w) {
      workers.emplace_back([&] {
        while (auto key = queue.Get()) {
          queue.Done(*key);
          ++done;
        }
      });
    }
    const absl::Time start = absl::Now();
    for (int i = 0; i < kOps; ++i) queue.Add("ns/obj-" + std::to_string(i % 10000));
    queue.ShutDownWithDrain();
    for (auto& worker : workers) worker.join();
    const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
    WARN("1 producer, 4 workers: " << kOps / seconds / 1e6 << " M adds/s, " << done.load()
                                   << " keys processed (duplicates collapsed)");
  }
}

}  // namespace
}  // namespace nereid::kube
