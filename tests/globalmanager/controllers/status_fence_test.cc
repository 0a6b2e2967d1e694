#include "globalmanager/controllers/status_fence.h"

#include <catch2/catch.hpp>

namespace nereid::gm {
namespace {

TEST_CASE("StatusFence: a copy covers our write once its version reaches the written one") {
  StatusFence fence;
  CHECK(fence.Covers("a", "1"));  // never written: the cache is all there is
  fence.Written("a", "10");
  CHECK_FALSE(fence.Covers("a", "9"));
  CHECK_FALSE(fence.Covers("a", "9"));  // still in flight
  CHECK(fence.size() == 1);
  CHECK(fence.Covers("a", "12"));  // someone wrote after us: newer still covers ours
  CHECK(fence.size() == 0);        // caught up: forgotten
  CHECK(fence.Covers("a", "1"));
}

TEST_CASE("StatusFence: versions it cannot order are trusted only when equal to ours") {
  StatusFence fence;
  fence.Written("a", "10");
  CHECK_FALSE(fence.Covers("a", ""));
  CHECK_FALSE(fence.Covers("a", "opaque-token"));
  fence.Written("b", "opaque");
  CHECK_FALSE(fence.Covers("b", "other"));
  CHECK(fence.Covers("b", "opaque"));  // the very version we wrote
  CHECK(fence.Covers("other", "x"));
}

}  // namespace
}  // namespace nereid::gm
