// Private state of rt::Context, shared by the runtime's .cpp files (and white-box tests).
#pragma once

#include <volk.h>

#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "runtime/host_copy.h"
#include "runtime/runtime.h"

namespace vkc::rt {

// Validation-layer messages, appended from the layer's callback (any thread) and read by the API.
class ValidationLog {
 public:
  void add(std::string message);
  std::vector<std::string> messages() const;
  void clear();
  bool empty() const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> messages_;
};

// Loads the Vulkan loader once per process; throws "Vulkan loader (libvulkan.so.1) not found".
void load_vulkan_loader();

// The instance-level pieces: created first, destroyed last.
struct InstanceHandles {
  VkInstance instance = VK_NULL_HANDLE;
  uint32_t api_version = 0;  // what the instance was created with
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger = nullptr;
};

// Creates an instance (the newest of API 1.3, 1.2, 1.1 that the loader has). With `log` non-null, enables
// VK_LAYER_KHRONOS_validation with synchronization validation and a messenger feeding `log`.
InstanceHandles create_instance(ValidationLog* log, bool gpu_assisted = false);
void destroy_instance(InstanceHandles& handles);

// What a physical device offers, queried once (extensions, features, properties).
struct DeviceCapabilities {
  VkPhysicalDeviceProperties properties{};
  uint32_t effective_api = 0;  // min(instance API, device API): what may be used
  std::set<std::string> extensions;
  std::string driver;  // driver name and info string
  bool shader_int64 = false;
  bool shader_float16 = false;
  bool shader_int8 = false;
  bool storage_16bit = false;
  bool storage_8bit = false;
  bool subgroup_size_control = false;
  bool compute_full_subgroups = false;
  bool robust_buffer_access = false;   // core feature
  bool robust_buffer_access2 = false;  // VK_EXT_robustness2
  uint64_t robust_storage_alignment = 0;
  // VK_NV_cooperative_matrix usable by vkc's fp16 GEMM kernels: the cooperativeMatrix feature, the
  // Vulkan memory model (glslang declares it for every GL_NV_cooperative_matrix shader) and a
  // 16x16x16 float16 x float16 + float32 product at subgroup scope among the offered shapes.
  bool cooperative_matrix_nv = false;
  // The same through VK_KHR_cooperative_matrix (runtime/cooperative_matrix_khr.h), with every shape
  // the device offers ("16x16x16 f16*f16+f32") for --list-devices.
  bool cooperative_matrix_khr = false;
  std::vector<std::string> cooperative_matrix_khr_shapes;
  std::string device_uuid;  // VkPhysicalDeviceIDProperties::deviceUUID, hex (the gate's key)
  bool has(const char* extension) const { return extensions.count(extension) != 0; }
};

DeviceCapabilities query_capabilities(VkInstance instance, VkPhysicalDevice device, uint32_t instance_api);
DeviceInfo make_device_info(uint32_t index, const DeviceCapabilities& caps);
// Fills the limits codegen plans against from what the device reports.
TargetLimits query_limits(VkPhysicalDevice device, const DeviceCapabilities& caps);

// Picks a device: `spec` is an index or a case-insensitive name substring (empty: the best by
// type). Throws vkc::Error listing the devices when nothing matches.
uint32_t choose_device(const std::vector<DeviceInfo>& devices, const std::string& spec);

struct Context::Impl {
  ~Impl();

  InstanceHandles instance;
  bool validation = false;
  ValidationLog log;

  VkPhysicalDevice physical = VK_NULL_HANDLE;
  DeviceCapabilities caps;
  DeviceInfo info;
  TargetLimits limits;
  TargetLimits compile_limits;    // limits with the cooperative-matrix gate's verdicts applied
  std::vector<GateResult> gate;  // runtime/cooperative_matrix_gate.h
  VkPhysicalDeviceMemoryProperties memory{};
  // Device memory, for the preflight that refuses a module or an execution before allocating:
  // the device-local heaps together, the largest single allocation (maxMemoryAllocationSize) and
  // the bytes this context's storage buffers hold now (runtime/memory.cpp counts them).
  uint64_t device_heap_bytes = 0;
  uint64_t max_allocation_bytes = 0;
  uint64_t storage_bytes_in_use = 0;
  uint32_t queue_family = 0;
  uint32_t timestamp_valid_bits = 0;
  Robustness robustness = Robustness::None;
  bool pipeline_statistics = false;  // pipelines are created with CAPTURE_STATISTICS

  VkDevice device = VK_NULL_HANDLE;
  VolkDeviceTable vk{};  // device functions of this device (volk's globals would be shared)
  VkQueue queue = VK_NULL_HANDLE;

  // Tests set this to exercise the staging-buffer path on devices whose memory is all host
  // visible (lavapipe).
  bool force_staging = false;

  // Host copies of inputs and outputs (runtime/host_copy.h): large ones are split among threads
  // that start at the first large copy. Threads from VKC_COPY_THREADS; tests set them directly.
  HostCopy host_copy;
};

}  // namespace vkc::rt
