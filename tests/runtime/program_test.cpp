// Programs built from hand-made modules, run on the device and checked against CPU loops.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "common/test_util.h"
#include "runtime/context_internal.h"
#include "runtime/pipeline.h"
#include "runtime_fixture.h"
#include "support/error.h"

namespace vkc::rt {
namespace {

using test::binary_op_dispatch;
using test::tensor_desc;

using vkc::test::error_of;

HostTensor reference(const HostTensor& a, const HostTensor& b, const std::function<float(float, float)>& op) {
  HostTensor out(DType::f32, a.shape());
  for (int64_t i = 0; i < a.numel(); ++i) out.as<float>()[i] = op(a.as<float>()[i], b.as<float>()[i]);
  return out;
}

// t = a + b (arena, offset 256); out = view(t) * w, w a constant at offset 256 of the constants.
ModuleImage two_dispatch_module(const TargetLimits& target, uint32_t n, const HostTensor& w) {
  ModuleImage m;
  Manifest& man = m.manifest;
  man.target = target;
  man.target.name = "test";
  man.arena_bytes = 256 + 4ull * n;
  man.constants_bytes = 256 + 4ull * n;
  man.tensors = {tensor_desc("a", {n}, TensorRole::Input),
                 tensor_desc("b", {n}, TensorRole::Input),
                 tensor_desc("unused_constant", {64}, TensorRole::Constant, 0),
                 tensor_desc("w", {n / 4, 4}, TensorRole::Constant, 256),
                 tensor_desc("t", {n}, TensorRole::Intermediate, 256),
                 tensor_desc("t_matrix", {n / 4, 4}, TensorRole::Intermediate, 0, "t"),
                 tensor_desc("out", {n / 4, 4}, TensorRole::Output)};
  man.inputs = {"a", "b"};
  man.outputs = {"out"};
  man.dispatches = {binary_op_dispatch("add", "a", "b", "t", n, 0, 32),
                    binary_op_dispatch("mul", "t_matrix", "w", "out", n, 1, 128)};
  m.spirv["binary_op.spv"] = test::binary_op_spirv();
  m.constants.assign(man.constants_bytes, 0xEE);  // the first 256 bytes must not be read as w
  std::memcpy(m.constants.data() + 256, w.data(), w.size_bytes());
  return m;
}

class RuntimeProgram : public test::RuntimeFixture {
 protected:
  std::mt19937 rng{1234};
};

TEST_F(RuntimeProgram, AddMatchesCpu) {
  const uint32_t n = 1000;  // not a multiple of the workgroup size
  Program program(ctx(), test::add_module(ctx().limits(), n));
  for (int run = 0; run < 2; ++run) {  // the second run replays the same command buffer
    HostTensor a = vkc::test::random_tensor(DType::f32, {n}, rng);
    HostTensor b = vkc::test::random_tensor(DType::f32, {n}, rng);
    ExecuteOptions options;
    options.poison_outputs = true;
    auto out = program.execute({{"a", a}, {"b", b}}, options);
    ASSERT_EQ(out.size(), 1u);
    auto cmp = vkc::test::compare(out.at("c"), reference(a, b, std::plus<float>()), 0, 0);
    EXPECT_TRUE(cmp.ok) << cmp.message;
  }
}

void check_poisoned_tail(Program& program, std::mt19937& rng, uint32_t n, uint32_t tail) {
  HostTensor a = vkc::test::random_tensor(DType::f32, {n}, rng);
  HostTensor b = vkc::test::random_tensor(DType::f32, {n}, rng);
  ExecuteOptions poison;
  poison.poison_outputs = true;
  HostTensor c = program.execute({{"a", a}, {"b", b}}, poison).at("c");
  for (uint32_t i = 0; i < n - tail; ++i) EXPECT_EQ(c.as<float>()[i], a.as<float>()[i] + b.as<float>()[i]);
  for (uint32_t i = n - tail; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &c.as<float>()[i], 4);
    EXPECT_EQ(bits, 0x7FC07FC0u) << i;
  }
}

TEST_F(RuntimeProgram, UnwrittenOutputsStayPoisoned) {
  const uint32_t n = 100;
  ModuleImage m = test::add_module(ctx().limits(), n);
  m.manifest.dispatches[0].push_constants = {n - 3};  // the kernel skips the last 3 elements
  Program program(ctx(), m);
  // Without poisoning the skipped elements keep whatever the buffer held (here: the first run's
  // poison), so poisoning must happen on every run that asks for it.
  check_poisoned_tail(program, rng, n, 3);
  program.execute({{"a", HostTensor(DType::f32, {n})}, {"b", HostTensor(DType::f32, {n})}});
  check_poisoned_tail(program, rng, n, 3);
  ctx().impl().force_staging = true;
  Program staged(ctx(), m);
  ctx().impl().force_staging = false;
  check_poisoned_tail(staged, rng, n, 3);
}

// The memory preflight: a module whose buffers exceed the device's memory is refused before
// anything is allocated, and an execution whose fresh device outputs would exceed it is refused
// before allocating them. The heap is shrunk here so that the test needs little memory.
TEST_F(RuntimeProgram, MemoryIsPreflighted) {
  const uint32_t n = 1 << 20;  // 4 MiB per tensor
  const ModuleImage m = test::add_module(ctx().limits(), n);
  Context::Impl& c = ctx().impl();
  const uint64_t heap = c.device_heap_bytes, max_allocation = c.max_allocation_bytes, before = c.storage_bytes_in_use;
  const std::string device = ctx().device_info().name;
  // Storage above one allocation is held in segments, but the kernel binds all of 'a' at once.
  c.max_allocation_bytes = 4 * n - 4;
  EXPECT_EQ(error_of([&] { Program p(ctx(), m); }),
            "module does not fit the memory of device '" + device + "': input 'a': a binding of " + std::to_string(4 * n) +
                " bytes at offset 0 cannot lie in one allocation of at most " + std::to_string(4 * n - 4) +
                " bytes (maxMemoryAllocationSize) with the bindings around it");
  c.max_allocation_bytes = max_allocation;
  c.device_heap_bytes = before + 3 * 4 * n - 1;  // a, b and c plus the constants and arena: one word short
  std::string message = error_of([&] { Program p(ctx(), m); });
  EXPECT_NE(message.find("module does not fit the memory of device '" + device + "': its buffers need "),
            std::string::npos) << message;
  EXPECT_NE(message.find(cat("the device's memory heap has ", before + 3 * 4 * n - 1, " bytes")), std::string::npos)
      << message;
  EXPECT_EQ(c.storage_bytes_in_use, before) << "refused after allocating";
  {
    c.device_heap_bytes = before + 4 * 4 * n + 4096;  // the module and one device output
    Program program(ctx(), m);
    HostTensor a = vkc::test::random_tensor(DType::f32, {n}, rng), b = vkc::test::random_tensor(DType::f32, {n}, rng);
    program.submit({{"a", a}, {"b", b}}, {}, {"c"});
    std::shared_ptr<DeviceTensor> held = program.wait().device.at("c");
    EXPECT_EQ(error_of([&] { program.submit({{"a", a}, {"b", b}}, {}, {"c"}); }),
              cat("execution does not fit the memory of device '", device, "': its buffers need ", 4 * n,
                  " bytes of device memory (largest: device output 'c', ", 4 * n, " bytes) beside ",
                  c.storage_bytes_in_use, " bytes in use, the device's memory heap has ", c.device_heap_bytes,
                  " bytes (release device outputs of earlier executions that are no longer needed)"));
    held.reset();  // released: the next execution reuses it and allocates nothing
    program.submit({{"a", a}, {"b", b}}, {}, {"c"});
    EXPECT_TRUE(vkc::test::compare(program.wait().device.at("c")->download(), reference(a, b, std::plus<float>()), 0, 0).ok);
  }
  c.device_heap_bytes = heap;
  EXPECT_EQ(c.storage_bytes_in_use, before);
}

// Device outputs: a tensor the caller still holds is never written again; one it let go of is
// reused by the next execution instead of a fresh allocation.
TEST_F(RuntimeProgram, DeviceOutputsAreReusedOnlyOnceReleased) {
  const uint32_t n = 300;
  Program program(ctx(), test::add_module(ctx().limits(), n));
  auto run = [&](const HostTensor& a, const HostTensor& b) {
    program.submit({{"a", a}, {"b", b}}, {}, {"c"});
    return program.wait().device.at("c");
  };
  HostTensor a1 = vkc::test::random_tensor(DType::f32, {n}, rng), b1 = vkc::test::random_tensor(DType::f32, {n}, rng);
  HostTensor a2 = vkc::test::random_tensor(DType::f32, {n}, rng), b2 = vkc::test::random_tensor(DType::f32, {n}, rng);
  const size_t recorded = program.recorded_command_buffers();
  std::shared_ptr<DeviceTensor> first = run(a1, b1);
  // Outputs kept on the device are not downloaded: a variant of its own, recorded once.
  EXPECT_EQ(program.recorded_command_buffers(), recorded + 1);
  std::shared_ptr<DeviceTensor> second = run(a2, b2);  // `first` is held: a new tensor
  EXPECT_NE(first.get(), second.get());
  EXPECT_EQ(program.device_output_allocations(), 2u);
  auto cmp = vkc::test::compare(first->download(), reference(a1, b1, std::plus<float>()), 0, 0);
  EXPECT_TRUE(cmp.ok) << "a held output was overwritten: " << cmp.message;
  DeviceTensor* released = second.get();
  second.reset();
  std::shared_ptr<DeviceTensor> third = run(a1, b2);
  EXPECT_EQ(third.get(), released);
  EXPECT_EQ(program.device_output_allocations(), 2u);
  EXPECT_EQ(program.recorded_command_buffers(), recorded + 1);
  cmp = vkc::test::compare(third->download(), reference(a1, b2, std::plus<float>()), 0, 0);
  EXPECT_TRUE(cmp.ok) << cmp.message;
  cmp = vkc::test::compare(first->download(), reference(a1, b1, std::plus<float>()), 0, 0);
  EXPECT_TRUE(cmp.ok) << cmp.message;
}

TEST_F(RuntimeProgram, TwoDispatchesThroughArenaConstantsAndView) {
  const uint32_t n = 4096;
  HostTensor w = vkc::test::random_tensor(DType::f32, {n / 4, 4}, rng);
  Program program(ctx(), two_dispatch_module(ctx().limits(), n, w));
  HostTensor a = vkc::test::random_tensor(DType::f32, {n}, rng);
  HostTensor b = vkc::test::random_tensor(DType::f32, {n}, rng);
  ExecuteOptions options;
  options.poison_outputs = true;  // also poisons the arena intermediate
  HostTensor out = program.execute({{"a", a}, {"b", b}}, options).at("out");
  HostTensor expected(DType::f32, {n / 4, 4});
  for (uint32_t i = 0; i < n; ++i) expected.as<float>()[i] = (a.as<float>()[i] + b.as<float>()[i]) * w.as<float>()[i];
  auto cmp = vkc::test::compare(out, expected, 0, 0);
  EXPECT_TRUE(cmp.ok) << cmp.message;
}

// Pipeline statistics are asked for only on request, come back for every dispatch where the device
// has VK_KHR_pipeline_executable_properties (NVIDIA: registers, shared memory; lavapipe in Mesa
// 22.3 has none, so there the list must be empty rather than made up), and never change results.
TEST_F(RuntimeProgram, PipelineStatisticsOnRequest) {
  const uint32_t n = 256;
  Program plain(ctx(), test::add_module(ctx().limits(), n));
  EXPECT_TRUE(plain.pipeline_statistics(0).empty());
  EXPECT_NE(error_of([&] { plain.pipeline_statistics(1); }).find("dispatch 1 of 1"), std::string::npos);

  ContextOptions options;
  options.pipeline_statistics = true;
  Context with_stats(options);
  Program program(with_stats, test::add_module(with_stats.limits(), n));
  const bool offered = with_stats.impl().caps.has(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  std::vector<std::string> stats = program.pipeline_statistics(0);
  EXPECT_EQ(!stats.empty(), offered) << with_stats.device_info().name;
  for (const std::string& s : stats) EXPECT_NE(s.find('='), std::string::npos) << s;
  HostTensor a = vkc::test::random_tensor(DType::f32, {n}, rng);
  HostTensor b = vkc::test::random_tensor(DType::f32, {n}, rng);
  auto cmp = vkc::test::compare(program.execute({{"a", a}, {"b", b}}).at("c"), reference(a, b, std::plus<float>()), 0, 0);
  EXPECT_TRUE(cmp.ok) << cmp.message;
  EXPECT_TRUE(with_stats.validation_messages().empty());
}

TEST_F(RuntimeProgram, StagingPathMatchesMappedPath) {
  // lavapipe's memory is all host visible; force device-local-only handling to cover staging.
  const uint32_t m4 = 776;  // not a multiple of either workgroup size
  HostTensor w = vkc::test::random_tensor(DType::f32, {m4 / 4, 4}, rng);
  ctx().impl().force_staging = true;
  std::unique_ptr<Program> program;
  try {
    program = std::make_unique<Program>(ctx(), two_dispatch_module(ctx().limits(), m4, w));
  } catch (...) {
    ctx().impl().force_staging = false;
    throw;
  }
  ctx().impl().force_staging = false;
  for (int run = 0; run < 2; ++run) {
    HostTensor a = vkc::test::random_tensor(DType::f32, {m4}, rng);
    HostTensor b = vkc::test::random_tensor(DType::f32, {m4}, rng);
    HostTensor out = program->execute({{"a", a}, {"b", b}}).at("out");
    HostTensor expected(DType::f32, {m4 / 4, 4});
    for (uint32_t i = 0; i < m4; ++i)
      expected.as<float>()[i] = (a.as<float>()[i] + b.as<float>()[i]) * w.as<float>()[i];
    auto cmp = vkc::test::compare(out, expected, 0, 0);
    EXPECT_TRUE(cmp.ok) << cmp.message;
  }
}

TEST_F(RuntimeProgram, InputMismatchesNameTheInput) {
  const uint32_t n = 1000;
  Program program(ctx(), test::add_module(ctx().limits(), n));
  HostTensor good(DType::f32, {n});
  EXPECT_EQ(error_of([&] { program.execute({{"a", good}, {"b", good}, {"x", good}}); }),
            "unknown input 'x' (the module's inputs are: a, b)");
  EXPECT_EQ(error_of([&] { program.execute({{"a", good}}); }), "missing input 'b' (f32 1000)");
  EXPECT_EQ(error_of([&] { program.execute({{"a", good}, {"b", HostTensor(DType::i32, {n})}}); }),
            "input 'b': expected dtype f32, found i32");
  EXPECT_EQ(error_of([&] { program.execute({{"a", HostTensor(DType::f32, {10, 100})}, {"b", good}}); }),
            "input 'a': expected shape 1000, found 10x100");
}

// A module is judged by what its dispatches use: planned for a bigger target, it runs where its
// dispatches fit, and is refused (naming the dispatch, both numbers and --recompile) where not.
TEST_F(RuntimeProgram, JudgesAModuleByWhatItUses) {
  TargetLimits big = ctx().limits();
  big.max_compute_shared_memory_size = ctx().limits().max_compute_shared_memory_size + 16384;
  big.max_push_constants_size = ctx().limits().max_push_constants_size * 2;
  big.subgroup_size = big.min_subgroup_size = big.max_subgroup_size = 4 * std::max(1u, ctx().limits().max_subgroup_size);
  ModuleImage m = test::add_module(big, 64);
  m.manifest.target.name = "big";
  {
    Program p(ctx(), m);
    HostTensor a(DType::f32, {64}), b(DType::f32, {64});
    EXPECT_EQ(p.execute({{"a", a}, {"b", b}}).size(), 1u);
  }
  const TargetLimits& d = ctx().limits();
  m.manifest.dispatches[0].workgroup_memory_bytes = d.max_compute_shared_memory_size + 16;
  EXPECT_EQ(error_of([&] { Program p(ctx(), m); }),
            "module compiled for target 'big' does not fit device '" + ctx().device_info().name + "': dispatch '" +
                m.manifest.dispatches[0].name + "' uses " + std::to_string(d.max_compute_shared_memory_size + 16) +
                " bytes of workgroup memory, the device allows " + std::to_string(d.max_compute_shared_memory_size) +
                " (maxComputeSharedMemorySize); recompile it for this device (vk-run --recompile)");
  EXPECT_TRUE(ctx().validation_messages().empty());
}

// A dispatch that pins its subgroup size (DispatchDesc::required_subgroup_size) chains
// VkPipelineShaderStageRequiredSubgroupSizeCreateInfo where the device can pin one; where it has
// exactly that one size and cannot, nothing is chained; a size it cannot give is refused.
TEST(SubgroupSizePin, BuiltWhenAsked) {
  DispatchDesc d;
  d.name = "d0_matmul_coopmat";
  d.workgroup_size = {256, 1, 1};
  TargetLimits rdna3;
  rdna3.min_subgroup_size = 32;
  rdna3.max_subgroup_size = 64;
  rdna3.subgroup_size_control = true;
  EXPECT_FALSE(subgroup_size_pin(d, rdna3, true));  // nothing pinned
  d.subgroup_sizes = {32, 32};
  d.required_subgroup_size = 32;
  std::optional<SubgroupSizePin> pin = subgroup_size_pin(d, rdna3, true);
  ASSERT_TRUE(pin);
  EXPECT_EQ(pin->info.sType, VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO_EXT);
  EXPECT_EQ(pin->info.requiredSubgroupSize, 32u);
  EXPECT_EQ(pin->flags, VkPipelineShaderStageCreateFlags(VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT_EXT));
  EXPECT_EQ(subgroup_size_pin(d, rdna3, false)->flags, 0u);  // no computeFullSubgroups
  TargetLimits fixed32;
  fixed32.min_subgroup_size = fixed32.max_subgroup_size = 32;
  EXPECT_FALSE(subgroup_size_pin(d, fixed32, false));
  TargetLimits no_control = rdna3;
  no_control.subgroup_size_control = false;
  EXPECT_EQ(error_of([&] { subgroup_size_pin(d, no_control, false); }),
            "dispatch 'd0_matmul_coopmat' requires subgroup size 32, the device has 32..64 and cannot pin one for "
            "compute (subgroupSizeControl, requiredSubgroupSizeStages)");
  TargetLimits intel = rdna3;
  intel.min_subgroup_size = 8;
  intel.max_subgroup_size = 16;
  EXPECT_EQ(error_of([&] { subgroup_size_pin(d, intel, false); }),
            "dispatch 'd0_matmul_coopmat' requires subgroup size 32, the device has 8..16");
}

// On the test device (lavapipe: 8, which it can pin for compute) the pinned pipeline is created
// with the create info, under the validation layer, and computes the same.
TEST_F(RuntimeProgram, PinnedSubgroupSizeRuns) {
  const uint32_t size = ctx().limits().min_subgroup_size;
  if (!ctx().limits().subgroup_size_control) GTEST_FAIL() << "the test device cannot pin a subgroup size";
  const uint32_t n = 1000;
  ModuleImage m = test::add_module(ctx().limits(), n);
  m.manifest.dispatches[0].subgroup_sizes = {size, size};
  m.manifest.dispatches[0].required_subgroup_size = size;
  ASSERT_TRUE(subgroup_size_pin(m.manifest.dispatches[0], ctx().limits(), true));
  Program program(ctx(), m);
  HostTensor a = vkc::test::random_tensor(DType::f32, {n}, rng);
  HostTensor b = vkc::test::random_tensor(DType::f32, {n}, rng);
  auto cmp = vkc::test::compare(program.execute({{"a", a}, {"b", b}}).at("c"), reference(a, b, std::plus<float>()), 0, 0);
  EXPECT_TRUE(cmp.ok) << cmp.message;
  // A size the device cannot give is refused before any pipeline is created.
  m.manifest.dispatches[0].subgroup_sizes = {4 * ctx().limits().max_subgroup_size, 4 * ctx().limits().max_subgroup_size};
  m.manifest.dispatches[0].required_subgroup_size = 4 * ctx().limits().max_subgroup_size;
  EXPECT_NE(error_of([&] { Program p(ctx(), m); }).find("requires subgroup size"), std::string::npos);
}

TEST_F(RuntimeProgram, MisalignedOffsetIsRefused) {
  const uint32_t n = 64;
  HostTensor w(DType::f32, {n / 4, 4});
  ModuleImage m = two_dispatch_module(ctx().limits(), n, w);
  m.manifest.tensors[4].offset = 4;  // t
  uint32_t align = ctx().limits().min_storage_buffer_offset_alignment;
  if (align <= 4) GTEST_SKIP() << "device accepts 4-byte offsets";
  EXPECT_EQ(error_of([&] { Program p(ctx(), m); }),
            "dispatch 'add' binding 2 (tensor 't'): offset 4 is not a multiple of "
            "minStorageBufferOffsetAlignment " + std::to_string(align));
}

TEST_F(RuntimeProgram, ProfileHasOneEntryPerDispatch) {
  const uint32_t n = 1 << 16;
  HostTensor w = vkc::test::random_tensor(DType::f32, {n / 4, 4}, rng);
  Program program(ctx(), two_dispatch_module(ctx().limits(), n, w));
  HostTensor a = vkc::test::random_tensor(DType::f32, {n}, rng);
  HostTensor b = vkc::test::random_tensor(DType::f32, {n}, rng);
  EXPECT_TRUE(program.last_profile().empty());
  HostTensor out = program.execute({{"a", a}, {"b", b}}, {.profile = true}).at("out");
  EXPECT_EQ(out.as<float>()[5], (a.as<float>()[5] + b.as<float>()[5]) * w.as<float>()[5]);
  const auto& profile = program.last_profile();
  ASSERT_EQ(profile.size(), 2u);
  EXPECT_EQ(profile[0].name, "add");
  EXPECT_EQ(profile[1].name, "mul");
  for (const DispatchProfile& p : profile) {
    EXPECT_GT(p.ms, 0) << p.name;
    EXPECT_LT(p.ms, 10000) << p.name;
    EXPECT_NEAR(p.gflops, n / p.ms / 1e6, 1e-9);
    EXPECT_NEAR(p.gbps, 12.0 * n / p.ms / 1e6, 1e-9);
  }
}

TEST_F(RuntimeProgram, ZeroSizeTensorsBindAPlaceholder) {
  Program program(ctx(), test::add_module(ctx().limits(), 0));
  auto out = program.execute({{"a", HostTensor(DType::f32, {0})}, {"b", HostTensor(DType::f32, {0})}});
  EXPECT_EQ(out.at("c").numel(), 0);
}

TEST_F(RuntimeProgram, ValidationMessagesFailExecute) {
  if (!ctx().validation_enabled()) GTEST_SKIP() << "needs VKC_VALIDATION=1";
  ModuleImage m = test::add_module(ctx().limits(), 64);
  // The shader declares a push-constant block the pipeline layout now lacks: a validation error.
  m.manifest.dispatches[0].push_constants.clear();
  m.manifest.dispatches[0].workgroup_count = {0, 1, 1};  // nothing actually runs
  std::unique_ptr<Program> program;
  try {
    program = std::make_unique<Program>(ctx(), m);
  } catch (const Error&) {
  }
  EXPECT_FALSE(ctx().validation_messages().empty());
  if (program) {
    HostTensor x(DType::f32, {64});
    std::string message = error_of([&] { program->execute({{"a", x}, {"b", x}}); });
    EXPECT_EQ(message.rfind("Vulkan validation error: ", 0), 0u) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos);
  }
  ctx().clear_validation_messages();
}

}  // namespace
}  // namespace vkc::rt
