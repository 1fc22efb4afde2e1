// The compiler back end: target profiles, GLSL -> SPIR-V, SPIRV-Tools passes, SPIR-V reflection
// and the shader template library.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "codegen/glsl_compiler.h"
#include "codegen/shader_library.h"
#include "codegen/spirv_tools.h"
#include "codegen/targets.h"
#include "common/test_util.h"
#include "support/error.h"

namespace vkc::codegen {
namespace {

// Runs `f` and returns the vkc::Error message it throws ("" if it does not throw).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::vector<uint32_t> build(const std::string& glsl, const std::string& target = "lavapipe") {
  const TargetLimits& t = find_target(target).limits;
  auto spirv = compile_glsl(glsl, "test_kernel", t);
  validate_spirv(spirv, t, "test_kernel");
  auto opt = optimize_spirv(spirv, t, "test_kernel");
  validate_spirv(opt, t, "test_kernel");
  return opt;
}

const char* kTwoSharedArrays = R"(#version 450
layout(local_size_x = 64, local_size_y = 2, local_size_z = 1) in;
layout(set = 0, binding = 0) buffer Data { float data[]; };
shared float a[256];
shared vec4 b[16];
void main() {
  uint i = gl_LocalInvocationIndex;
  a[i] = data[i];
  b[i % 16] = vec4(data[i + 1]);
  barrier();
  data[i] = a[255 - i] + b[(i + 3) % 16].y;
}
)";

const char* kSpecSizedShared = R"(#version 450
layout(local_size_x_id = 0, local_size_y = 4) in;
layout(constant_id = 3) const uint N = 64;
layout(set = 0, binding = 0) buffer Data { float data[]; };
shared float t[N];
void main() {
  uint i = gl_LocalInvocationIndex;
  t[i % N] = data[i];
  barrier();
  data[i] = t[(i + 1) % N];
}
)";

// ---- Targets ----

TEST(Targets, EveryProfileLoadsInStableOrder) {
  std::vector<std::string> expected{"lavapipe", "nvidia", "amd-rdna3", "amd-cdna3", "intel-xe",
                                    "vulkan-min"};
  EXPECT_EQ(known_targets(), expected);
  for (const std::string& name : expected) {
    const TargetProfile& p = find_target(name);
    EXPECT_EQ(p.limits.name, name);
    EXPECT_FALSE(p.limits.description.empty()) << name;
    EXPECT_FALSE(p.sources.empty()) << name << " must say where its numbers come from";
    EXPECT_TRUE(p.limits.unmet_by(p.limits).empty()) << name;
    // Every profile is at least the spec floor.
    EXPECT_TRUE(find_target("vulkan-min").limits.unmet_by(p.limits).empty()) << name;
  }
}

TEST(Targets, AliasesResolveCaseInsensitively) {
  EXPECT_EQ(find_target("llvmpipe").limits.name, "lavapipe");
  EXPECT_EQ(find_target("H200").limits.name, "nvidia");
  EXPECT_EQ(find_target("hopper").limits.name, "nvidia");
  EXPECT_EQ(find_target("ampere").limits.name, "nvidia");
  EXPECT_EQ(find_target("gfx942").limits.name, "amd-cdna3");
  EXPECT_EQ(find_target("MI300").limits.name, "amd-cdna3");
  EXPECT_EQ(find_target("rdna3").limits.name, "amd-rdna3");
  EXPECT_EQ(find_target("min").limits.name, "vulkan-min");
  EXPECT_EQ(find_target("NVIDIA").limits.name, "nvidia");
  EXPECT_EQ(find_target("nvidia").aliases.size() > 0, true);
}

TEST(Targets, VulkanMinIsExactlyTheSpecMinimums) {
  const TargetLimits& t = find_target("vulkan-min").limits;
  EXPECT_EQ(t.vulkan_version, "1.2");
  EXPECT_EQ(t.max_compute_shared_memory_size, 16384u);
  EXPECT_EQ(t.max_compute_work_group_invocations, 128u);
  EXPECT_EQ(t.max_compute_work_group_size, (std::array<uint32_t, 3>{128, 128, 64}));
  EXPECT_EQ(t.max_compute_work_group_count, (std::array<uint32_t, 3>{65535, 65535, 65535}));
  EXPECT_EQ(t.max_storage_buffer_range, uint64_t{1} << 27);
  EXPECT_EQ(t.max_push_constants_size, 128u);
  EXPECT_EQ(t.min_storage_buffer_offset_alignment, 256u);
  EXPECT_EQ(t.max_per_stage_descriptor_storage_buffers, 4u);
  EXPECT_EQ(t.subgroup_size, 0u);
  EXPECT_FALSE(t.shader_float16 || t.shader_int8 || t.shader_int64 || t.storage_buffer_16bit ||
               t.storage_buffer_8bit || t.subgroup_arithmetic || t.subgroup_shuffle || t.subgroup_ballot ||
               t.cooperative_matrix_nv || t.cooperative_matrix_khr);
  // The struct's defaults are the same floor, so a profile with no limit keys equals vulkan-min.
  TargetLimits defaults;
  EXPECT_EQ(t.max_compute_shared_memory_size, defaults.max_compute_shared_memory_size);
}

