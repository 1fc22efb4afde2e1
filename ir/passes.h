// Graph passes, each a named ir::Pass for the PassManager.
#pragma once

#include <cstdint>

#include "ir/pass_manager.h"

namespace vkc::ir {

// Removes ops none of whose results are used (and thereby constants only they used). Multi-result
// ops stay while any result is used; unused results of kept ops simply get no consumer.
Pass dead_code_elimination_pass();

// Evaluates every op whose operands are all constants with the reference interpreter
// (ir::evaluate_op) and replaces its results by constant ops, so constant subgraphs (weight
// dequantization, transposes of weights, ...) cost nothing at run time. Results above
// `max_elements` are left alone to keep the constants blob bounded.
Pass constant_folding_pass(int64_t max_elements = int64_t(1) << 24);

// quantize(conv|matmul(dequantize(x_q), dequantize(w_q)[, dequantize(b_i32)])) -> conv_integer /
// matmul_integer (exact i32 sums) with ONNX Runtime's requantization fused in (requantize_*
// attributes, M = x_scale * w_scale / y_scale in f32; ir/passes/qdq_integer.cpp).
// Runs before constant folding, which would otherwise turn constant dequantized weights into f32.
Pass qdq_to_integer_pass();

// Canonicalizes reshapes (expand_shape, collapse_shape, reshape): a reshape of a reshape becomes
// one reshape of the original value, a reshape to the operand's own shape disappears, and a pad,
// reverse or unary elementwise op applied to a reshape's result moves above the reshape when the
// dims it touches are kept whole by it. Two graphs that differ only in where such reshapes sit
// (e.g. "pad, then expand groups" versus "expand groups, then pad") thus become the same graph.
Pass reshape_propagation_pass();

// conv(pad(x)) with a zero pad on spatial dims only becomes conv(x) with the pads added to the
// conv's own: the padding is then part of the conv's input index map and costs no dispatch.
Pass fold_pad_into_conv_pass();

// conv(x, W, b) followed by mul and/or add with per-output-channel constants (BatchNormalization's
// inference form) folds into the conv's weights and bias when W (and b) are constants.
Pass fold_batchnorm_into_conv_pass();

// RMSNorm spelled out, x / sqrt(reduce_mean(x^2, last axis) + eps) [* w] (or x * (1 / sqrt(..))),
// becomes layer_norm(x[, w]) with `rms` (ir/passes/fuse_rms_norm.cpp): one kernel instead of a
// reduction and an elementwise dispatch.
Pass fuse_rms_norm_pass();

// Rotary embeddings' rotate_half, concat(-x[..., h:], x[..., :h]) on the last axis, becomes the
// halves swapped by a reshape and reverse (index maps) times a constant sign vector
// (ir/passes/rotate_half.cpp), which fuses into the loads of the kernel reading it.
Pass rotate_half_pass();

// x @ W1 (+ b1), x @ W2 (+ b2), ... with constant matrices W_i (and bias vectors b_i) become one
// x @ [W1 W2 ..] (+ [b1 b2 ..]) whose result the old consumers read through slices of its last
// axis (ir/passes/fuse_shared_input_matmuls.cpp): a transformer's q, k and v projections in one
// product that fills the GPU, instead of three small split ones. Only where each result is read
// by products alone (through views, transposes, constant scalings), every product has its bias
// add or none has, and the joined result holds at most `max_result_bytes` (the target's
// maxStorageBufferRange: a slice of a tensor beyond one binding cannot be read piece by piece,
// where the separate products could be split).
Pass fuse_shared_input_matmuls_pass(uint64_t max_result_bytes = UINT64_MAX);

// slice(transpose(x)) (through a squeeze or not) -> transpose(slice(x)) for every slice of a
// transpose that only slices read, where each slice reaches a product or attention through index
// maps (ir/passes/slice_before_transpose.cpp): the kernels then read the parts in place instead
// of a stored copy of the transposed tensor (ViT's q/k/v split).
Pass slice_before_transpose_pass();

// transpose(reshape(A @ W [+ b])) that keeps the last axis last -> reshape(transpose(A's rows) @ W
// [+ b]), where A comes from attention through index maps (ir/passes/transpose_rows_into_product.cpp):
// the attention kernel then stores its result in that order, and the transpose after the product
// (ViT's sequence-first output projection back to batch first) is no dispatch of its own.
Pass transpose_rows_into_product_pass();

// matmul(softmax(scale * matmul(q, k^T) + mask), v) -> attention(q, k, v, mask) (docs/ops.md): the
// forms torch's scaled_dot_product_attention, HF BERT/GPT-2 and torchvision ViT export. `fits`
// (the codegen planner) may refuse a candidate, which then stays unfused; empty: fuse every match.
using AttentionFits = std::function<bool(const Op& attention)>;
Pass fuse_attention_pass(AttentionFits fits = {});

// The fp16 precision mode: f32 activations and weights stored as f16; softmax, normalizations,
// reductions, exp/log, comparisons, sort keys and the like stay f32 behind casts; graph inputs and
// outputs keep their dtype (casts that fuse into the first and last kernels). The file says which
// ops run in which precision and why.
Pass convert_to_fp16_pass();

// Constant float16 and float32 filters of convs that `wanted` names (the codegen planner: float16
// ones its tensor-core kernel stages 16 bytes at a time, float32 ones its SIMT GEMM walks one tap
// per K slice; empty: every such conv) are stored output channels outermost, then the taps, then a
// group's input channels, with the conv's filter_layout saying so: the kernel then reads them in
// place (float16: instead of packing them in a dispatch per execution; float32: contiguously).
using ConvFilterPacked = std::function<bool(const Op& conv)>;
Pass pack_conv_filters_pass(ConvFilterPacked wanted = {});

// Activations between the convs that `wanted` names (the codegen planner: those whose tensor-core
// kernel reads its input 8 channels at a time) stored channels innermost (N, spatial.., C): the
// convs' input_layout / output_layout (of the convs `allowed` names: those whose kernel stays the
// same in that layout), elementwise ops, pooling, reductions and concat follow the permuted
// layout, and transposes (reshapes where only dims of extent 1 move) restore the original layout
// where other ops and graph outputs read a value. A region of such values is rewritten only where
// it saves more input packs than it adds transposes. Of the allowed convs, those `same_layout`
// names (the depthwise ones, whose kernels coalesce only with input and output in one layout:
// over W in NCHW, over channels in N, spatial.., C) join their input and output in one region, so
// both change layout or neither. Empty functions: every conv wanted and allowed; none same_layout.
struct ChannelsLastConvs {
  std::function<bool(const Op& conv)> wanted, allowed, same_layout;
};
Pass channels_last_pass(ChannelsLastConvs convs = {});

}  // namespace vkc::ir
