// The compile pipeline: IR graph -> passes -> dispatch groups -> kernels -> SPIR-V -> module.
#pragma once

#include <map>
#include <string>

#include "ir/graph.h"
#include "ir/pass_manager.h"
#include "module/manifest.h"

namespace vkc::codegen {

struct CompileOptions {
  TargetLimits target;  // a profile from find_target(), or the live device's limits
  ir::PassManagerOptions passes;
  // Strategy overrides by op name (tests force every strategy on every config they support).
  std::map<std::string, std::string> forced_strategy;
  bool optimize_spirv = true;
  // fp16: f32 activations and weights stored as f16 (ir::convert_to_fp16_pass); needs a target
  // with storageBuffer16BitAccess and shaderFloat16. fp16x3: float32 tensors, and float32 matrix
  // products on the target's float16 tensor cores as float16 pieces (module/precision.h).
  Precision precision = Precision::fp32;
};

// Compiles a verified graph (it is copied; the caller's graph is untouched). Every dispatch fits
// the target: its workgroup memory is measured from the emitted SPIR-V and must equal the plan
// and stay within maxComputeSharedMemorySize, its workgroup size and grid within their limits.
ModuleImage compile_graph(const ir::Graph& graph, const CompileOptions& options);

// The default pass pipeline (names usable with --print-ir-after). With a target, attention fuses
// only where its kernel finds tiles for it; without, at every match. fp16 adds convert-to-fp16
// after the rewrites, so that folded weights are converted once. With a target, channels-last and
// pack-conv-filters then store the operands of the tensor-core convs in the layouts they read.
ir::PassManager default_pass_pipeline(const ir::PassManagerOptions& options, const TargetLimits* target = nullptr,
                                      Precision precision = Precision::fp32);

// A human-readable table: one row per dispatch (ops, strategy, workgroup size, tiles, workgroup
// memory used / limit, FLOPs, bytes) plus the memory plan's totals.
std::string format_report(const Manifest& manifest);

}  // namespace vkc::codegen
