// The named target profiles (targets/*.json): every file loads, names and aliases resolve, the
// numbers the planners rely on are right, and malformed profiles are refused with one-line errors.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/test_util.h"
#include "module/target_profiles.h"

namespace vkc {
namespace {

using test::error_of;

TEST(Targets, EveryProfileLoadsInStableOrder) {
  std::vector<std::string> expected{"lavapipe", "nvidia", "amd-rdna3", "amd-rdna4", "amd-cdna3", "intel-xe",
                                    "intel-alchemist", "intel-xe2", "vulkan-min"};
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

// The cooperative-matrix shapes each driver reports (issue 22): cooperative_matrix_khr is whether
// the loop's 16x16x16 f16*f16+f32 is among them, checked for every profile that lists any.
TEST(Targets, CooperativeMatrixShapes) {
  for (const std::string& name : known_targets()) {
    const TargetLimits& t = find_target(name).limits;
    for (const std::string& s : t.cooperative_matrix_shapes) EXPECT_TRUE(is_coopmat_shape_name(s)) << name << ": " << s;
    if (!t.cooperative_matrix_shapes.empty()) {  // the profiles turn nothing off
      bool loop_shape = false;
      for (const char* s : kCoopMatLoopShapes) loop_shape |= t.offers_cooperative_matrix_shape(s);
      EXPECT_EQ(t.cooperative_matrix_khr, loop_shape) << name;
    }
  }
  const TargetLimits& nv = find_target("nvidia").limits;
  for (const char* s : {"16x16x16 f16*f16+f32", "16x8x16 f16*f16+f32", "16x8x8 f16*f16+f32", "16x16x32 i8*i8+i32",
                        "16x8x32 i8*i8+i32"})
    EXPECT_TRUE(nv.offers_cooperative_matrix_shape(s)) << s;
  const TargetLimits& rdna3 = find_target("rdna3").limits;
  EXPECT_EQ(rdna3.cooperative_matrix_shapes, (std::vector<std::string>{"16x16x16 f16*f16+f32", "16x16x16 i8*i8+i32"}));
  EXPECT_TRUE(rdna3.subgroup_size_control);
  const TargetLimits& rdna4 = find_target("gfx1201").limits;
  EXPECT_TRUE(rdna4.cooperative_matrix_khr);
  EXPECT_TRUE(rdna4.offers_cooperative_matrix_shape("16x16x16 bf16*bf16+f32"));
  EXPECT_TRUE(rdna4.offers_cooperative_matrix_shape("16x16x16 fp8e4m3*fp8e4m3+f32"));
  const TargetLimits& xe2 = find_target("battlemage").limits;
  EXPECT_TRUE(xe2.cooperative_matrix_khr);  // the loop runs 8x16x16 fragments
  EXPECT_EQ(xe2.cooperative_matrix_shapes, (std::vector<std::string>{"8x16x16 f16*f16+f32"}));
  EXPECT_EQ(xe2.coopmat_loop_shape(), "8x16x16 f16*f16+f32");
  EXPECT_EQ(xe2.min_subgroup_size, 16u);
  const TargetLimits& alchemist = find_target("alchemist").limits;
  EXPECT_EQ(alchemist.coopmat_loop_shape(), "8x8x16 f16*f16+f32");
  EXPECT_EQ(alchemist.min_subgroup_size, 8u);
  EXPECT_EQ(nv.coopmat_loop_shape(), "16x16x16 f16*f16+f32");
  EXPECT_EQ(find_target("intel-xe").limits.coopmat_loop_shape(), "");
  EXPECT_TRUE(find_target("vulkan-min").limits.cooperative_matrix_shapes.empty());
  // Malformed names, and a bool that contradicts the list, are refused in one line.
  EXPECT_NE(error_of([] { parse_target_profile(R"({"name": "x", "cooperative_matrix_shapes": ["16x16 f16"]})", "x.json"); })
                .find("'16x16 f16' is not of the form"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_target_profile(R"({"name": "x", "cooperative_matrix_khr": true,
                                       "cooperative_matrix_shapes": ["8x32x16 f16*f16+f32", "16x16x16 i8*i8+i32"]})", "x.json");
            }).find("cooperative_matrix_khr is true but cooperative_matrix_shapes lists none of the float16 shapes"),
            std::string::npos);
  // Round trip through a manifest's target.
  nlohmann::json j = rdna3;
  TargetLimits back = j.get<TargetLimits>();
  EXPECT_EQ(back.cooperative_matrix_shapes, rdna3.cooperative_matrix_shapes);
  EXPECT_TRUE(back.subgroup_size_control);
}

TEST(Targets, UnknownTargetListsKnownOnes) {
  EXPECT_EQ(error_of([] { find_target("foo"); }),
            "unknown target 'foo' (known: lavapipe, nvidia, amd-rdna3, amd-rdna4, amd-cdna3, intel-xe, "
            "intel-alchemist, intel-xe2, vulkan-min, host)");
  // `host` is resolved by the CLI through the runtime, never as a profile.
  EXPECT_NE(error_of([] { find_target("host"); }), "(no error)");
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
  EXPECT_NE(error_of([] { parse_target_profile(R"({"name": "t", "compute_units": -1})", "x.json"); }), "(no error)");
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

}  // namespace
}  // namespace vkc
