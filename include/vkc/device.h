// vkc::Device: one Vulkan device, chosen by index or name, with the limits kernels are planned
// against.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace vkc {

struct DeviceInfo {
  uint32_t index = 0;     // position in Device::enumerate()
  std::string name;       // "NVIDIA H100 80GB HBM3", "llvmpipe (LLVM 15.0.6, 256 bits)"
  std::string type;       // "discrete", "integrated", "virtual", "cpu", "other"
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  std::string driver;     // driver name and version string
  uint32_t api_version = 0;  // VK_MAKE_API_VERSION encoding
  // Tensor cores vkc's fp16 kernels use there: "KHR" (VK_KHR_cooperative_matrix, preferred), "NV"
  // (VK_NV_cooperative_matrix, where KHR is missing) or "" (none: the SIMT kernels); and every
  // VK_KHR_cooperative_matrix shape the device offers, e.g. "16x16x16 f16*f16+f32".
  std::string tensor_cores;
  std::vector<std::string> cooperative_matrix_shapes;
};

// The limits a compiled module must fit (a module planned for larger limits is refused).
struct DeviceLimits {
  uint32_t max_shared_memory_bytes = 0;         // maxComputeSharedMemorySize
  uint32_t max_workgroup_invocations = 0;       // maxComputeWorkGroupInvocations
  std::array<uint32_t, 3> max_workgroup_size{};   // maxComputeWorkGroupSize
  std::array<uint32_t, 3> max_workgroup_count{};  // maxComputeWorkGroupCount
  uint64_t max_storage_buffer_range = 0;        // bytes one binding may cover
  uint32_t max_push_constants_size = 0;
  uint32_t subgroup_size = 0;                   // 0: unknown
  bool shader_float16 = false;
  bool shader_int8 = false;
  bool shader_int64 = false;
  std::string vulkan_version;                   // "1.1", "1.2", "1.3"
};

struct DeviceOptions {
  // An index ("1") or a case-insensitive name substring ("llvmpipe"). Empty: the VKC_DEVICE
  // environment variable, and if that is empty the best device (discrete > integrated > virtual >
  // cpu).
  std::string select;
  // VK_LAYER_KHRONOS_validation with synchronization validation; any message makes the next
  // execution fail. Unset: on when VKC_VALIDATION=1.
  std::optional<bool> validation;
  // Bounds-checked buffer access (Vulkan robustBufferAccess, and robustBufferAccess2 where the
  // device has VK_EXT_robustness2: stray writes are dropped, stray reads give zero). For modules
  // from untrusted sources; costs a little speed. Also on when VKC_ROBUST=1.
  bool robust_buffer_access = false;
};

// A handle: copies share the device, which lives as long as any copy, module session or device
// tensor using it. Not thread-safe: use one Device (and what hangs off it) from one thread at a
// time.
class Device {
 public:
  // Every Vulkan device on this machine. Throws vkc::Error when there is none.
  static std::vector<DeviceInfo> enumerate();

  explicit Device(const DeviceOptions& options = {});

  const DeviceInfo& info() const;
  const DeviceLimits& limits() const;
  bool validation_enabled() const;
  // The cooperative-matrix gate's verdicts, one line per form the device offers (none without
  // tensor cores), e.g. "KHR 16x16x16 f16*f16+f32, subgroup 32: ok (tensor cores 0.210 ms, SIMT
  // 1.400 ms) [cached]". Compiling for this device uses a form only where its verdict is "ok" or
  // "not tested" (no precompiled self-test for the device; the advertisement rules then). The
  // verdicts are measured the first time a device and driver are seen, then read from vkc's
  // cache directory; VKC_NO_GATE=1 skips the gate.
  std::vector<std::string> cooperative_matrix_gate() const;
  // Validation-layer messages seen so far (each also fails the execution it happened in).
  std::vector<std::string> validation_messages() const;
  void clear_validation_messages();

  struct Impl;
  const std::shared_ptr<Impl>& impl() const { return impl_; }

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace vkc
