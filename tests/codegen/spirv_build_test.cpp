// SPIR-V for a module's kernels on several threads (codegen/spirv_build.h): the same words, the
// same process-cache counts and the same first error as building them one after the other.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/glsl_compiler.h"
#include "codegen/spirv_build.h"
#include "codegen/spirv_cache.h"
#include "codegen/spirv_tools.h"
#include "module/target_profiles.h"
#include "support/error.h"
#include "tests/common/scoped_env.h"

namespace vkc::codegen {
namespace {

// A kernel with `floats` words of workgroup memory and 64 invocations; `tag` makes its text distinct.
EmittedKernel kernel(int tag, uint32_t floats = 32) {
  EmittedKernel k;
  k.glsl = cat("#version 450\nlayout(local_size_x = 64) in;\n",
               "layout(set = 0, binding = 0) buffer B { float d[]; } b;\n", "shared float s[", floats, "];\n",
               "void main() {\n  s[gl_LocalInvocationID.x % ", floats, "u] = float(", tag, ");\n  barrier();\n",
               "  b.d[gl_GlobalInvocationID.x] = s[(gl_LocalInvocationID.x + 1u) % ", floats, "u];\n}\n");
  k.workgroup_size = {64, 1, 1};
  k.workgroup_memory_bytes = 4 * floats;
  return k;
}

struct Built {
  std::vector<std::vector<uint32_t>> words;
  size_t hits = 0, misses = 0;
};

Built build_with(const std::vector<EmittedKernel>& ks, const char* threads) {
  test::ScopedEnv env("VKC_COMPILE_THREADS", threads);
  CompileOptions o;
  o.target = find_target("lavapipe").limits;
  std::vector<const EmittedKernel*> ptrs;
  std::vector<std::string> names;
  for (size_t i = 0; i < ks.size(); ++i) {
    ptrs.push_back(&ks[i]);
    names.push_back(cat("d", i, "_test"));
  }
  SpirvCache::process().clear();
  Built b;
  b.words = build_spirv_all(ptrs, names, o);
  b.hits = SpirvCache::process().hits();
  b.misses = SpirvCache::process().misses();
  return b;
}

TEST(SpirvBuildAll, ThreadsGiveTheWordsAndCacheCountsOfOneAfterTheOther) {
  std::vector<EmittedKernel> ks;
  for (int i = 0; i < 14; ++i) ks.push_back(kernel(i % 5, 16 + 16 * (i % 5)));  // 5 distinct, repeated
  const Built one = build_with(ks, "1");
  ASSERT_EQ(one.words.size(), ks.size());
  EXPECT_EQ(one.misses, 5u);
  EXPECT_EQ(one.hits, 9u);
  for (const char* threads : {"2", "4", "16"}) {
    SCOPED_TRACE(cat(threads, " threads"));
    const Built many = build_with(ks, threads);
    EXPECT_EQ(many.words, one.words);
    EXPECT_EQ(many.misses, one.misses);
    EXPECT_EQ(many.hits, one.hits);
  }
  for (size_t i = 0; i < ks.size(); ++i) {
    EXPECT_FALSE(one.words[i].empty());
    EXPECT_EQ(one.words[i], one.words[i % 5]);
  }
}

TEST(SpirvBuildAll, TheFirstFailingKernelInOrderIsTheError) {
  std::vector<EmittedKernel> ks;
  for (int i = 0; i < 12; ++i) ks.push_back(kernel(100 + i));
  ks[3].glsl += "this does not parse\n";  // d3: glslang's error
  ks[8].workgroup_memory_bytes += 4;      // d8: its plan differs from its SPIR-V
  ks[10].glsl += "nor this\n";
  for (const char* threads : {"1", "4", "8"}) {
    SCOPED_TRACE(cat(threads, " threads"));
    for (int round = 0; round < 3; ++round) {
      try {
        build_with(ks, threads);
        FAIL() << "no error";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("kernel 'd3_test' failed to compile"), std::string::npos) << e.what();
      }
    }
  }
  ks[3] = kernel(103);
  try {
    build_with(ks, "4");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("kernel 'd8_test' declares 128 bytes"), std::string::npos) << e.what();
  }
}

// A kernel that asks for no spirv-opt passes (EmittedKernel::optimize_spirv, set where the driver
// measured faster without them) gets glslang's words; the same text with the passes is cached
// apart from it.
TEST(SpirvBuildAll, KernelsMayOptOutOfTheOptimizer) {
  EmittedKernel plain = kernel(7), opted_out = kernel(7);
  opted_out.optimize_spirv = false;
  const Built b = build_with({plain, opted_out, plain}, "1");
  ASSERT_EQ(b.words.size(), 3u);
  EXPECT_NE(b.words[0], b.words[1]);
  EXPECT_EQ(b.words[0], b.words[2]);
  EXPECT_EQ(b.misses, 2u);
  const TargetLimits& t = find_target("lavapipe").limits;
  EXPECT_EQ(b.words[1], compile_glsl(opted_out.glsl, "d1_test", t));
  EXPECT_EQ(b.words[0], optimize_spirv(compile_glsl(plain.glsl, "d0_test", t), t, "d0_test"));
}

}  // namespace
}  // namespace vkc::codegen
