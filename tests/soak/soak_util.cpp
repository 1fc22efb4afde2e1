#include "soak/soak_util.h"

#include <malloc.h>

#include <fstream>
#include <string>

namespace vkc::soak {

namespace {

// One malloc arena for the whole soak binary, set before main() and before any driver thread
// exists: glibc otherwise gives each new thread an arena of its own, and the fragments that
// short-lived threads (ours and lavapipe's) leave in them grow RSS by megabytes per round with no
// leak at all (measured on the threaded soak: 38 MiB over 4 rounds with per-thread arenas, under
// 1 MiB with one). With one arena, RSS growth means memory really kept.
[[maybe_unused]] const int kOneArena = mallopt(M_ARENA_MAX, 1);

}  // namespace

int64_t resident_kib() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      int64_t kib = 0;
      status >> kib;
      return kib;
    }
    status.ignore(1 << 16, '\n');
  }
  return 0;
}

bool built_with_asan() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

}  // namespace vkc::soak
