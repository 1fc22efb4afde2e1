// The Vulkan runtime: device selection, limits, memory, pipelines and execution of compiled modules.
//
// It links no compiler (no glslang, no SPIRV-Tools): it consumes ModuleImage (manifest + SPIR-V +
// constants) produced ahead of time or in process by the vkc library (api/).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "module/manifest.h"
#include "module/target_limits.h"
#include "runtime/cooperative_matrix_gate.h"
#include "support/host_tensor_span.h"
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
  // What vkc's fp16 tensor-core kernels would use on it: "KHR", "NV" or "" (none), and every
  // VK_KHR_cooperative_matrix shape it offers ("16x16x16 f16*f16+f32").
  std::string tensor_cores;
  std::vector<std::string> cooperative_matrix_shapes;
};

struct ContextOptions {
  // Index ("1") or case-insensitive name substring ("llvmpipe"); empty: read VKC_DEVICE, and if that
  // is empty pick the best (discrete > integrated > virtual > cpu).
  std::string device;
  // Enable VK_LAYER_KHRONOS_validation (core + synchronization). Default: VKC_VALIDATION=1.
  bool validation = false;
  bool validation_from_env = true;
  // Also enable the layer's GPU-assisted validation, which instruments shaders to catch
  // out-of-bounds buffer accesses (slow; for tests and debugging). Implies `validation`.
  // VKC_VALIDATION=gpu in the environment sets both.
  bool gpu_assisted_validation = false;
  // Bounds-checked buffer access in every kernel (Vulkan robustness): with VK_EXT_robustness2's
  // robustBufferAccess2 an access outside a binding's range is discarded (writes) or reads zero,
  // so a faulty or hostile module cannot touch memory outside what each dispatch was given.
  // Where only core robustBufferAccess exists, stray accesses stay inside the buffer they hit.
  // Off by default: it costs a bounds check per access. VKC_ROBUST=1 in the environment sets it.
  bool robust_buffer_access = false;
  // Ask the driver for each pipeline's compile statistics (VK_KHR_pipeline_executable_properties:
  // on NVIDIA registers per invocation, shared and local memory), which explain a kernel's
  // occupancy; read them with Program::pipeline_statistics(). Ignored on devices without the
  // extension. VKC_PIPELINE_STATS=1 in the environment sets it.
  bool pipeline_statistics = false;
  // Hold buffers as if the device's maxMemoryAllocationSize were at most this many bytes (0: the
  // device's own): storage above it is placed in several allocations (module/storage_segments.h).
  // For tests of that path on devices whose limit is large.
  uint64_t max_allocation_bytes = 0;
  // Test the device's cooperative matrices before compiling for it (runtime/cooperative_matrix_gate.h):
  // verdicts from vkc's cache directory, or measured once and cached. VKC_NO_GATE=1 in the
  // environment turns it off (the device's advertisement is then taken at its word).
  bool cooperative_matrix_gate = true;
};

// Which guarantee Context::robustness() gives (ContextOptions::robust_buffer_access).
enum class Robustness { None, BufferAccess, BufferAccess2 };
const char* robustness_name(Robustness r);

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
  // The limits to compile for this device: limits() with the cooperative-matrix forms the gate
  // rejected (wrong, slower, failed) cleared. limits() still says what the device can run.
  const TargetLimits& compile_limits() const;
  // The gate's verdicts, one per cooperative-matrix form the device offers (none without).
  const std::vector<GateResult>& cooperative_matrix_gate() const;
  bool validation_enabled() const;
  // The robustness the device was created with; BufferAccess2 also reports the granularity its
  // bounds are rounded up to (robustStorageBufferAccessSizeAlignment, bytes; 0 otherwise).
  Robustness robustness() const;
  uint64_t robust_storage_alignment() const;
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

struct ProgramOptions {
  // Directory of the persistent pipeline cache (runtime/pipeline_cache.h); empty: no disk cache.
  std::string pipeline_cache_dir;
};

