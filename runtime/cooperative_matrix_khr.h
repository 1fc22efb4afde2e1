// VK_KHR_cooperative_matrix's Vulkan API, declared here because Debian 12's Vulkan headers
// (1.3.239) predate it (issue 22). The values are the Vulkan registry's: extension number 507, so
// its structure types are 1000506000 + n; component types and scopes are those of the NV
// extension, which KHR kept.
//
// AMD (RDNA3+) and Intel (Xe2) expose only this extension; NVIDIA exposes both and vkc prefers KHR
// where the device offers the shape vkc's tensor-core loop uses.
#pragma once

#include <volk.h>

#include <cstdint>
#include <string>
#include <vector>

namespace vkc::rt::coopmat_khr {

inline constexpr const char* kExtensionName = "VK_KHR_cooperative_matrix";
inline constexpr VkStructureType kFeaturesType = VkStructureType(1000506000);
inline constexpr VkStructureType kPropertiesType = VkStructureType(1000506001);

// VkPhysicalDeviceCooperativeMatrixFeaturesKHR
struct Features {
  VkStructureType sType = kFeaturesType;
  void* pNext = nullptr;
  VkBool32 cooperativeMatrix = VK_FALSE;
  VkBool32 cooperativeMatrixRobustBufferAccess = VK_FALSE;
};

// VkComponentTypeKHR (the values vkc reads)
enum ComponentType : uint32_t { kFloat16 = 0, kFloat32 = 1, kFloat64 = 2, kSint8 = 3, kSint16 = 4, kSint32 = 5,
                                kSint64 = 6, kUint8 = 7, kUint16 = 8, kUint32 = 9, kUint64 = 10 };
// Newer component types a device may report (VK_KHR_shader_bfloat16, VK_EXT_shader_float8): named
// in the shapes vkc records, never used by its kernels.
inline constexpr uint32_t kBfloat16 = 1000141000, kFloat8E4M3 = 1000491002, kFloat8E5M2 = 1000491003;
inline constexpr uint32_t kScopeSubgroup = 3;  // VkScopeKHR

// VkCooperativeMatrixPropertiesKHR: one product shape the device offers.
struct Properties {
  VkStructureType sType = kPropertiesType;
  void* pNext = nullptr;
  uint32_t MSize = 0, NSize = 0, KSize = 0;
  uint32_t AType = 0, BType = 0, CType = 0, ResultType = 0;
  VkBool32 saturatingAccumulation = VK_FALSE;
  uint32_t scope = 0;
};

// vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR, read through vkGetInstanceProcAddr. Empty when
// the instance has no such entry point (an old loader).
std::vector<Properties> offered_shapes(VkInstance instance, VkPhysicalDevice device);

// Whether one of the shapes vkc's tensor-core loop runs is offered (kCoopMatLoopShapes: float16 x
// float16 + float32 at subgroup scope, 16x16x16, 16x8x16, 8x16x16 or 8x8x16).
bool offers_loop_shape(const std::vector<Properties>& shapes);

// "16x16x16 f16*f16+f32" for reports and --list-devices.
std::string shape_name(const Properties& p);

}  // namespace vkc::rt::coopmat_khr
