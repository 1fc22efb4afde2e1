// One module executed 10,000 times with small inputs: every result identical to the first, no
// validation message, and no host-memory growth beyond a small tolerance once warmed up.
//
// Device memory: the runtime allocates every buffer when a Program is created (module/arena,
// constants, inputs, outputs, staging) and execute() allocates none, so a leak per execution could
// only be on the host side, which RSS covers (lavapipe's device memory is host memory too).
#include <gtest/gtest.h>

#include "codegen/compiler.h"
#include "common/gpu_harness.h"
#include "ir/text_format.h"
#include "soak/soak_util.h"

namespace vkc::soak {
namespace {

constexpr int kIterations = 10000;
constexpr int kWarmup = 200;
// Allocator arenas, the validation layer's per-object bookkeeping and glibc's lazily mapped pages
// move RSS by a few MiB without any leak; a per-execution leak of even 1 KiB would exceed this.
constexpr int64_t kToleranceKib = 8 * 1024;

TEST(SoakRepeatedExecution, TenThousandRunsAreIdenticalAndDoNotGrow) {
  rt::Context& ctx = test::shared_context();
  ctx.clear_validation_messages();
  codegen::CompileOptions o;
  o.target = ctx.limits();
  ir::Graph g = ir::parse_graph(
      "graph @soak(%x: tensor<4x16xf32>, %b: tensor<16xf32>) {\n"
      "  %s = add (%x, %b) : tensor<4x16xf32>\n"
      "  %r = relu (%s) : tensor<4x16xf32>\n"
      "  %m = reduce_max (%r) {axes = [1], keepdims = false} : tensor<4xf32>\n"
      "  return %r as \"r\", %m as \"m\"\n}\n");
  rt::Program program(ctx, codegen::compile_graph(g, o));
  auto inputs = test::random_inputs(g, 7);

  std::map<std::string, HostTensor> first = program.execute(inputs);
  for (int i = 1; i < kWarmup; ++i) program.execute(inputs);
  int64_t before = resident_kib();
  int mismatches = 0;
  for (int i = 0; i < kIterations; ++i) {
    std::map<std::string, HostTensor> out = program.execute(inputs);
    if (out != first && ++mismatches <= 3) ADD_FAILURE() << "execution " << i << " differs from the first";
  }
  int64_t after = resident_kib();
  EXPECT_EQ(mismatches, 0);
  EXPECT_TRUE(ctx.validation_messages().empty());
  RecordProperty("rss_growth_kib", std::to_string(after - before));
  std::printf("RSS before %lld KiB, after %d executions %lld KiB (growth %lld KiB)\n", (long long)before,
              kIterations, (long long)after, (long long)(after - before));
  if (built_with_asan()) GTEST_SKIP() << "ASan quarantine inflates RSS; LeakSanitizer checks leaks instead";
  ASSERT_GT(before, 0) << "no VmRSS in /proc/self/status";
  EXPECT_LT(after - before, kToleranceKib) << "host memory grew by " << (after - before) << " KiB";
}

}  // namespace
}  // namespace vkc::soak
