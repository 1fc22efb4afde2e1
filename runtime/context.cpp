// rt::Context: instance, chosen physical device, logical device with one compute queue.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "module/cache_dir.h"
#include "runtime/context_internal.h"
#include "runtime/cooperative_matrix_khr.h"
#include "runtime/vk_util.h"
#include "support/error.h"

namespace vkc::rt {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// A compute-capable family; a compute-only one (async compute) is preferred because it does not
// compete with graphics work.
uint32_t pick_queue_family(VkPhysicalDevice device, uint32_t* timestamp_bits, const std::string& name) {
  uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(device, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(device, &count, families.data());
  int best = -1;
  for (uint32_t i = 0; i < count; ++i) {
    if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || families[i].queueCount == 0) continue;
    bool compute_only = !(families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT);
    if (best < 0 || (compute_only && (families[best].queueFlags & VK_QUEUE_GRAPHICS_BIT))) best = int(i);
  }
  check(best >= 0, "Vulkan device '", name, "' has no compute queue");
  *timestamp_bits = families[best].timestampValidBits;
  return uint32_t(best);
}

}  // namespace

Context::Impl::~Impl() {
  std::vector<std::string> before = log.messages();
  if (device) {
    vk.vkDeviceWaitIdle(device);
    vk.vkDestroyDevice(device, nullptr);
  }
  // Messages raised by the teardown itself (objects still alive: a leak) have no execute() left
  // to report them, so they go to stderr.
  std::vector<std::string> after = log.messages();
  for (size_t i = before.size(); i < after.size(); ++i) std::fprintf(stderr, "vkc: at shutdown: %s\n", after[i].c_str());
  destroy_instance(instance);
}

