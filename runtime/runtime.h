// The Vulkan runtime: device selection, limits, memory, pipelines and execution of compiled modules.
//
// It links no compiler (no glslang, no SPIRV-Tools): it consumes ModuleImage (manifest + SPIR-V +
// constants) produced ahead of time or in process by the umbrella library.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "module/manifest.h"
#include "module/target_limits.h"
#include "support/tensor.h"

namespace vkc::rt {

struct DeviceInfo {
  uint32_t index = 0;
  std::string name;
  std::string type;  // "discrete", "integrated", "virtual", "cpu", "other"
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  std::string driver;  // driver name and info string
  uint32_t api_version = 0;
};

struct ContextOptions {
  // Index ("1") or case-insensitive name substring ("llvmpipe"); empty: read VKC_DEVICE, and if that
  // is empty pick the best (discrete > integrated > virtual > cpu).
  std::string device;
  // Enable VK_LAYER_KHRONOS_validation (core + synchronization). Default: VKC_VALIDATION=1.
  bool validation = false;
  bool validation_from_env = true;
};

// Instance + physical device + logical device + one compute queue.
class Context {
 public:
  explicit Context(ContextOptions options = {});
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // All Vulkan devices. Throws vkc::Error "no Vulkan device found" when there is none.
  static std::vector<DeviceInfo> enumerate_devices();

  const DeviceInfo& device_info() const;
  // The device's limits in the structure codegen plans against (name "host").
  const TargetLimits& limits() const;
  bool validation_enabled() const;
  // Validation-layer messages (warnings and errors) seen so far; each also makes the next
  // execute() throw, so none goes unnoticed.
  std::vector<std::string> validation_messages() const;
  void clear_validation_messages();

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// Per-dispatch timing from GPU timestamps.
struct DispatchProfile {
  std::string name;
  double ms = 0;
  double gflops = 0;  // manifest flops / time
  double gbps = 0;    // manifest bytes / time
};

struct ExecuteOptions {
  bool profile = false;  // record timestamps around each dispatch
  // Fill output and arena buffers with the 0x7FC07FC0 pattern (a NaN in f32 and f16) before the
  // dispatches run, so an element a kernel fails to write shows up in comparisons. Tests set it.
  bool poison_outputs = false;
};

// A module loaded on a device: pipelines created, constants uploaded, arena allocated.
class Program {
 public:
  // Refuses a module whose target limits the device does not meet, naming the limits.
  Program(Context& context, const ModuleImage& module);
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  const Manifest& manifest() const;

  // Runs once: uploads inputs (by name; dtype and shape must match the manifest, else vkc::Error
  // naming the input), records/replays one command buffer, waits, downloads outputs by name.
  std::map<std::string, HostTensor> execute(const std::map<std::string, HostTensor>& inputs,
                                            const ExecuteOptions& options = {});
  // Profile of the last execute() with options.profile set.
  const std::vector<DispatchProfile>& last_profile() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace vkc::rt
