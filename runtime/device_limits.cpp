// What a physical device offers, and the TargetLimits codegen plans against.
#include <algorithm>
#include <thread>
#include <vector>

#include "runtime/context_internal.h"
#include "runtime/cooperative_matrix_khr.h"
#include "runtime/vk_util.h"
#include "support/error.h"

namespace vkc::rt {

DeviceCapabilities query_capabilities(VkInstance instance, VkPhysicalDevice device, uint32_t instance_api) {
  DeviceCapabilities caps;
  vkGetPhysicalDeviceProperties(device, &caps.properties);
  caps.effective_api = std::min(instance_api, caps.properties.apiVersion);

  uint32_t count = 0;
  vk_check(vkEnumerateDeviceExtensionProperties(device, nullptr, &count, nullptr),
           "vkEnumerateDeviceExtensionProperties");
  std::vector<VkExtensionProperties> exts(count);
  vk_check(vkEnumerateDeviceExtensionProperties(device, nullptr, &count, exts.data()),
           "vkEnumerateDeviceExtensionProperties");
  for (uint32_t i = 0; i < count; ++i) caps.extensions.insert(exts[i].extensionName);

  const bool v12 = caps.effective_api >= VK_API_VERSION_1_2;
  // Feature structures may only be chained when core or their extension provides them.
  VkPhysicalDeviceFeatures2 features = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  VkPhysicalDevice16BitStorageFeatures storage16 = vk_struct<VkPhysicalDevice16BitStorageFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES);
  VkPhysicalDevice8BitStorageFeatures storage8 = vk_struct<VkPhysicalDevice8BitStorageFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES);
  VkPhysicalDeviceShaderFloat16Int8Features f16i8 = vk_struct<VkPhysicalDeviceShaderFloat16Int8Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES);
  VkPhysicalDeviceSubgroupSizeControlFeaturesEXT size_control = vk_struct<VkPhysicalDeviceSubgroupSizeControlFeaturesEXT>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES_EXT);
  void** tail = &features.pNext;
  auto chain = [&](auto& s) {
    *tail = &s;
    tail = &s.pNext;
  };
  chain(storage16);  // core in 1.1
  if (v12 || caps.has(VK_KHR_8BIT_STORAGE_EXTENSION_NAME)) chain(storage8);
  if (v12 || caps.has(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME)) chain(f16i8);
  if (caps.has(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME) || caps.effective_api >= VK_API_VERSION_1_3)
    chain(size_control);
  VkPhysicalDeviceRobustness2FeaturesEXT robustness2 = vk_struct<VkPhysicalDeviceRobustness2FeaturesEXT>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ROBUSTNESS_2_FEATURES_EXT);
  if (caps.has(VK_EXT_ROBUSTNESS_2_EXTENSION_NAME)) chain(robustness2);
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coop = vk_struct<VkPhysicalDeviceCooperativeMatrixFeaturesNV>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV);
  VkPhysicalDeviceVulkanMemoryModelFeatures memory_model = vk_struct<VkPhysicalDeviceVulkanMemoryModelFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES);
  coopmat_khr::Features coop_khr;
  const bool has_memory_model = v12 || caps.has(VK_KHR_VULKAN_MEMORY_MODEL_EXTENSION_NAME);
  const bool nv_offered = caps.has(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME) && has_memory_model;
  const bool khr_offered = caps.has(coopmat_khr::kExtensionName) && has_memory_model;
  if (nv_offered) chain(coop);
  if (khr_offered) chain(coop_khr);
  if (nv_offered || khr_offered) chain(memory_model);
  vkGetPhysicalDeviceFeatures2(device, &features);
  if (coop_khr.cooperativeMatrix && memory_model.vulkanMemoryModel) {
    std::vector<coopmat_khr::Properties> shapes = coopmat_khr::offered_shapes(instance, device);
    caps.cooperative_matrix_khr = coopmat_khr::offers_loop_shape(shapes);
    for (const coopmat_khr::Properties& p : shapes) caps.cooperative_matrix_khr_shapes.push_back(coopmat_khr::shape_name(p));
  }
  if (coop.cooperativeMatrix && memory_model.vulkanMemoryModel && vkGetPhysicalDeviceCooperativeMatrixPropertiesNV) {
    uint32_t shapes = 0;
    vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(device, &shapes, nullptr);
    std::vector<VkCooperativeMatrixPropertiesNV> offered(shapes, vk_struct<VkCooperativeMatrixPropertiesNV>(VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV));
    if (shapes) vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(device, &shapes, offered.data());
    for (const VkCooperativeMatrixPropertiesNV& m : offered)
      caps.cooperative_matrix_nv |= m.MSize == 16 && m.NSize == 16 && m.KSize == 16 &&
                                    m.AType == VK_COMPONENT_TYPE_FLOAT16_NV && m.BType == VK_COMPONENT_TYPE_FLOAT16_NV &&
                                    m.CType == VK_COMPONENT_TYPE_FLOAT32_NV && m.DType == VK_COMPONENT_TYPE_FLOAT32_NV &&
                                    m.scope == VK_SCOPE_SUBGROUP_NV;
  }
  {
    // The device's identity across processes: the cooperative-matrix gate keys its verdicts by it.
    VkPhysicalDeviceIDProperties id = vk_struct<VkPhysicalDeviceIDProperties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES);
    VkPhysicalDeviceProperties2 props = vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
    props.pNext = &id;
    vkGetPhysicalDeviceProperties2(device, &props);
    static const char* hex = "0123456789abcdef";
    for (uint8_t b : id.deviceUUID) caps.device_uuid += std::string{hex[b >> 4], hex[b & 15]};
  }
  caps.robust_buffer_access = features.features.robustBufferAccess;
  caps.robust_buffer_access2 = robustness2.robustBufferAccess2;
  if (caps.robust_buffer_access2) {
    VkPhysicalDeviceRobustness2PropertiesEXT r2 = vk_struct<VkPhysicalDeviceRobustness2PropertiesEXT>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ROBUSTNESS_2_PROPERTIES_EXT);
    VkPhysicalDeviceProperties2 props = vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
    props.pNext = &r2;
    vkGetPhysicalDeviceProperties2(device, &props);
    caps.robust_storage_alignment = r2.robustStorageBufferAccessSizeAlignment;
  }

  caps.shader_int64 = features.features.shaderInt64;
  caps.storage_16bit = storage16.storageBuffer16BitAccess;
  caps.storage_8bit = storage8.storageBuffer8BitAccess;
  caps.shader_float16 = f16i8.shaderFloat16;
  caps.shader_int8 = f16i8.shaderInt8;
  caps.subgroup_size_control = size_control.subgroupSizeControl;
  caps.compute_full_subgroups = size_control.computeFullSubgroups;

  if (v12 || caps.has(VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME)) {
    VkPhysicalDeviceDriverProperties driver = vk_struct<VkPhysicalDeviceDriverProperties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES);
    VkPhysicalDeviceProperties2 props = vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
    props.pNext = &driver;
    vkGetPhysicalDeviceProperties2(device, &props);
    caps.driver = cat(driver.driverName, " ", driver.driverInfo);
  } else {
    uint32_t v = caps.properties.driverVersion;
    caps.driver = cat("driver version ", v >> 22, ".", (v >> 12) & 0x3ff, ".", v & 0xfff);
  }
  return caps;
}

