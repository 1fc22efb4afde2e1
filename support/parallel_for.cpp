#include "support/parallel_for.h"

#include <cstdlib>

#include "support/error.h"

namespace vkc {

unsigned threads_from_env(const char* variable, unsigned default_max) {
  const char* v = std::getenv(variable);
  if (v == nullptr || *v == '\0') {
    const unsigned hw = std::thread::hardware_concurrency();  // 0 when unknown
    return std::clamp(hw, 1u, default_max);
  }
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  check(*end == '\0' && n >= 1 && n <= 64, variable, ": expected a thread count from 1 to 64, found '", v, "'");
  return unsigned(n);
}

}  // namespace vkc
