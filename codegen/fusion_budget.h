// What fusing a prologue into an anchor kernel costs beyond bindings: recomputation.
//
// A fused prologue runs wherever the anchor's kernel reads an operand element, so a kernel that
// reads each element R times evaluates the prologue R times (a 3x3 stride-1 max pool: about 9;
// a matrix-vector product: once per output column). Index maps, casts and dequantize cost about
// what the read they replace costs, so they always fuse; elementwise math (exp, tanh, a residual
// add with its own read) is refused once R exceeds kMaxPrologueRecompute, and then its result is
// stored once by its own dispatch instead.
#pragma once

#include <cstdint>

#include "ir/graph.h"
#include "module/target_limits.h"

namespace vkc::codegen {

inline constexpr int64_t kMaxPrologueRecompute = 16;

// At most this many ops fuse into one kernel: an elementwise chain, or an anchor's prologue depth
// or epilogue. glslang and the SPIR-V optimizer take time that grows faster than linearly with a
// kernel's size (value numbering across its blocks), and so do drivers compiling the pipeline,
// while fusing more than a few hundred ops saves nothing measurable: the one store and load per
// chunk is small beside the chunk's math. Longer chains become several kernels of this size, and
// equal chunks (a repeated block) compile once through the SPIR-V cache. Issue 24 item 11:
// compile time stays linear in the chain length (bench/README.md, compile-chain benchmark).
inline constexpr int64_t kMaxFusedOps = 256;

// About how many times the default kernel for `anchor` (pool, reduction, softmax, matmul, gemm,
// conv) reads each element of its operand `operand` on `target`; at least 1.
int64_t operand_reads_per_element(const ir::Op& anchor, int operand, const TargetLimits& target);

}  // namespace vkc::codegen