// A tensor in device memory that outlives executions: an output kept on the device feeds the next
// execution (of any program on the same context) through a device-side copy, with no host round
// trip. Host access (upload/download) waits for the queue to go idle first.
class DeviceTensor {
 public:
  DeviceTensor(Context& context, DType dtype, Shape shape);
  ~DeviceTensor();
  DeviceTensor(const DeviceTensor&) = delete;
  DeviceTensor& operator=(const DeviceTensor&) = delete;

  DType dtype() const;
  const Shape& shape() const;
  // dtype and shape must match, else vkc::Error.
  void upload(const HostTensor& tensor);
  HostTensor download() const;

  struct Impl;
  Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// What one execution produced: outputs downloaded to the host (but for those written into host
// targets), and outputs kept on the device.
struct ExecutionResults {
  std::map<std::string, HostTensor> host;
  std::map<std::string, std::shared_ptr<DeviceTensor>> device;
};

// A module loaded on a device: pipelines created, constants uploaded, arena allocated.
class Program {
 public:
  // Refuses a module whose target limits the device does not meet, naming the limits.
  Program(Context& context, const ModuleImage& module, const ProgramOptions& options = {});
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  const Manifest& manifest() const;

  // Runs once: uploads inputs (by name; dtype and shape must match the manifest, else vkc::Error
  // naming the input), records/replays one command buffer, waits, downloads outputs by name.
  std::map<std::string, HostTensor> execute(const std::map<std::string, HostTensor>& inputs,
                                            const ExecuteOptions& options = {});
  // Asynchronous execution. submit() checks and uploads the host inputs, then submits the
  // pre-recorded dispatches together with device-side copies for `device_inputs` (in) and
  // `device_outputs` (out, into DeviceTensors) as one queue submission, and returns. A device
  // output goes into the tensor this program returned for it last time when the caller no longer
  // holds that tensor, else into a new one; tensors the caller keeps are never written again,
  // except those passed in `output_targets`: a device output named there is copied into that
  // tensor (same dtype and shape), which may also be one of this execution's device inputs (inputs
  // are copied in before the dispatches, outputs out after them) -- a state kept on the device,
  // such as a decoder's key/value cache, updated in place. One execution per program is in flight
  // at a time: submit() throws while one is pending.
  // The host inputs are views (support/tensor.h): each is written straight from the caller's
  // memory into the input's buffer (or its staging buffer), the one host-side copy; the views
  // need to stay valid only until submit() returns.
  // A host output named in `host_targets` is read by wait() into that span (the caller's memory,
  // dtype and shape equal to the output's, valid until wait() returns) instead of a new
  // HostTensor, and is absent from ExecutionResults::host: no allocation per execution.
  void submit(const std::map<std::string, HostTensorView>& host_inputs,
              const std::map<std::string, std::shared_ptr<DeviceTensor>>& device_inputs = {},
              const std::set<std::string>& device_outputs = {}, const ExecuteOptions& options = {},
              const std::map<std::string, std::shared_ptr<DeviceTensor>>& output_targets = {},
              const std::map<std::string, HostTensorSpan>& host_targets = {});
  // True when no execution is pending or the pending one has finished (polls the fence).
  bool ready() const;
  // Waits for the pending execution and returns its results (outputs not in device_outputs are
  // downloaded: into their host target, else into a new HostTensor). Throws vkc::Error on a
  // timeout, device loss or a validation message (host targets are then left unwritten).
  ExecutionResults wait();
  // Whether the pipelines came from a pipeline-cache file on disk (ProgramOptions).
  bool pipeline_cache_loaded() const;
  // Dispatch command buffers recorded so far (one per variant, replayed after) and queue
  // submissions made (one per execution): the record-once, submit-once contract, for tests.
  size_t recorded_command_buffers() const;
  size_t submissions() const;
  // DeviceTensors allocated for device outputs so far (the rest were reused).
  size_t device_output_allocations() const;

  // Profile of the last execute() with options.profile set.
  const std::vector<DispatchProfile>& last_profile() const;
  // The driver's statistics of dispatch i's pipeline as "name=value" strings (e.g. NVIDIA's
  // "Register Count=96"); empty unless ContextOptions::pipeline_statistics took effect.
  std::vector<std::string> pipeline_statistics(size_t dispatch) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace vkc::rt
