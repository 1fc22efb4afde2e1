// A module judged by what its dispatches use (module/device_fit.h): the usage read from SPIR-V,
// its manifest round trip, and one refusal per limit a device can fall short in.
#include <gtest/gtest.h>

#include <cstring>

#include "module/device_fit.h"
#include "support/error.h"

namespace vkc {
namespace {

// SPIR-V words: the header for `version` (0x00010500 = 1.5), then the given instructions.
std::vector<uint32_t> spirv(uint32_t version, const std::vector<uint32_t>& capabilities,
                            const std::vector<std::string>& extensions) {
  std::vector<uint32_t> w{0x07230203u, version, 0, 1, 0};
  for (uint32_t c : capabilities) w.insert(w.end(), {(2u << 16) | 17u, c});  // OpCapability
  for (const std::string& e : extensions) {
    std::vector<uint32_t> text((e.size() + 4) / 4, 0);  // NUL-terminated, padded to words
    std::memcpy(text.data(), e.data(), e.size());
    w.push_back(uint32_t(1 + text.size()) << 16 | 10u);  // OpExtension
    w.insert(w.end(), text.begin(), text.end());
  }
  return w;
}

constexpr uint32_t kShader = 1, kFloat16 = 9, kStorage16 = 4433, kArithmetic = 63, kCoopNV = 5357;

// One dispatch using a bit of everything; `recorded`: usage in the manifest (format 2) or only in
// the .spv (format 1).
ModuleImage module_using(bool recorded) {
  ModuleImage m;
  m.manifest.target.name = "nvidia";
  m.manifest.target.min_subgroup_size = m.manifest.target.max_subgroup_size = 32;
  m.manifest.tensors = {{"x", DType::f32, {1024}, TensorRole::Input, 0, ""},
                        {"y", DType::f32, {4096}, TensorRole::Output, 0, ""}};
  m.manifest.inputs = {"x"};
  m.manifest.outputs = {"y"};
  DispatchDesc d;
  d.name = "d0_matmul_coopmat";
  d.spv = "d0.spv";
  d.bindings = {{0, "x", false}, {1, "y", true}};
  d.push_constants = {1, 2, 3};
  d.workgroup_size = {64, 2, 1};
  d.workgroup_count = {100, 1, 1};
  d.workgroup_memory_bytes = 40000;
  m.spirv["d0.spv"] = spirv(0x00010500u, {kShader, kFloat16, kStorage16, kArithmetic, kCoopNV}, {"SPV_NV_cooperative_matrix"});
  if (recorded) {
    d.subgroup_sizes = {32, 32};
    d.spirv = read_spirv_usage(m.spirv["d0.spv"]);
  }
  m.manifest.dispatches = {d};
  return m;
}

// A device with room to spare in every dimension the module uses.
TargetLimits roomy_device() {
  TargetLimits t;
  t.name = "host";
  t.vulkan_version = "1.2";
  t.max_compute_shared_memory_size = 49152;
  t.max_compute_work_group_invocations = 1024;
  t.max_compute_work_group_size = {1024, 1024, 64};
  t.max_compute_work_group_count = {65535, 65535, 65535};
  t.min_subgroup_size = t.max_subgroup_size = t.subgroup_size = 32;
  t.max_storage_buffer_range = 1 << 20;
  t.max_push_constants_size = 128;
  t.max_per_stage_descriptor_storage_buffers = 8;
  t.shader_float16 = t.storage_buffer_16bit = t.subgroup_arithmetic = t.cooperative_matrix_nv = true;
  return t;
}

TEST(SpirvUsage, ReadsVersionCapabilitiesAndExtensions) {
  SpirvUsage u = read_spirv_usage(spirv(0x00010300u, {kFloat16, kShader, kFloat16, 4242}, {"SPV_KHR_16bit_storage"}));
  EXPECT_EQ(u.version, "1.3");
  EXPECT_EQ(u.capabilities, (std::vector<std::string>{"Capability4242", "Float16", "Shader"}));
  EXPECT_EQ(u.extensions, (std::vector<std::string>{"SPV_KHR_16bit_storage"}));
  EXPECT_EQ(vulkan_version_for_spirv("1.3"), "1.1");
  EXPECT_EQ(vulkan_version_for_spirv("1.5"), "1.2");
  EXPECT_EQ(vulkan_version_for_spirv("1.6"), "1.3");
}

TEST(DeviceFit, ManifestRoundTripKeepsTheUsage) {
  ModuleImage m = module_using(true);
  Manifest back = manifest_from_json(manifest_to_json(m.manifest));
  ASSERT_EQ(back.dispatches.size(), 1u);
  EXPECT_EQ(back.dispatches[0].subgroup_sizes, (std::array<uint32_t, 2>{32, 32}));
  EXPECT_EQ(back.dispatches[0].spirv.version, "1.5");
  EXPECT_EQ(back.dispatches[0].spirv.capabilities, m.manifest.dispatches[0].spirv.capabilities);
  EXPECT_EQ(back.dispatches[0].spirv.extensions, (std::vector<std::string>{"SPV_NV_cooperative_matrix"}));
  // A manifest without "requires" (format version 1) reads with nothing recorded.
  Manifest old = manifest_from_json(manifest_to_json(module_using(false).manifest));
  EXPECT_TRUE(old.dispatches[0].spirv.version.empty());
  EXPECT_EQ(old.dispatches[0].subgroup_sizes, (std::array<uint32_t, 2>{0, 0}));
}

TEST(DeviceFit, FitsWhereTheUsageFitsWhateverTheProfile) {
  for (bool recorded : {true, false}) {
    ModuleImage m = module_using(recorded);
    EXPECT_TRUE(unmet_usage(m, roomy_device()).empty());
    // The profile's tuning hints and its own larger limits are no requirement.
    m.manifest.target.max_compute_shared_memory_size = 1 << 20;
    m.manifest.target.compute_units = 132;
    m.manifest.target.vendor = Vendor::nvidia;
    EXPECT_TRUE(unmet_usage(m, roomy_device()).empty());
  }
}

// Each limit made one too small refuses with one line naming the dispatch, both numbers and the
// limit; the same holds when the usage comes from the .spv of a format-1 manifest.
TEST(DeviceFit, EachLimitTooSmallIsNamed) {
  struct Case {
    const char* what;
    void (*shrink)(TargetLimits&);
    std::vector<std::string> expected;  // substrings of the one message
  };
  const std::vector<Case> cases = {
      {"memory", [](TargetLimits& t) { t.max_compute_shared_memory_size = 32768; },
       {"40000 bytes of workgroup memory", "32768", "maxComputeSharedMemorySize"}},
      {"invocations", [](TargetLimits& t) { t.max_compute_work_group_invocations = 127; },
       {"128 invocations", "127", "maxComputeWorkGroupInvocations"}},
      {"size", [](TargetLimits& t) { t.max_compute_work_group_size[1] = 1; },
       {"2 invocations wide along axis 1", "allows 1", "maxComputeWorkGroupSize[1]"}},
      {"count", [](TargetLimits& t) { t.max_compute_work_group_count[0] = 99; },
       {"launches 100 workgroups along axis 0", "99", "maxComputeWorkGroupCount[0]"}},
      {"range", [](TargetLimits& t) { t.max_storage_buffer_range = 16383; },
       {"binds 16384 bytes of tensor 'y'", "16383", "maxStorageBufferRange"}},
      {"bindings", [](TargetLimits& t) { t.max_per_stage_descriptor_storage_buffers = 1; },
       {"binds 2 storage buffers", "allows 1", "maxPerStageDescriptorStorageBuffers"}},
      {"push constants", [](TargetLimits& t) { t.max_push_constants_size = 8; },
       {"12 bytes of push constants", "allows 8", "maxPushConstantsSize"}},
      {"subgroup size", [](TargetLimits& t) { t.min_subgroup_size = t.max_subgroup_size = t.subgroup_size = 8; },
       {"relies on subgroup size 32", "the device has 8"}},
      {"Vulkan version", [](TargetLimits& t) { t.vulkan_version = "1.1"; },
       {"is SPIR-V 1.5", "needs Vulkan 1.2", "Vulkan 1.1"}},
      {"feature", [](TargetLimits& t) { t.shader_float16 = false; }, {"shaderFloat16", "capability Float16"}},
      {"extension", [](TargetLimits& t) { t.cooperative_matrix_nv = false; }, {"VK_NV_cooperative_matrix"}},
  };
  for (bool recorded : {true, false})
    for (const Case& c : cases) {
      TargetLimits device = roomy_device();
      c.shrink(device);
      std::vector<std::string> unmet = unmet_usage(module_using(recorded), device);
      ASSERT_FALSE(unmet.empty()) << c.what;
      // The extension case names the capability and the extension that need the same feature once.
      EXPECT_EQ(unmet.size(), 1u) << c.what << ": " << unmet[0];
      EXPECT_NE(unmet[0].find("dispatch 'd0_matmul_coopmat'"), std::string::npos) << unmet[0];
      EXPECT_EQ(unmet[0].find('\n'), std::string::npos) << unmet[0];
      for (const std::string& s : c.expected) EXPECT_NE(unmet[0].find(s), std::string::npos) << c.what << ": " << unmet[0];
    }
}

TEST(DeviceFit, RequirementsSummaryComesFromTheDispatches) {
  std::string s = requirements_summary(module_using(true).manifest);
  for (const char* part : {"40000 bytes of workgroup memory", "128 invocations", "16384-byte storage bindings",
                           "12 bytes of push constants", "subgroup size 32", "SPIR-V 1.5 (Vulkan 1.2)",
                           "CooperativeMatrixNV", "SPV_NV_cooperative_matrix"})
    EXPECT_NE(s.find(part), std::string::npos) << part << ": " << s;
}

// A dispatch planned for one subgroup size on a target whose size varies pins it
// (required_subgroup_size): it runs on any device whose range holds that size and that can pin a
// size for compute, and is refused in one line otherwise.
ModuleImage module_pinning(uint32_t size) {
  ModuleImage m = module_using(true);
  m.manifest.target.min_subgroup_size = 32;
  m.manifest.target.max_subgroup_size = 64;
  m.manifest.target.subgroup_size_control = true;
  m.manifest.dispatches[0].subgroup_sizes = {size, size};
  m.manifest.dispatches[0].required_subgroup_size = size;
  return m;
}

TEST(DeviceFit, PinnedSubgroupSizeRoundTrips) {
  ModuleImage m = module_pinning(32);
  const std::string text = manifest_to_json(m.manifest);
  EXPECT_NE(text.find("\"required_subgroup_size\": 32"), std::string::npos) << text;
  Manifest back = manifest_from_json(text);
  EXPECT_EQ(back.dispatches[0].required_subgroup_size, 32u);
  EXPECT_TRUE(back.target.subgroup_size_control);
  // Not written where nothing is pinned; absent reads as 0.
  const std::string plain = manifest_to_json(module_using(true).manifest);
  EXPECT_EQ(plain.find("required_subgroup_size"), std::string::npos);
  EXPECT_EQ(manifest_from_json(plain).dispatches[0].required_subgroup_size, 0u);
  // A pin that contradicts subgroup_sizes, or is no power of two, is refused naming the field.
  for (auto [pin, range] : {std::pair<uint32_t, uint32_t>{32, 64}, {48, 48}}) {
    ModuleImage bad = module_pinning(32);
    bad.manifest.dispatches[0].required_subgroup_size = pin;
    bad.manifest.dispatches[0].subgroup_sizes = {pin == 48 ? 48u : 32u, range};
    try {
      manifest_from_json(manifest_to_json(bad.manifest));
      ADD_FAILURE() << "accepted pin " << pin;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("dispatches[0].requires.required_subgroup_size"), std::string::npos)
          << e.what();
    }
  }
}

TEST(DeviceFit, PinnedSubgroupSizeFitsDevicesThatCanPinIt) {
  TargetLimits rdna3 = roomy_device();
  rdna3.min_subgroup_size = 32;
  rdna3.max_subgroup_size = rdna3.subgroup_size = 64;
  rdna3.subgroup_size_control = true;
  EXPECT_TRUE(unmet_usage(module_pinning(32), rdna3).empty());
  EXPECT_TRUE(unmet_usage(module_pinning(64), rdna3).empty());
  // Without the pin the same dispatch is refused there: the driver may pick 64.
  ModuleImage unpinned = module_pinning(32);
  unpinned.manifest.dispatches[0].required_subgroup_size = 0;
  ASSERT_EQ(unmet_usage(unpinned, rdna3).size(), 1u);
  // A device of exactly that one size needs no subgroupSizeControl.
  EXPECT_TRUE(unmet_usage(module_pinning(32), roomy_device()).empty());

  struct Case {
    const char* what;
    TargetLimits device;
    std::vector<std::string> expected;
  };
  TargetLimits no_control = rdna3;
  no_control.subgroup_size_control = false;
  TargetLimits intel = rdna3;
  intel.min_subgroup_size = 8;
  intel.max_subgroup_size = 16;
  const std::vector<Case> cases = {
      {"no control", no_control, {"requires subgroup size 32", "32..64", "subgroupSizeControl"}},
      {"outside the range", intel, {"requires subgroup size 32", "the device has 8..16"}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> unmet = unmet_usage(module_pinning(32), c.device);
    ASSERT_EQ(unmet.size(), 1u) << c.what;
    EXPECT_NE(unmet[0].find("dispatch 'd0_matmul_coopmat'"), std::string::npos) << unmet[0];
    EXPECT_EQ(unmet[0].find('\n'), std::string::npos) << unmet[0];
    for (const std::string& s : c.expected) EXPECT_NE(unmet[0].find(s), std::string::npos) << c.what << ": " << unmet[0];
  }
  EXPECT_NE(requirements_summary(module_pinning(32).manifest).find("subgroup size 32 (pinned"), std::string::npos);
}

}  // namespace
}  // namespace vkc
