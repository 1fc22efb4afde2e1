// What a kernel emitter produces for one dispatch: GLSL plus the plan that sizes and launches it.
//
// The plan is the single source of truth for the dispatch's workgroup size, grid and workgroup
// memory; the compiler re-measures the emitted SPIR-V and refuses a mismatch.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "module/manifest.h"

namespace vkc::codegen {

struct KernelBinding {
  std::string tensor;  // manifest tensor name (values, scratch tensors)
  bool writes = false;
};

// A temporary buffer a kernel family needs between its passes (e.g. sort partials). It lives in
// the arena for the duration of the group's dispatches. With `constant`, it is instead data the
// emitter computed at compile time (e.g. the int8 kernels' per-channel tables, too large for a
// shader array), stored with the module's constants like a weight.
struct ScratchTensor {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;
  std::optional<HostTensor> constant = std::nullopt;
};

struct EmittedKernel {
  std::string kernel;    // template / family name ("elementwise", "conv_direct", ...)
  std::string strategy;  // planner choice shown in reports
  std::string glsl;
  std::vector<KernelBinding> bindings;  // binding i = bindings[i]
  std::vector<uint32_t> push_constants;
  std::vector<SpecConstant> spec_constants;
  std::array<uint32_t, 3> workgroup_size{1, 1, 1};
  std::array<uint32_t, 3> workgroup_count{1, 1, 1};
  uint32_t workgroup_memory_bytes = 0;
  // Subgroup sizes the kernel relies on (DispatchDesc::subgroup_sizes); {0, 0}: any.
  std::array<uint32_t, 2> subgroup_sizes{0, 0};
  // Written in the NV cooperative-matrix form for the KHR rewrite: compiled, optimized and validated
  // as NV, then rewritten to VK_KHR_cooperative_matrix (codegen/spirv_coopmat_khr.h).
  bool cooperative_matrix_khr = false;
  // Whether spirv-opt's performance passes run on the kernel (with CompileOptions::optimize_spirv);
  // false where the driver's own compiler measured faster without them (GemmCoreShape::spirv_opt).
  bool optimize_spirv = true;
  std::map<std::string, int64_t> tiles;
  double flops = 0;
  double bytes = 0;
  std::string notes;
};

}  // namespace vkc::codegen
