#include "support/allocator_tuning.h"

#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace vkc {

bool tune_allocator_for_compiling() {
#if defined(__GLIBC__) && defined(M_MXFAST) && defined(M_TRIM_THRESHOLD) && defined(M_TOP_PAD)
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables && std::strstr(tunables, "glibc.malloc.")) return false;
  // mallopt returns 1 on success; under a sanitizer's allocator it is a no-op returning 0.
  bool changed = mallopt(M_MXFAST, 0) == 1;
  changed = (mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1) && changed;
  // A pad of a whole heap (64 MiB on 64-bit glibc) is what keeps a thread arena's heaps from
  // being unmapped when a kernel's compile frees everything it used.
  changed = (mallopt(M_TOP_PAD, 64 << 20) == 1) && changed;
  return changed;
#else
  return false;
#endif
}

}  // namespace vkc
