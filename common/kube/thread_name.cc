#include "common/kube/thread_name.h"

#include <pthread.h>

#include <string>

namespace nereid::kube {

void SetCurrentThreadName(std::string_view name) {
  std::string truncated(name.substr(0, 15));
  pthread_setname_np(pthread_self(), truncated.c_str());
}

}  // namespace nereid::kube
