#pragma once

// Names the calling thread (visible in top -H, gdb and /proc) so the few long-lived threads of the
// kube runtime (reflectors, informer dispatchers, workers, elector, event sender) can be told
// apart.

#include <string_view>

namespace nereid::kube {

// Linux keeps at most 15 characters; longer names are truncated.
void SetCurrentThreadName(std::string_view name);

}  // namespace nereid::kube
