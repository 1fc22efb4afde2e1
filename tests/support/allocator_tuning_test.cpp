// tune_allocator_for_compiling (support/allocator_tuning.h): applied under glibc's own malloc, and
// never over a GLIBC_TUNABLES that already sets malloc tunables.
#include <gtest/gtest.h>

#include <cstdlib>

#include "support/allocator_tuning.h"
#include "tests/common/scoped_env.h"

namespace vkc {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kOwnAllocator = true;  // ASan's malloc ignores mallopt
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kOwnAllocator = true;
#else
constexpr bool kOwnAllocator = false;
#endif
#else
constexpr bool kOwnAllocator = false;
#endif

TEST(AllocatorTuning, AppliedUnlessTheUserSetMallocTunables) {
  {
    test::ScopedEnv env("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=4096");
    EXPECT_FALSE(tune_allocator_for_compiling());
  }
  {
    test::ScopedEnv env("GLIBC_TUNABLES", "glibc.cpu.hwcaps=-AVX512F");  // not malloc's: tuned anyway
#if defined(__GLIBC__)
    EXPECT_EQ(tune_allocator_for_compiling(), !kOwnAllocator);
#else
    EXPECT_FALSE(tune_allocator_for_compiling());
#endif
  }
}

}  // namespace
}  // namespace vkc