namespace {

const char* device_type_name(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}

std::string version_string(uint32_t api) {
  uint32_t minor = std::min<uint32_t>(VK_API_VERSION_MINOR(api), 3);
  if (VK_API_VERSION_MAJOR(api) > 1) minor = 3;
  return cat("1.", std::max<uint32_t>(minor, 1));
}

// Workgroups the device runs side by side (TargetLimits::compute_units). Core Vulkan has no such
// limit; two vendor extensions report it exactly, lavapipe runs one workgroup per CPU thread, and
// anything else gets an estimate by device type. It only steers grid sizes (split-K), so a wrong
// estimate costs speed, never correctness.
uint32_t query_compute_units(VkPhysicalDevice device, const DeviceCapabilities& caps) {
  if (caps.has("VK_NV_shader_sm_builtins")) {
    VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm = vk_struct<VkPhysicalDeviceShaderSMBuiltinsPropertiesNV>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV);
    VkPhysicalDeviceProperties2 props = vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
    props.pNext = &sm;
    vkGetPhysicalDeviceProperties2(device, &props);
    if (sm.shaderSMCount > 0) return sm.shaderSMCount;
  }
  if (caps.has("VK_AMD_shader_core_properties")) {
    VkPhysicalDeviceShaderCorePropertiesAMD core = vk_struct<VkPhysicalDeviceShaderCorePropertiesAMD>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD);
    VkPhysicalDeviceProperties2 props = vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
    props.pNext = &core;
    vkGetPhysicalDeviceProperties2(device, &props);
    uint64_t cus = uint64_t(core.shaderEngineCount) * core.shaderArraysPerEngineCount * core.computeUnitsPerShaderArray;
    if (cus > 0 && cus <= UINT32_MAX) return uint32_t(cus);
  }
  switch (caps.properties.deviceType) {
    // llvmpipe's thread pool has one thread per CPU (LP_NUM_THREADS overrides it).
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return std::max(1u, std::thread::hardware_concurrency());
    // Estimates for GPUs that report nothing (Intel, Arm, Qualcomm, ...): a discrete GPU of the
    // Arc A770 class has 32 Xe-cores; integrated GPUs have a handful of cores.
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 32;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 8;
    default: return 8;
  }
}

