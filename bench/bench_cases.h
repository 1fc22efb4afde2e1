// The benchmark cases of issue 9 ("GPU performance"): each is a small IR graph plus what the
// PyTorch side needs to run the same computation (bench/torch_reference.py reads `torch` as-is).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/graph.h"

namespace vkc::bench {

struct BenchCase {
  std::string name;
  std::string group;  // "conv", "im2col", "matmul", "topk", "sort", "pool": which target applies
  std::function<void(ir::Graph&)> build;
  double flops = 0;  // useful floating-point operations (2 per multiply-add)
  // Fewest bytes through device memory: each input read once, each output written once. Filled
  // from the graph by the harness.
  double bytes = 0;
  // For torch_reference.py: {"op": ..., op arguments...}; inputs/outputs are matched by name.
  nlohmann::json torch;
  // Strategies forced by op kind (the fp16 cases force the tensor-core kernels).
  std::map<std::string, std::string> forced;
  // Inputs that are index payloads (sort): filled with 0..n-1 along the last axis, not random.
  std::vector<std::string> iota_inputs;
  // Nonzero: plan as if the device's maxStorageBufferRange were this, so the same work runs split
  // over buffer ranges (codegen/range_split.h) and can be compared with the unsplit case.
  uint64_t max_binding_bytes = 0;
};

// The suite. `small` shrinks every shape so the whole harness can run on lavapipe in seconds
// (a plumbing check; its timings mean nothing).
std::vector<BenchCase> make_cases(bool small);

// A matmul of M x N x K f32 with the planner's tile ("") or a forced one ("TMxTNxTK/RMxRN/STAGES
// [/kS]", the `tiled=` strategy syntax): vkc_bench --matmul adds these to measure tiles and K splits
// on new shapes without a rebuild.
// What vkc_bench --matmul's +ln / +gelu add around an M x K by K x N product: a LayerNorm of the
// lhs in front (its own dispatch), a bias and GELU (erf form) fused after.
struct MatmulExtras {
  bool layer_norm = false, gelu = false;
};
BenchCase matmul_mnk_case(int64_t m, int64_t n, int64_t k, const std::string& tile = "", MatmulExtras extras = {});
// A float32 NCHW conv of `x` by F x C x KH x KW filters `w`, stride 1, "same" padding (each pad
// KH / 2, KW / 2), no bias: vkc_bench --conv, for shapes the suite lacks.
BenchCase conv_shape_case(const Shape& x, const Shape& w, DType dtype = DType::f32);
BenchCase prologue_matmul_case(int64_t b, int64_t s, int64_t n, int64_t k, bool transposed, const std::string& strategy = "");

}  // namespace vkc::bench
