#include "support/parallel_for.h"

#include <cstdlib>

#include "support/error.h"

namespace vkc {

unsigned compile_threads() {
  const char* v = std::getenv("VKC_COMPILE_THREADS");
  if (v == nullptr || *v == '\0') {
    const unsigned hw = std::thread::hardware_concurrency();  // 0 when unknown
    return std::clamp(hw, 1u, kMaxDefaultCompileThreads);
  }
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  check(*end == '\0' && n >= 1 && n <= 64, "VKC_COMPILE_THREADS: expected a thread count from 1 to 64, found '", v,
        "'");
  return unsigned(n);
}

}  // namespace vkc
