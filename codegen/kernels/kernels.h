// Kernel families. Each lives in its own file under codegen/kernels/; codegen/op_codegen.cpp names
// each op's emitter.
#pragma once

#include "codegen/kernel_context.h"

namespace vkc::codegen::kernels {

// Fused elementwise chains (unary, binary, select, cast) with numpy broadcasting, and plain copies.
std::vector<EmittedKernel> emit_elementwise(const DispatchGroup& group, const KernelContext& context,
                                            std::vector<ScratchTensor>& scratch);

// Conv, ConvTranspose: direct, implicit GEMM, depthwise, transposed (budget-planned). codegen/kernels/conv.cpp
std::vector<EmittedKernel> emit_conv(const DispatchGroup& group, const KernelContext& context,
                                 std::vector<ScratchTensor>& scratch);

// Im2Col as its own dispatch. codegen/kernels/im2col.cpp
std::vector<EmittedKernel> emit_im2col(const DispatchGroup& group, const KernelContext& context,
                                 std::vector<ScratchTensor>& scratch);

// MatMul, BatchMatMul, Gemm: tiled GEMM. codegen/kernels/contraction.cpp
std::vector<EmittedKernel> emit_contraction(const DispatchGroup& group, const KernelContext& context,
                                 std::vector<ScratchTensor>& scratch);

// MaxPool, AvgPool. codegen/kernels/pool.cpp
std::vector<EmittedKernel> emit_pool(const DispatchGroup& group, const KernelContext& context,
                                 std::vector<ScratchTensor>& scratch);

// MaxPoolWithIndices (values and flat indices). codegen/kernels/pool_indices.cpp
std::vector<EmittedKernel> emit_pool_indices(const DispatchGroup& group, const KernelContext& context,
                                             std::vector<ScratchTensor>& scratch);

// Resize: nearest, linear, cubic. codegen/kernels/resize.cpp
std::vector<EmittedKernel> emit_resize(const DispatchGroup& group, const KernelContext& context,
                                       std::vector<ScratchTensor>& scratch);

// Row reductions. codegen/kernels/reduction.cpp
// ReduceSum/Mean/Max/Min.
std::vector<EmittedKernel> emit_reduce(const DispatchGroup& group, const KernelContext& context,
                                       std::vector<ScratchTensor>& scratch);
// ArgMax/ArgMin.
std::vector<EmittedKernel> emit_arg_reduce(const DispatchGroup& group, const KernelContext& context,
                                           std::vector<ScratchTensor>& scratch);
// Softmax, LogSoftmax.
std::vector<EmittedKernel> emit_softmax(const DispatchGroup& group, const KernelContext& context,
                                        std::vector<ScratchTensor>& scratch);

// Transpose, Pad, Reverse, Slice, Concat, Broadcast. codegen/kernels/data_movement.cpp
std::vector<EmittedKernel> emit_data_movement(const DispatchGroup& group, const KernelContext& context,
                                 std::vector<ScratchTensor>& scratch);

// Quantize, Dequantize. codegen/kernels/quant.cpp
std::vector<EmittedKernel> emit_quant(const DispatchGroup& group, const KernelContext& context,
                                 std::vector<ScratchTensor>& scratch);

// ConvInteger, MatMulInteger: exact i32 sums of 8-bit products. codegen/kernels/integer_product.cpp
std::vector<EmittedKernel> emit_integer_product(const DispatchGroup& group, const KernelContext& context,
                                                std::vector<ScratchTensor>& scratch);

// Sort, TopK. codegen/kernels/sort.cpp
std::vector<EmittedKernel> emit_sort(const DispatchGroup& group, const KernelContext& context,
                                 std::vector<ScratchTensor>& scratch);

// Attention (softmax(scale * q k^T + mask) v) as one tiled kernel. codegen/kernels/attention.cpp
std::vector<EmittedKernel> emit_attention(const DispatchGroup& group, const KernelContext& context,
                                          std::vector<ScratchTensor>& scratch);
// Indexing (issue 23, indexing and data movement group): Gather, GatherElements, GatherND,
// ScatterND, ScatterElements with run-time indices. codegen/kernels/indexing.cpp
std::vector<EmittedKernel> emit_indexing(const DispatchGroup& group, const KernelContext& context,
                                         std::vector<ScratchTensor>& scratch);
// Normalizations and reductions group (issue 23).
// ReduceLogSumExp (two passes: row max, then the sum of exponentials). codegen/kernels/reduction.cpp
std::vector<EmittedKernel> emit_reduce_log_sum_exp(const DispatchGroup& group, const KernelContext& context,
                                                   std::vector<ScratchTensor>& scratch);
// LayerNorm, GroupNorm. codegen/kernels/normalization.cpp
std::vector<EmittedKernel> emit_normalization(const DispatchGroup& group, const KernelContext& context,
                                              std::vector<ScratchTensor>& scratch);
// CumSum. codegen/kernels/normalization.cpp
std::vector<EmittedKernel> emit_cumsum(const DispatchGroup& group, const KernelContext& context,
                                       std::vector<ScratchTensor>& scratch);

}  // namespace vkc::codegen::kernels
