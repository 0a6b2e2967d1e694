#include "globalmanager/edgehub/coalescing_queue.h"

#include <catch2/catch.hpp>
#include <string>

namespace nereid::gm {
namespace {

using Queue = CoalescingQueue<std::string>;

std::string PopValue(Queue& q) {
  auto entry = q.Pop();
  REQUIRE(entry.has_value());
  return entry->first + "=" + entry->second;
}

TEST_CASE("coalescing queue is FIFO by first insertion", "[edgehub][queue]") {
  Queue q(10);
  CHECK(q.Push("a", "v1") == Queue::PushResult::kAdded);
  CHECK(q.Push("b", "v1") == Queue::PushResult::kAdded);
  CHECK(q.Push("c", "v1") == Queue::PushResult::kAdded);
  CHECK(PopValue(q) == "a=v1");
  CHECK(PopValue(q) == "b=v1");
  CHECK(PopValue(q) == "c=v1");
  CHECK_FALSE(q.Pop().has_value());
}

TEST_CASE("the latest version replaces an unsent older one in place", "[edgehub][queue]") {
  Queue q(10);
  q.Push("a", "upsert v1");
  q.Push("b", "upsert v1");
  CHECK(q.Push("a", "upsert v2") == Queue::PushResult::kReplaced);
  CHECK(q.Push("a", "upsert v3") == Queue::PushResult::kReplaced);
  CHECK(q.size() == 2);
  CHECK(PopValue(q) == "a=upsert v3");  // kept its place ahead of b
  CHECK(PopValue(q) == "b=upsert v1");
}

TEST_CASE("an upsert followed by a remove leaves only the remove", "[edgehub][queue]") {
  Queue q(10);
  q.Push("a", "upsert v1");
  q.Push("a", "remove");
  CHECK(q.size() == 1);
  CHECK(PopValue(q) == "a=remove");
  // Once sent, a new entry for the key queues again.
  CHECK(q.Push("a", "upsert v2") == Queue::PushResult::kAdded);
}

TEST_CASE("the queue is bounded by distinct keys", "[edgehub][queue]") {
  Queue q(2);
  CHECK(q.Push("a", "1") == Queue::PushResult::kAdded);
  CHECK(q.Push("b", "1") == Queue::PushResult::kAdded);
  CHECK(q.Push("c", "1") == Queue::PushResult::kFull);
  CHECK(q.Find("c") == nullptr);
  // Replacing an existing key still works when full.
  CHECK(q.Push("b", "2") == Queue::PushResult::kReplaced);
  REQUIRE(q.Find("b") != nullptr);
  CHECK(*q.Find("b") == "2");
  CHECK(q.Erase("a"));
  CHECK_FALSE(q.Erase("a"));
  CHECK(q.Push("c", "1") == Queue::PushResult::kAdded);
  CHECK(PopValue(q) == "b=2");
  CHECK(PopValue(q) == "c=1");
  CHECK(q.empty());
}

}  // namespace
}  // namespace nereid::gm