TEST(Targets, KeyNumbersOfVendorProfiles) {
  const TargetLimits& nv = find_target("nvidia").limits;
  EXPECT_EQ(nv.max_compute_shared_memory_size, 49152u);
  EXPECT_EQ(nv.max_compute_work_group_size, (std::array<uint32_t, 3>{1024, 1024, 64}));
  EXPECT_EQ(nv.subgroup_size, 32u);
  EXPECT_TRUE(nv.cooperative_matrix_nv);
  EXPECT_EQ(nv.vulkan_version, "1.3");
  const TargetLimits& cdna = find_target("amd-cdna3").limits;
  EXPECT_EQ(cdna.max_compute_shared_memory_size, 65536u);
  EXPECT_EQ(cdna.min_subgroup_size, 64u);
  EXPECT_EQ(cdna.max_subgroup_size, 64u);
  const TargetLimits& rdna = find_target("amd-rdna3").limits;
  EXPECT_EQ(rdna.min_subgroup_size, 32u);
  EXPECT_EQ(rdna.max_subgroup_size, 64u);
  const TargetLimits& lvp = find_target("lavapipe").limits;
  EXPECT_EQ(lvp.max_compute_shared_memory_size, 32768u);
  EXPECT_EQ(lvp.subgroup_size, 8u);
  // lavapipe cannot run code planned for 48 KiB of shared memory.
  auto unmet = nv.unmet_by(lvp);
  ASSERT_FALSE(unmet.empty());
  EXPECT_EQ(unmet[0], "maxComputeSharedMemorySize 32768 < 49152");
}

TEST(Targets, UnknownTargetListsKnownOnes) {
  EXPECT_EQ(error_of([] { find_target("foo"); }),
            "unknown target 'foo' (known: lavapipe, nvidia, amd-rdna3, amd-cdna3, intel-xe, "
            "vulkan-min, host)");
  // `host` is resolved by the CLI through the runtime, never as a profile.
  EXPECT_NE(error_of([] { find_target("host"); }), "");
}

TEST(Targets, ParseRejectsBadProfiles) {
  EXPECT_NE(error_of([] { parse_target_profile("{", "x.json"); }).find("x.json: invalid JSON"),
            std::string::npos);
  EXPECT_EQ(error_of([] { parse_target_profile(R"({"name": "t", "max_shared": 1})", "x.json"); }),
            "x.json: unknown target-limit key 'max_shared'");
  EXPECT_EQ(error_of([] { parse_target_profile(R"({"description": "d"})", "x.json"); }),
            "x.json: target profile has no \"name\"");
  TargetProfile p = parse_target_profile(
      R"({"name": "t", "aliases": ["u"], "sources": {"a": "b"}, "subgroup_size": 16})", "x.json");
  EXPECT_EQ(p.aliases, std::vector<std::string>{"u"});
  EXPECT_EQ(p.sources, std::vector<std::string>{"a: b"});
  EXPECT_EQ(p.limits.subgroup_size, 16u);
  EXPECT_EQ(p.limits.max_compute_shared_memory_size, 16384u);  // absent key: spec minimum
  EXPECT_EQ(p.limits.compute_units, 0u);  // absent key: unknown
  EXPECT_NE(error_of([] { parse_target_profile(R"({"name": "t", "compute_units": -1})", "x.json"); }), "");
}

// compute_units is optional (manifests written before it existed have none) and a hint, never a
// requirement: a module planned for more compute units still runs on a smaller device.
TEST(Targets, ComputeUnitsAreOptionalAndNeverUnmet) {
  for (const std::string& name : known_targets()) {
    const TargetLimits& t = find_target(name).limits;
    if (name == "vulkan-min") {
      EXPECT_EQ(t.compute_units, 0u);  // Vulkan has no such limit
    } else {
      EXPECT_GT(t.compute_units, 0u) << name;
    }
    nlohmann::json j = t;
    TargetLimits back = j.get<TargetLimits>();
    EXPECT_EQ(back.compute_units, t.compute_units) << name;
    j.erase("compute_units");
    EXPECT_EQ(j.get<TargetLimits>().compute_units, 0u) << name;
  }
  TargetLimits big = find_target("nvidia").limits, small = big;
  small.compute_units = 1;
  EXPECT_TRUE(big.unmet_by(small).empty());
}

