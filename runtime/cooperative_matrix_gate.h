// The cooperative-matrix gate (issue 22 item 4): tensor cores by measurement, not by lists.
//
// Drivers advertise cooperative matrices that give wrong results or run slower than the ALUs.
// Rather than a hand-kept list of device IDs, the first time vkc meets a (device UUID, driver
// version, form, shape, subgroup size) it runs precompiled self-test kernels (built into the
// library at build time by codegen/gate/generate_gate_kernels.cpp, since the runtime links no
// compiler): a float16 matmul on the tensor-core loop is checked EXACTLY against a CPU product
// of small integers, then timed against the SIMT loop at a larger size. The verdict is cached as
// a small JSON file in <cache>/gate/ (module/cache_dir.h) and reused: no process start reruns it.
//
// Compiling for the live device (Context::compile_limits()) follows the verdicts: a form whose
// verdict is wrong, slower or failed is not planned for. Offline compiles follow the profile, and
// the device fit check (Context::limits()) still accepts modules that use a gated-off form.
// VKC_NO_GATE=1 (or ContextOptions::cooperative_matrix_gate = false) skips the gate: the device's
// advertisement is taken at its word.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "module/target_limits.h"
#include "support/tensor.h"

namespace vkc::rt {

// The one shape vkc's tensor-core loop uses (shaders/gemm_coopmat.glsl).
inline constexpr const char* kGateShape = "16x16x16 f16*f16+f32";

enum class GateVerdict {
  ok,          // exact, and faster than the SIMT kernel
  wrong,       // a result differs from the CPU product
  slower,      // exact, but not faster than the SIMT kernel
  failed,      // pipeline creation or execution failed
  not_tested,  // no precompiled kernel fits the device (e.g. its subgroup size): the profile rules
};
const char* gate_verdict_name(GateVerdict v);
std::optional<GateVerdict> parse_gate_verdict(const std::string& name);

// What a verdict is about.
struct GateKey {
  std::string device_uuid;  // VkPhysicalDeviceIDProperties::deviceUUID, 32 hex digits
  uint32_t driver_version = 0;
  std::string form;  // "KHR" or "NV"
  std::string shape = kGateShape;
  uint32_t subgroup_size = 0;
};
// The key as one line of text, and the cache file's name (a hash of that text and vkc's version,
// so that an upgrade of vkc retests).
std::string gate_key_text(const GateKey& key);
std::string gate_file_name(const GateKey& key);

struct GateResult {
  GateKey key;
  GateVerdict verdict = GateVerdict::not_tested;
  double coopmat_ms = 0;  // the large product on the tensor-core kernel (best of several runs)
  double simt_ms = 0;     // the same on the SIMT kernel
  std::string detail;     // why (mismatch, error message, missing kernel)
  bool cached = false;    // read from the cache rather than measured by this process
};
// One line: "KHR 16x16x16 f16*f16+f32, subgroup 32: ok (tensor cores 0.21 ms, SIMT 1.40 ms)".
std::string describe(const GateResult& r);

// The cache file's contents; parse returns nullopt for anything damaged or for another key.
std::string gate_result_json(const GateResult& r);
std::optional<GateResult> parse_gate_result(const std::string& json_text, const GateKey& expected);
// Reads / writes <dir>/<gate_file_name(key)>; a damaged file reads as nullopt (and is rewritten
// by the next run).
std::optional<GateResult> load_gate_result(const std::string& dir, const GateKey& key);
bool store_gate_result(const std::string& dir, const GateResult& r);

// The decision: the limits codegen plans against on the live device. A form whose verdict is
// anything but ok or not_tested is cleared; not_tested follows the device's advertisement.
TargetLimits gated_limits(const TargetLimits& device, const std::vector<GateResult>& results);

// The gate's product test: inputs a and b (float16 n x n, small integers: every sum is exact in
// float16), and the check of y = a * b on every `row_step`-th row against the CPU product ("" when
// exact, else the first difference).
std::map<std::string, HostTensor> gate_inputs(int64_t n);
std::string gate_mismatch(const std::map<std::string, HostTensor>& inputs, const HostTensor& y, int64_t row_step);

// The precompiled kernels: names "<profile>/<form>/<size>" (form simt, khr, nv; size small,
// large) and their packed module bytes.
const std::vector<std::pair<std::string, std::string>>& gate_kernel_modules();

}  // namespace vkc::rt

namespace vkc::rt {

// The verdicts for one device (one per cooperative-matrix form its limits offer: KHR, NV), each
// from <cache_dir> when there, else measured now on a private context of device `device_index`
// (validation off: Debian's validation layer cannot parse KHR SPIR-V) and stored there (no
// caching when cache_dir is ""). Never throws for what the device does: that is the verdict.
std::vector<GateResult> gate_device(uint32_t device_index, const std::string& device_uuid, uint32_t driver_version,
                                    const TargetLimits& limits, const std::string& cache_dir);

}  // namespace vkc::rt