// TargetLimits::vendor from the PCI (or Khronos) vendor ID.
Vendor vendor_of(uint32_t id) {
  switch (id) {
    case 0x10DE: return Vendor::nvidia;
    case 0x1002: return Vendor::amd;
    case 0x8086: return Vendor::intel;
    case 0x13B5: return Vendor::arm;
    case 0x5143: return Vendor::qualcomm;
    case VK_VENDOR_ID_MESA: return Vendor::mesa;
    default: return Vendor::unknown;  // any other PCI ID: no vendor-specific configs
  }
}

}  // namespace

DeviceInfo make_device_info(uint32_t index, const DeviceCapabilities& caps) {
  DeviceInfo info;
  info.index = index;
  info.name = caps.properties.deviceName;
  info.type = device_type_name(caps.properties.deviceType);
  info.vendor_id = caps.properties.vendorID;
  info.device_id = caps.properties.deviceID;
  info.driver = caps.driver;
  info.api_version = caps.properties.apiVersion;
  info.tensor_cores = caps.cooperative_matrix_khr ? "KHR" : caps.cooperative_matrix_nv ? "NV" : "";
  info.cooperative_matrix_shapes = caps.cooperative_matrix_khr_shapes;
  return info;
}

TargetLimits query_limits(VkPhysicalDevice device, const DeviceCapabilities& caps) {
  const VkPhysicalDeviceLimits& l = caps.properties.limits;
  TargetLimits t;
  t.name = "host";
  t.description = cat(caps.properties.deviceName, " (", caps.driver, ")");
  // The SPIR-V environment must be one the instance/device pair may use, capped at 1.3.
  t.vulkan_version = version_string(caps.effective_api);
  t.max_compute_shared_memory_size = l.maxComputeSharedMemorySize;
  t.max_compute_work_group_invocations = l.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) {
    t.max_compute_work_group_size[i] = l.maxComputeWorkGroupSize[i];
    t.max_compute_work_group_count[i] = l.maxComputeWorkGroupCount[i];
  }
  t.max_storage_buffer_range = l.maxStorageBufferRange;
  t.max_push_constants_size = l.maxPushConstantsSize;
  t.min_storage_buffer_offset_alignment = uint32_t(l.minStorageBufferOffsetAlignment);
  t.max_per_stage_descriptor_storage_buffers = l.maxPerStageDescriptorStorageBuffers;
  t.compute_units = query_compute_units(device, caps);
  t.vendor = vendor_of(caps.properties.vendorID);

  VkPhysicalDeviceProperties2 props = vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
  VkPhysicalDeviceMaintenance3Properties m3 =
      vk_struct<VkPhysicalDeviceMaintenance3Properties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES);
  VkPhysicalDeviceSubgroupProperties subgroup = vk_struct<VkPhysicalDeviceSubgroupProperties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES);
  VkPhysicalDeviceSubgroupSizeControlPropertiesEXT size_control = vk_struct<VkPhysicalDeviceSubgroupSizeControlPropertiesEXT>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES_EXT);
  props.pNext = &subgroup;
  const bool has_size_control =
      caps.has(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME) || caps.effective_api >= VK_API_VERSION_1_3;
  if (has_size_control) subgroup.pNext = &size_control;
  // maintenance3 is core in Vulkan 1.1, which every device vkc runs on has.
  (has_size_control ? size_control.pNext : subgroup.pNext) = &m3;
  vkGetPhysicalDeviceProperties2(device, &props);
  t.max_memory_allocation_size = m3.maxMemoryAllocationSize;
  t.subgroup_size = subgroup.subgroupSize;
  t.min_subgroup_size = has_size_control ? size_control.minSubgroupSize : subgroup.subgroupSize;
  t.max_subgroup_size = has_size_control ? size_control.maxSubgroupSize : subgroup.subgroupSize;
  t.subgroup_size_control = has_size_control && caps.subgroup_size_control &&
                            (size_control.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT);
  const bool compute_subgroups = subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT;
  t.subgroup_arithmetic =
      compute_subgroups && (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT);
  t.subgroup_shuffle = compute_subgroups && (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT);
  t.subgroup_ballot = compute_subgroups && (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_BALLOT_BIT);

  t.shader_float16 = caps.shader_float16;
  t.shader_int8 = caps.shader_int8;
  t.shader_int64 = caps.shader_int64;
  t.storage_buffer_16bit = caps.storage_16bit;
  t.storage_buffer_8bit = caps.storage_8bit;
  t.cooperative_matrix_nv = caps.cooperative_matrix_nv;
  t.cooperative_matrix_khr = caps.cooperative_matrix_khr;
  // The subgroup-scope shapes (the others are named with their scope, which no kernel uses).
  for (const std::string& shape : caps.cooperative_matrix_khr_shapes)
    if (is_coopmat_shape_name(shape)) t.cooperative_matrix_shapes.push_back(shape);
  return t;
}

}  // namespace vkc::rt