// vendor, likewise: optional (absent: unknown), round-trips, and never makes a device unfit.
TEST(Targets, VendorIsOptionalAndNeverUnmet) {
  EXPECT_EQ(find_target("nvidia").limits.vendor, Vendor::nvidia);
  EXPECT_EQ(find_target("amd-cdna3").limits.vendor, Vendor::amd);
  EXPECT_EQ(find_target("intel-xe").limits.vendor, Vendor::intel);
  EXPECT_EQ(find_target("lavapipe").limits.vendor, Vendor::mesa);
  EXPECT_EQ(find_target("vulkan-min").limits.vendor, Vendor::unknown);
  for (const std::string& name : known_targets()) {
    const TargetLimits& t = find_target(name).limits;
    nlohmann::json j = t;
    EXPECT_EQ(j.get<TargetLimits>().vendor, t.vendor) << name;
    j.erase("vendor");
    EXPECT_EQ(j.get<TargetLimits>().vendor, Vendor::unknown) << name;
  }
  TargetLimits nv = find_target("nvidia").limits, other = nv;
  other.vendor = Vendor::amd;
  EXPECT_TRUE(nv.unmet_by(other).empty());
}

// ---- Glsl ----

TEST(Glsl, CompilesForEveryVulkanVersion) {
  for (const char* target : {"lavapipe", "vulkan-min", "nvidia"}) {
    auto words = build(kTwoSharedArrays, target);
    ASSERT_GT(words.size(), 5u);
    EXPECT_EQ(words[0], 0x07230203u);
  }
  TargetLimits v11;
  v11.name = "v11";
  v11.vulkan_version = "1.1";
  auto words = compile_glsl(kTwoSharedArrays, "k", v11);
  EXPECT_EQ(words[1], 0x00010300u);  // SPIR-V 1.3 for Vulkan 1.1
  EXPECT_EQ(compile_glsl(kTwoSharedArrays, "k", find_target("vulkan-min").limits)[1], 0x00010500u);
  // Vulkan 1.3 targets are capped at SPIR-V 1.5 (codegen/spirv_env.h).
  EXPECT_EQ(compile_glsl(kTwoSharedArrays, "k", find_target("nvidia").limits)[1], 0x00010500u);
}

