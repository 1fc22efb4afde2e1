// GPU faults: out of device memory and device loss must surface as clear one-line errors, with
// every Vulkan object created so far released (the ASan build's LeakSanitizer checks the host
// side; the validation layer reports leaked Vulkan objects at device destruction).
#include <gtest/gtest.h>

#include <memory>

#include "codegen/compiler.h"
#include "common/gpu_harness.h"
#include "hostile/hostile_util.h"
#include "ir/text_format.h"
#include "runtime/context_internal.h"
#include "runtime/vk_util.h"

namespace vkc::hostile {
namespace {

ModuleImage relu_module(const TargetLimits& target) {
  codegen::CompileOptions o;
  o.target = target;
  return codegen::compile_graph(ir::parse_graph("graph @g(%x: tensor<64xf32>) {\n"
                                                "  %y = relu (%x) : tensor<64xf32>\n"
                                                "  return %y as \"y\"\n}\n"),
                                o);
}

// An arena of 1 PiB: more than any heap (and than the 47-bit address space lavapipe allocates in).
TEST(HostileGpuFault, ArenaLargerThanTheHeapIsAClearError) {
  // A context of its own, destroyed at the end of the test: teardown after a failed load must be
  // clean, and the validation layer would report objects left behind.
  rt::Context ctx;
  ModuleImage m = relu_module(ctx.limits());
  m.manifest.arena_bytes = uint64_t(1) << 50;
  std::string message = error_of([&] { rt::Program p(ctx, m); });
  EXPECT_NE(message, "(no error)");
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_TRUE(message.find("OUT_OF_DEVICE_MEMORY") != std::string::npos ||
              message.find("OUT_OF_HOST_MEMORY") != std::string::npos ||
              message.find("arena") != std::string::npos)
      << message;
  // The same context still runs a normal module afterwards.
  ctx.clear_validation_messages();
  rt::Program ok(ctx, relu_module(ctx.limits()));
  HostTensor x(DType::f32, {64});
  for (int i = 0; i < 64; ++i) x.as<float>()[i] = float(i - 32);
  HostTensor y = ok.execute({{"x", x}}).at("y");
  for (int i = 0; i < 64; ++i) EXPECT_EQ(y.as<float>()[i], i < 32 ? 0.0f : float(i - 32));
}

// A device loss cannot be provoked portably, so it is injected through the context's device
// function table (the runtime makes every Vulkan call through it): the fence wait reports
// VK_ERROR_DEVICE_LOST after the real wait, so the GPU work has finished and nothing is freed under
// it. The execution must fail with the one-line message, leave no execution pending, and the
// program must run normally once the table is restored and tear down without validation messages
// (and, in the ASan build, without leaks).
PFN_vkWaitForFences real_wait = nullptr;
VkResult VKAPI_PTR wait_then_lose(VkDevice device, uint32_t count, const VkFence* fences, VkBool32 all, uint64_t timeout) {
  VkResult r = real_wait(device, count, fences, all, timeout);
  return r == VK_SUCCESS ? VK_ERROR_DEVICE_LOST : r;
}
VkResult VKAPI_PTR submit_lost(VkQueue, uint32_t, const VkSubmitInfo*, VkFence) { return VK_ERROR_DEVICE_LOST; }

TEST(HostileGpuFault, DeviceLostDuringExecutionIsAClearErrorAndLeavesNothingPending) {
  rt::Context ctx;
  rt::Program program(ctx, relu_module(ctx.limits()));
  HostTensor x(DType::f32, {64});
  for (int i = 0; i < 64; ++i) x.as<float>()[i] = float(i - 32);
  auto check_runs = [&] {
    HostTensor y = program.execute({{"x", x}}).at("y");
    for (int i = 0; i < 64; ++i) EXPECT_EQ(y.as<float>()[i], i < 32 ? 0.0f : float(i - 32));
  };
  check_runs();

  VolkDeviceTable& vk = ctx.impl().vk;
  real_wait = vk.vkWaitForFences;
  vk.vkWaitForFences = wait_then_lose;
  std::string lost = error_of([&] { program.execute({{"x", x}}); });
  vk.vkWaitForFences = real_wait;
  EXPECT_EQ(lost.rfind("vkWaitForFences failed: VK_ERROR_DEVICE_LOST: the GPU device was lost", 0), 0u) << lost;
  EXPECT_EQ(lost.find('\n'), std::string::npos) << lost;
  EXPECT_TRUE(program.ready());  // nothing left in flight
  check_runs();

  PFN_vkQueueSubmit real_submit = vk.vkQueueSubmit;
  vk.vkQueueSubmit = submit_lost;
  std::string refused = error_of([&] { program.execute({{"x", x}}); });
  vk.vkQueueSubmit = real_submit;
  EXPECT_EQ(refused.rfind("vkQueueSubmit failed: VK_ERROR_DEVICE_LOST", 0), 0u) << refused;
  EXPECT_EQ(refused.find('\n'), std::string::npos) << refused;
  EXPECT_TRUE(program.ready());
  check_runs();
  EXPECT_TRUE(ctx.validation_messages().empty());
}

// What users see for each fault: the message mapping.
TEST(HostileGpuFault, DeviceLostMessageSaysWhatHappened) {
  std::string message = error_of([] { rt::vk_check(VK_ERROR_DEVICE_LOST, "vkQueueSubmit", "dispatch 'd0'"); });
  EXPECT_EQ(message.rfind("vkQueueSubmit failed: VK_ERROR_DEVICE_LOST: the GPU device was lost", 0), 0u) << message;
  EXPECT_NE(message.find("out-of-bounds"), std::string::npos) << message;
  EXPECT_NE(message.find("dispatch 'd0'"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
  std::string oom = error_of([] { rt::vk_check(VK_ERROR_OUT_OF_DEVICE_MEMORY, "vkAllocateMemory", "arena"); });
  EXPECT_EQ(oom, "vkAllocateMemory failed: VK_ERROR_OUT_OF_DEVICE_MEMORY (arena)");
  EXPECT_EQ(error_of([] { rt::vk_check(VkResult(-123456), "vkFoo"); }), "vkFoo failed: VkResult(-123456)");
  EXPECT_EQ(error_of([] { rt::vk_check(VK_INCOMPLETE, "vkFoo"); }), "(no error)");
}

}  // namespace
}  // namespace vkc::hostile
