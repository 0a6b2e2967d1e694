#pragma once

// DrainReady: what a WorkQueue has ready now, in the order it hands keys out, each marked Done —
// for tests that check the order of a queue's keys without running workers.

#include <string>
#include <vector>

#include "common/kube/workqueue.h"

namespace nereid::fakes {

inline std::vector<std::string> DrainReady(kube::WorkQueue& queue) {
  std::vector<std::string> keys;
  while (queue.Len() > 0) {
    keys.push_back(*queue.Get());
    queue.Done(keys.back());
  }
  return keys;
}

}  // namespace nereid::fakes
