// The limits and features a kernel plan must respect.
//
// One structure serves both sides: codegen plans against a named profile (targets/*.json) or the
// live device, and the runtime fills the same structure from vkGetPhysicalDevice* to check that
// what a module's dispatches use fits the device it is about to run on (module/device_fit.h).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace vkc {

// The GPU's maker, for kernel configs measured on one vendor's hardware (a tile that wins on
// NVIDIA's register file may spill on another). Names ("nvidia", "amd", "intel", "arm",
// "qualcomm", "mesa" for lavapipe; "" unknown) appear only in profiles, manifests and reports.
enum class Vendor { unknown, nvidia, amd, intel, arm, qualcomm, mesa };
const char* vendor_name(Vendor v);
// The vendor a name stands for; vkc::Error naming the known ones for any other name.
Vendor parse_vendor(const std::string& name);

// The cooperative-matrix products vkc's tensor-core loop runs (shaders/gemm_coopmat.glsl), in the
// order it prefers them: 16x16x16 (NVIDIA, AMD), NVIDIA's 16x8x16, Intel Xe2's 8x16x16 and
// Alchemist's 8x8x16. Its fragments take the first one a target offers (coopmat_loop_shape).
inline constexpr const char* kCoopMatLoopShapes[] = {"16x16x16 f16*f16+f32", "16x8x16 f16*f16+f32",
                                                     "8x16x16 f16*f16+f32", "8x8x16 f16*f16+f32"};
// The one VK_NV_cooperative_matrix is used with (vkc does not read NV's shape query), and the
// one assumed where a target has KHR cooperative matrices but lists no shapes.
inline constexpr const char* kCoopMatLoopShape = kCoopMatLoopShapes[0];

// Whether `shape` is a well-formed cooperative-matrix shape name ("16x8x32 i8*i8+i32",
// "16x16x16 f16*f16+f16->f32"); TargetLimits::cooperative_matrix_shapes holds only such names.
bool is_coopmat_shape_name(const std::string& shape);

struct TargetLimits {
  std::string name;                  // profile name ("nvidia", "lavapipe", "host", ...)
  std::string description;           // device or class of devices it stands for
  std::string vulkan_version = "1.2";  // SPIR-V target environment: "1.1", "1.2", "1.3"

  uint32_t max_compute_shared_memory_size = 16384;
  uint32_t max_compute_work_group_invocations = 128;
  std::array<uint32_t, 3> max_compute_work_group_size{128, 128, 64};
  std::array<uint32_t, 3> max_compute_work_group_count{65535, 65535, 65535};
  uint32_t subgroup_size = 0;        // 0: unknown (kernels must not depend on it)
  uint32_t min_subgroup_size = 0;
  uint32_t max_subgroup_size = 0;
  // A compute pipeline can be created with one subgroup size of [min, max]
  // (VkPipelineShaderStageRequiredSubgroupSizeCreateInfo): the subgroupSizeControl feature
  // (VK_EXT_subgroup_size_control or Vulkan 1.3) with compute in requiredSubgroupSizeStages.
  // Where the size varies (AMD wave32/wave64, Intel SIMD8/16/32), a kernel that relies on one
  // size pins it through this (DispatchDesc::required_subgroup_size).
  bool subgroup_size_control = false;
  uint64_t max_storage_buffer_range = 134217728;  // 2^27, the Vulkan minimum
  // maxMemoryAllocationSize: the largest single allocation. The range split keeps every binding
  // within it, so that storage above it can be held in segments (module/storage_segments.h).
  // 0: unknown, not planned for (a module whose binding exceeds the device's is refused at load).
  uint64_t max_memory_allocation_size = 0;
  uint32_t max_push_constants_size = 128;
  uint32_t min_storage_buffer_offset_alignment = 256;
  uint32_t max_per_stage_descriptor_storage_buffers = 4;
  // SMs (NVIDIA), CUs (AMD), Xe-cores (Intel) or CPU threads (lavapipe): how many workgroups run
  // side by side. Planners size grids from it (e.g. split-K for convs whose output is too small to
  // fill the device); it is a performance hint, never a requirement, so unmet_by ignores it.
  // 0: unknown (no Vulkan limit reports it); planners then plan as if any grid fills the device.
  uint32_t compute_units = 0;
  // Unknown: only configs that hold everywhere. Like compute_units a performance hint, never a
  // requirement: unmet_by ignores it.
  Vendor vendor = Vendor::unknown;

  bool shader_float16 = false;
  bool shader_int8 = false;
  bool shader_int64 = false;
  bool storage_buffer_16bit = false;
  bool storage_buffer_8bit = false;
  bool subgroup_arithmetic = false;
  bool subgroup_shuffle = false;
  bool subgroup_ballot = false;
  // VK_NV_cooperative_matrix with a 16x16x16 float16 x float16 + float32 subgroup product (and the
  // Vulkan memory model its shaders declare): the fp16 GEMM kernels' tensor-core path.
  bool cooperative_matrix_nv = false;
  // VK_KHR_cooperative_matrix with a float16 x float16 + float32 subgroup product of
  // kCoopMatLoopShapes, for vkc's kernels to use. The live device derives it from
  // cooperative_matrix_shapes (one query); a profile that sets it must list one of those shapes
  // (from_json refuses one that does not). It may be false with the shapes listed: KHR turned off
  // (vkc_bench --tensor-cores nv, tests).
  bool cooperative_matrix_khr = false;
  // Every subgroup-scope product VK_KHR_cooperative_matrix offers, as
  // vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR reports it, named "MxNxK A*B+C" (component
  // types f16, f32, bf16, fp8e4m3, fp8e5m2, i8, u8, i32, u32, ...; "->R" where the result type is
  // not C's): "16x16x16 f16*f16+f32". Recorded for every vendor; vkc's fp16 loop uses one of
  // kCoopMatLoopShapes, the others (bf16, fp8, ...) are not used yet. Empty: not
  // known (a profile without the key, a device without the extension). Like compute_units a fact
  // for planning, never a requirement: unmet_by ignores it.
  std::vector<std::string> cooperative_matrix_shapes;
  bool offers_cooperative_matrix_shape(const std::string& shape) const;
  // The shape vkc's tensor-core loop runs on this target: kCoopMatLoopShape with NV only, or with
  // KHR and no shapes listed; else the first of kCoopMatLoopShapes the target offers. "" where
  // the loop cannot run (no cooperative matrices, or none of those shapes).
  std::string coopmat_loop_shape() const;

  // Names of limits in which `device` falls short of this profile, e.g.
  // "maxComputeSharedMemorySize 32768 < 49152": a comparison of profiles (every profile must meet
  // vulkan-min). A module is not judged by it but by what its dispatches use (module/device_fit.h).
  std::vector<std::string> unmet_by(const TargetLimits& device) const;
};

void to_json(nlohmann::json& j, const TargetLimits& t);
void from_json(const nlohmann::json& j, TargetLimits& t);

}  // namespace vkc