Context::Context(ContextOptions options) : impl_(std::make_unique<Impl>()) {
  Impl& c = *impl_;
  c.host_copy.set_threads(copy_threads_from_env());
  std::string from_env = options.validation_from_env ? env("VKC_VALIDATION") : "";
  bool gpu_assisted = options.gpu_assisted_validation || from_env == "gpu";
  c.validation = options.validation || gpu_assisted || from_env == "1";
  c.instance = create_instance(c.validation ? &c.log : nullptr, gpu_assisted);

  uint32_t count = 0;
  vk_check(vkEnumeratePhysicalDevices(c.instance.instance, &count, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> physical(count);
  vk_check(vkEnumeratePhysicalDevices(c.instance.instance, &count, physical.data()), "vkEnumeratePhysicalDevices");
  std::vector<DeviceCapabilities> caps;
  std::vector<DeviceInfo> infos;
  for (uint32_t i = 0; i < count; ++i) {
    caps.push_back(query_capabilities(c.instance.instance, physical[i], c.instance.api_version));
    infos.push_back(make_device_info(i, caps.back()));
  }
  uint32_t chosen = choose_device(infos, options.device.empty() ? env("VKC_DEVICE") : options.device);
  c.physical = physical[chosen];
  c.caps = caps[chosen];
  c.info = infos[chosen];
  c.queue_family = pick_queue_family(c.physical, &c.timestamp_valid_bits, c.info.name);
  vkGetPhysicalDeviceMemoryProperties(c.physical, &c.memory);
  {
    // Storage buffers live in device-local memory where there is any (runtime/memory.cpp).
    uint64_t local = 0, largest = 0;
    for (uint32_t h = 0; h < c.memory.memoryHeapCount; ++h) {
      if (c.memory.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) local += c.memory.memoryHeaps[h].size;
      largest = std::max<uint64_t>(largest, c.memory.memoryHeaps[h].size);
    }
    c.device_heap_bytes = local ? local : largest;
    VkPhysicalDeviceMaintenance3Properties m3 =
        vk_struct<VkPhysicalDeviceMaintenance3Properties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES);
    VkPhysicalDeviceProperties2 props = vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
    props.pNext = &m3;
    vkGetPhysicalDeviceProperties2(c.physical, &props);
    c.max_allocation_bytes = m3.maxMemoryAllocationSize;
  }
  if (options.max_allocation_bytes != 0 &&
      (c.max_allocation_bytes == 0 || options.max_allocation_bytes < c.max_allocation_bytes))
    c.max_allocation_bytes = options.max_allocation_bytes;

  // Enable what the device has among the features generated kernels may use.
  const DeviceCapabilities& d = c.caps;
  const bool v12 = d.effective_api >= VK_API_VERSION_1_2;
  std::vector<const char*> extensions;
  auto enable_extension = [&](const char* name) {
    if (d.has(name)) extensions.push_back(name);
  };
  VkPhysicalDeviceFeatures2 features = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  features.features.shaderInt64 = d.shader_int64;
  VkPhysicalDevice16BitStorageFeatures storage16 = vk_struct<VkPhysicalDevice16BitStorageFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES);
  storage16.storageBuffer16BitAccess = d.storage_16bit;
  VkPhysicalDevice8BitStorageFeatures storage8 = vk_struct<VkPhysicalDevice8BitStorageFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES);
  storage8.storageBuffer8BitAccess = d.storage_8bit;
  VkPhysicalDeviceShaderFloat16Int8Features f16i8 = vk_struct<VkPhysicalDeviceShaderFloat16Int8Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES);
  f16i8.shaderFloat16 = d.shader_float16;
  f16i8.shaderInt8 = d.shader_int8;
  VkPhysicalDeviceSubgroupSizeControlFeaturesEXT size_control = vk_struct<VkPhysicalDeviceSubgroupSizeControlFeaturesEXT>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES_EXT);
  size_control.subgroupSizeControl = d.subgroup_size_control;
  size_control.computeFullSubgroups = d.compute_full_subgroups;
  void** tail = &features.pNext;
  auto chain = [&](auto& s) {
    *tail = &s;
    tail = &s.pNext;
  };
  chain(storage16);
  if (d.storage_8bit) {
    if (!v12) enable_extension(VK_KHR_8BIT_STORAGE_EXTENSION_NAME);
    chain(storage8);
  }
  if (d.shader_float16 || d.shader_int8) {
    if (!v12) enable_extension(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
    chain(f16i8);
  }
  if (d.subgroup_size_control) {
    if (d.effective_api < VK_API_VERSION_1_3) enable_extension(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
    chain(size_control);
  }
  // Robustness on request: robustBufferAccess2 needs robustBufferAccess enabled with it.
  VkPhysicalDeviceRobustness2FeaturesEXT robustness2 = vk_struct<VkPhysicalDeviceRobustness2FeaturesEXT>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ROBUSTNESS_2_FEATURES_EXT);
  bool robust = options.robust_buffer_access || env("VKC_ROBUST") == "1";
  if (robust) {
    check(d.robust_buffer_access, "robust buffer access requested but device '", c.info.name,
          "' does not offer robustBufferAccess");
    features.features.robustBufferAccess = VK_TRUE;
    c.robustness = Robustness::BufferAccess;
    if (d.robust_buffer_access2) {
      enable_extension(VK_EXT_ROBUSTNESS_2_EXTENSION_NAME);
      robustness2.robustBufferAccess2 = VK_TRUE;
      chain(robustness2);
      c.robustness = Robustness::BufferAccess2;
    }
  }
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executable_info =
      vk_struct<VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR>(
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR);
  if ((options.pipeline_statistics || env("VKC_PIPELINE_STATS") == "1") &&
      d.has(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME)) {
    enable_extension(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    executable_info.pipelineExecutableInfo = VK_TRUE;
    chain(executable_info);
    c.pipeline_statistics = true;
  }
  // The fp16 GEMM kernels' cooperative matrices, and the memory model their SPIR-V declares.
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coop = vk_struct<VkPhysicalDeviceCooperativeMatrixFeaturesNV>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV);
  VkPhysicalDeviceVulkanMemoryModelFeatures memory_model = vk_struct<VkPhysicalDeviceVulkanMemoryModelFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES);
  // Both extensions where both are usable: a module compiled for another device (or an offline
  // profile) may use either form, and the device fit check (module/device_fit.h) reads the limits.
  coopmat_khr::Features coop_khr;
  if (d.cooperative_matrix_nv) {
    enable_extension(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
    coop.cooperativeMatrix = VK_TRUE;
    chain(coop);
  }
  if (d.cooperative_matrix_khr) {
    enable_extension(coopmat_khr::kExtensionName);
    coop_khr.cooperativeMatrix = VK_TRUE;
    chain(coop_khr);
  }
  if (d.cooperative_matrix_nv || d.cooperative_matrix_khr) {
    if (!v12) enable_extension(VK_KHR_VULKAN_MEMORY_MODEL_EXTENSION_NAME);
    memory_model.vulkanMemoryModel = VK_TRUE;
    chain(memory_model);
  }
  // Required by the spec whenever the device advertises it (non-conformant layered drivers).
  enable_extension("VK_KHR_portability_subset");

  float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info = vk_struct<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
  queue_info.queueFamilyIndex = c.queue_family;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;
  VkDeviceCreateInfo info = vk_struct<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
  info.pNext = &features;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue_info;
  info.enabledExtensionCount = uint32_t(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  vk_check(vkCreateDevice(c.physical, &info, nullptr, &c.device), "vkCreateDevice", c.info.name);
  volkLoadDeviceTable(&c.vk, c.device);
  c.vk.vkGetDeviceQueue(c.device, c.queue_family, 0, &c.queue);

  c.limits = query_limits(c.physical, c.caps);
  c.limits.max_memory_allocation_size = c.max_allocation_bytes;  // with ContextOptions' cap
  // The gate runs last, on a context of its own (it needs a finished device to run on).
  if (options.cooperative_matrix_gate && env("VKC_NO_GATE") != "1")
    c.gate = gate_device(chosen, c.caps.device_uuid, c.caps.properties.driverVersion, c.limits, cache_dir(kGateCacheKind));
  c.compile_limits = gated_limits(c.limits, c.gate);
}

Context::~Context() = default;

const DeviceInfo& Context::device_info() const { return impl_->info; }
const TargetLimits& Context::limits() const { return impl_->limits; }
const TargetLimits& Context::compile_limits() const { return impl_->compile_limits; }
const std::vector<GateResult>& Context::cooperative_matrix_gate() const { return impl_->gate; }
bool Context::validation_enabled() const { return impl_->validation; }
Robustness Context::robustness() const { return impl_->robustness; }
uint64_t Context::robust_storage_alignment() const {
  return impl_->robustness == Robustness::BufferAccess2 ? impl_->caps.robust_storage_alignment : 0;
}
const char* robustness_name(Robustness r) {
  switch (r) {
    case Robustness::BufferAccess: return "robustBufferAccess";
    case Robustness::BufferAccess2: return "robustBufferAccess2";
    default: return "none";
  }
}
std::vector<std::string> Context::validation_messages() const { return impl_->log.messages(); }
void Context::clear_validation_messages() { impl_->log.clear(); }

}  // namespace vkc::rt
