// Device enumeration, selection and the limits read from the device.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <thread>

#include "common/scoped_env.h"
#include "common/test_util.h"
#include "runtime/context_internal.h"
#include "runtime_fixture.h"
#include "support/error.h"

namespace vkc::rt {
namespace {

using vkc::test::error_of;

DeviceInfo fake(uint32_t index, const std::string& name, const std::string& type) {
  DeviceInfo d;
  d.index = index;
  d.name = name;
  d.type = type;
  return d;
}

std::vector<DeviceInfo> fake_devices() {
  return {fake(0, "llvmpipe (LLVM 15.0.6, 256 bits)", "cpu"), fake(1, "Intel(R) UHD Graphics 630", "integrated"),
          fake(2, "NVIDIA GeForce RTX 4090", "discrete")};
}

TEST(RuntimeDeviceSelection, BestTypeWins) {
  EXPECT_EQ(choose_device(fake_devices(), ""), 2u);
  std::vector<DeviceInfo> two = fake_devices();
  two.pop_back();
  EXPECT_EQ(choose_device(two, ""), 1u);
}

TEST(RuntimeDeviceSelection, ByIndexAndCaseInsensitiveName) {
  EXPECT_EQ(choose_device(fake_devices(), "0"), 0u);
  EXPECT_EQ(choose_device(fake_devices(), "1"), 1u);
  EXPECT_EQ(choose_device(fake_devices(), "LLVMPIPE"), 0u);
  EXPECT_EQ(choose_device(fake_devices(), "geforce"), 2u);
}

TEST(RuntimeDeviceSelection, NoMatchListsDevices) {
  const std::string list =
      "devices: 0: llvmpipe (LLVM 15.0.6, 256 bits) [cpu], 1: Intel(R) UHD Graphics 630 [integrated], "
      "2: NVIDIA GeForce RTX 4090 [discrete]";
  EXPECT_EQ(error_of([] { choose_device(fake_devices(), "radeon"); }), "no Vulkan device matches 'radeon'; " + list);
  EXPECT_EQ(error_of([] { choose_device(fake_devices(), "7"); }), "Vulkan device index 7 is out of range; " + list);
  EXPECT_EQ(error_of([] { choose_device({}, ""); }),
            "no Vulkan device found (install mesa-vulkan-drivers for the lavapipe CPU device)");
}

TEST(RuntimeDevice, EnumerationFindsLavapipe) {
  std::vector<DeviceInfo> devices = Context::enumerate_devices();
  ASSERT_FALSE(devices.empty());
  bool lavapipe = false;
  for (size_t i = 0; i < devices.size(); ++i) {
    EXPECT_EQ(devices[i].index, i);
    EXPECT_FALSE(devices[i].name.empty());
    EXPECT_GE(devices[i].api_version, VK_API_VERSION_1_1);
    if (devices[i].name.find("llvmpipe") != std::string::npos) {
      lavapipe = true;
      EXPECT_EQ(devices[i].type, "cpu");
      EXPECT_NE(devices[i].driver.find("Mesa"), std::string::npos) << devices[i].driver;
    }
  }
  EXPECT_TRUE(lavapipe);
}

TEST(RuntimeDevice, UnknownDeviceNameIsAnError) {
  ContextOptions options;
  options.device = "no-such-gpu";
  std::string message = error_of([&] { Context c(options); });
  EXPECT_EQ(message.rfind("no Vulkan device matches 'no-such-gpu'; devices: 0: ", 0), 0u) << message;
}

class RuntimeContext : public test::RuntimeFixture {};

TEST_F(RuntimeContext, ValidationFollowsEnvironment) {
  const char* env = std::getenv("VKC_VALIDATION");
  EXPECT_EQ(ctx().validation_enabled(), env && std::string(env) == "1");
}

TEST_F(RuntimeContext, LimitsAreSane) {
  const TargetLimits& l = ctx().limits();
  EXPECT_EQ(l.name, "host");
  EXPECT_NE(l.description.find(ctx().device_info().name), std::string::npos) << l.description;
  EXPECT_TRUE(l.vulkan_version == "1.1" || l.vulkan_version == "1.2" || l.vulkan_version == "1.3");
  EXPECT_GE(l.max_compute_shared_memory_size, 16384u);
  EXPECT_GE(l.max_compute_work_group_invocations, 128u);
  EXPECT_GE(l.max_compute_work_group_size[0], 128u);
  EXPECT_GE(l.max_compute_work_group_count[0], 65535u);
  EXPECT_GT(l.subgroup_size, 0u);
  EXPECT_LE(l.min_subgroup_size, l.subgroup_size);
  EXPECT_GE(l.max_subgroup_size, l.subgroup_size);
  EXPECT_GE(l.max_storage_buffer_range, 1u << 27);
  EXPECT_GE(l.max_push_constants_size, 128u);
  EXPECT_GT(l.min_storage_buffer_offset_alignment, 0u);
  EXPECT_LE(l.min_storage_buffer_offset_alignment, 256u);
  EXPECT_GE(l.max_per_stage_descriptor_storage_buffers, 4u);
  // Reported (NV SM builtins, AMD shader core properties), a CPU thread count or an estimate:
  // never unknown for a live device.
  EXPECT_GE(l.compute_units, 1u);
  // The device's own limits trivially satisfy themselves.
  EXPECT_TRUE(l.unmet_by(l).empty());
}

TEST_F(RuntimeContext, LavapipeLimits) {
  if (ctx().device_info().name.find("llvmpipe") == std::string::npos) GTEST_SKIP() << "not lavapipe";
  const TargetLimits& l = ctx().limits();
  EXPECT_EQ(l.max_compute_shared_memory_size, 32768u);
  EXPECT_TRUE(l.shader_float16);
  EXPECT_TRUE(l.shader_int8);
  EXPECT_TRUE(l.shader_int64);
  EXPECT_TRUE(l.storage_buffer_16bit);
  EXPECT_TRUE(l.storage_buffer_8bit);
  EXPECT_TRUE(l.subgroup_arithmetic);
  EXPECT_TRUE(l.subgroup_shuffle);
  EXPECT_FALSE(l.cooperative_matrix_nv);
  EXPECT_FALSE(l.cooperative_matrix_khr);
  EXPECT_EQ(ctx().device_info().tensor_cores, "");  // what --list-devices reports as none
  EXPECT_TRUE(ctx().device_info().cooperative_matrix_shapes.empty());
  EXPECT_EQ(l.vulkan_version, "1.3");  // matches targets/lavapipe.json
  // llvmpipe runs one compute thread per CPU.
  EXPECT_EQ(l.compute_units, std::max(1u, std::thread::hardware_concurrency()));
  EXPECT_EQ(l.vendor, Vendor::mesa);  // as targets/lavapipe.json
}

}  // namespace
}  // namespace vkc::rt

namespace vkc::rt {
namespace {

using vkc::test::ScopedEnv;

TEST(RuntimeDeviceErrors, MissingValidationLayer) {
  ScopedEnv layers("VK_LAYER_PATH", "/nonexistent-vkc-layers");
  ScopedEnv implicit("VK_LOADER_LAYERS_DISABLE", "~all~");
  ContextOptions options;
  options.validation = true;
  EXPECT_EQ(error_of([&] { Context c(options); }),
            "VKC_VALIDATION=1 but VK_LAYER_KHRONOS_validation is not installed");
}

TEST(RuntimeDeviceErrors, NoDriver) {
  ScopedEnv icds("VK_ICD_FILENAMES", "/nonexistent-vkc-icd.json");
  ScopedEnv drivers("VK_DRIVER_FILES", "/nonexistent-vkc-icd.json");
  const std::string expected = "no Vulkan device found (install mesa-vulkan-drivers for the lavapipe CPU device)";
  EXPECT_EQ(error_of([] { Context::enumerate_devices(); }), expected);
  ContextOptions options;
  options.validation_from_env = false;
  EXPECT_EQ(error_of([&] { Context c(options); }), expected);
}

}  // namespace
}  // namespace vkc::rt