TEST(Glsl, CompileErrorIsOneLineNamingTheKernel) {
  std::string msg = error_of([] {
    compile_glsl("#version 450\nlayout(local_size_x = 1) in;\nvoid main() { undeclared = 1; }\n",
                 "broken_kernel", find_target("lavapipe").limits);
  });
  EXPECT_EQ(msg.rfind("internal: kernel 'broken_kernel' failed to compile: ", 0), 0u) << msg;
  EXPECT_NE(msg.find("undeclared"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

// ---- Spirv ----

TEST(Spirv, MeasuresWorkgroupMemory) {
  auto words = build(kTwoSharedArrays);
  EXPECT_EQ(measure_workgroup_memory(words), 256u * 4 + 16u * 16);
  // Unoptimized output measures the same.
  auto raw = compile_glsl(kTwoSharedArrays, "k", find_target("lavapipe").limits);
  EXPECT_EQ(measure_workgroup_memory(raw), 256u * 4 + 16u * 16);
}

TEST(Spirv, MeasuresStructsAndMatrices) {
  auto words = build(R"(#version 450
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer Data { float data[]; };
struct S { float x; vec3 v; int k; };  // 0, 16..28, 28..32 -> 32 bytes, align 16
shared S s[4];
shared mat4 m;
shared bool flags[8];
void main() {
  uint i = gl_LocalInvocationIndex;
  s[i % 4].x = data[i]; s[i % 4].v = vec3(data[i]); s[i % 4].k = int(i);
  m[i % 4] = vec4(data[i]);
  flags[i % 8] = data[i] > 0.0;
  barrier();
  data[i] = s[(i + 1) % 4].v.y + float(s[i % 4].k) + m[(i + 2) % 4].x + (flags[(i + 1) % 8] ? 1.0 : 0.0)
            + s[(i + 3) % 4].x;
}
)");
  EXPECT_EQ(measure_workgroup_memory(words), 4u * 32 + 64 + 8 * 4);
}

TEST(Spirv, SpecializationConstantSizedShared) {
  auto words = build(kSpecSizedShared);
  EXPECT_EQ(measure_workgroup_memory(words), 64u * 4);
  EXPECT_EQ(measure_workgroup_memory(words, {{3, 128}}), 128u * 4);
  EXPECT_EQ(measure_workgroup_memory(words, {{7, 999}}), 64u * 4);  // unrelated id: default
}

TEST(Spirv, SpecConstantExpressionSizedShared) {
  auto words = build(R"(#version 450
layout(local_size_x = 64) in;
layout(constant_id = 1) const uint N = 8;
layout(set = 0, binding = 0) buffer Data { float data[]; };
shared float t[N * 2 + 1];
void main() {
  uint i = gl_LocalInvocationIndex;
  t[i % (N * 2 + 1)] = data[i];
  barrier();
  data[i] = t[(i + 1) % (N * 2 + 1)];
}
)");
  EXPECT_EQ(measure_workgroup_memory(words), (8u * 2 + 1) * 4);
  EXPECT_EQ(measure_workgroup_memory(words, {{1, 100}}), (100u * 2 + 1) * 4);
}

TEST(Spirv, ReadsLiteralLocalSize) {
  auto words = build(kTwoSharedArrays);
  EXPECT_EQ(read_local_size(words), (std::array<uint32_t, 3>{64, 2, 1}));
}

TEST(Spirv, ReadsLocalSizeIdWithSpecOverrides) {
  for (const char* target : {"lavapipe", "vulkan-min"}) {  // WorkgroupSize built-in form
    auto words = build(kSpecSizedShared, target);
    EXPECT_EQ(read_local_size(words), (std::array<uint32_t, 3>{1, 4, 1})) << target;
    EXPECT_EQ(read_local_size(words, {{0, 128}}), (std::array<uint32_t, 3>{128, 4, 1})) << target;
  }
}

TEST(Spirv, ValidationRejectsCorruptedModule) {
  const TargetLimits& t = find_target("lavapipe").limits;
  auto words = build(kTwoSharedArrays);
  // Turn the first OpTypeVoid into an opcode that does not exist (keeping its length).
  bool flipped = false;
  for (size_t i = 5; i < words.size(); i += words[i] >> 16) {
    if ((words[i] & 0xffff) == 19 /* OpTypeVoid */) {
      words[i] = (words[i] & 0xffff0000u) | 0xfffeu;
      flipped = true;
      break;
    }
  }
  ASSERT_TRUE(flipped);
  std::string msg = error_of([&] { validate_spirv(words, t, "bad_kernel"); });
  EXPECT_EQ(msg.rfind("internal: kernel 'bad_kernel' failed SPIR-V validation: ", 0), 0u) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  msg = error_of([&] { optimize_spirv(words, t, "bad_kernel"); });
  EXPECT_EQ(msg.rfind("internal: kernel 'bad_kernel' failed SPIR-V optimization: ", 0), 0u) << msg;
}

TEST(Spirv, ReflectionRejectsGarbage) {
  EXPECT_NE(error_of([] { measure_workgroup_memory({1, 2, 3}); }), "");
  EXPECT_NE(error_of([] { read_local_size({0x07230203u, 0x10000, 0, 10, 0, 0xffff0001u}); }), "");
}

// ---- ShaderLibrary ----

TEST(ShaderLibrary, FindsTemplatesWithOrWithoutExtension) {
  EXPECT_EQ(&shader_source("test_workgroup_memory"), &shader_source("test_workgroup_memory.comp"));
  auto names = shader_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "test_workgroup_memory"), names.end());
  EXPECT_EQ(error_of([] { shader_source("no_such_kernel"); }),
            "internal: no shader template no_such_kernel");
}

TEST(ShaderLibrary, InstantiatesCompilesAndMeasures) {
  std::string glsl = instantiate_shader("test_workgroup_memory",
                                        {{"WG", "128"}, {"TYPE", "vec2"}, {"COUNT", "100"}});
  EXPECT_EQ(glsl.find("${"), std::string::npos);
  auto words = build(glsl);
  EXPECT_EQ(measure_workgroup_memory(words), 100u * 8);
  EXPECT_EQ(read_local_size(words), (std::array<uint32_t, 3>{128, 1, 1}));
}

TEST(ShaderLibrary, MissingAndUnknownKeysThrow) {
  EXPECT_EQ(error_of([] {
              instantiate_shader("test_workgroup_memory", {{"WG", "1"}, {"TYPE", "float"}});
            }),
            "internal: shader template 'test_workgroup_memory': no value for '${COUNT}'");
  EXPECT_EQ(error_of([] {
              instantiate_shader("test_workgroup_memory",
                                 {{"WG", "1"}, {"TYPE", "float"}, {"COUNT", "4"}, {"EXTRA", "x"}});
            }),
            "internal: shader template 'test_workgroup_memory': key 'EXTRA' does not occur in the "
            "template");
  // A value containing "${...}" is inserted literally, not expanded again.
  std::string glsl = instantiate_shader("test_workgroup_memory",
                                        {{"WG", "1"}, {"TYPE", "${TYPE}"}, {"COUNT", "4"}});
  EXPECT_NE(glsl.find("${TYPE}"), std::string::npos);
}

}  // namespace
}  // namespace vkc::codegen
