// Private to the conv kernel family: the resolved operands of one conv / conv_transpose / im2col
// op and the GLSL index helpers every conv kernel shares.
//
// All layout math goes through ir::ConvGeometry's logical -> physical positions; the resulting
// strides, extents, pads and dilations are baked into the GLSL as literals, so one helper serves
// every layout and the driver sees constant arithmetic.
#pragma once

#include <set>
#include <string>

#include "codegen/conv_planner.h"
#include "codegen/kernel_context.h"
#include "codegen/kernels/kernel_util.h"
#include "codegen/kernels/gemm_core.h"
#include "ir/conv_geometry.h"

namespace vkc::codegen::kernels::conv {

struct ConvOperands {
  const DispatchGroup* group = nullptr;  // for the fused prologue / epilogue (codegen/fusion.h)
  const ir::Op* op = nullptr;
  ir::ConvGeometry g;
  const ir::Value* input = nullptr;
  const ir::Value* filter = nullptr;  // null for im2col
  const ir::Value* bias = nullptr;    // optional
  const ir::Value* output = nullptr;
  DType dtype = DType::f32;
  std::string what;  // the op, for messages
};

// Resolves the geometry and checks the element types and 32-bit indexing; vkc::Error names the op.
ConvOperands resolve_conv(const DispatchGroup& group, const KernelContext& ctx);

// The bindings of a conv kernel that reads input and filter itself: the input and the filter
// through their fused prologues (GLSL `x_at(uint)`, `w_at(uint)`, codegen/fusion.h), the bias
// (buffer "b"), then the result through the fused epilogue (`store_result`). Appends the bindings
// to `k`; `functions` holds the prologue and epilogue GLSL.
struct ConvIo {
  std::string buffers, functions;
  std::set<DType> types;  // storage types, for glsl_extensions
};
ConvIo bind_conv_io(const ConvOperands& c, const KernelContext& ctx, EmittedKernel& k);


std::string u32(int64_t v);  // "123u"

// float/T gather_x(uint n, uint c, uvec3 o, uvec3 k): the input element (read through the GLSL
// function `reader(uint offset)`, a plain buffer read or a fused prologue) that output position o
// (canonical D,H,W order in components 0..rank-1) sees through kernel tap k for absolute input
// channel c, or zero in the padding. Conv: position o*s - pb + k*d. Conv_transpose gathers the
// scatter of ONNX: position (o + pb - k*d) / s when that is an exact, in-range division; taps that
// land between input elements (the zeros of the strided upsampling) contribute nothing.
// Also emitted: `XRow x_row(uint n, uvec3 o)` and `T gather_row(XRow r, uint c, uvec3 k)`, the
// same read split into the part that depends on the output element only and the per-tap rest
// (gather_x(n, c, o, k) == gather_row(x_row(n, o), c, k)). A forward conv also gets
// `bool row_tap(XRow r, uvec3 k, out uint off)`: whether tap k of row r lies inside the input, and
// the offset of its channel 0 there (gather_row(r, c, k) reads off + c * channel stride).
// by_phase (a strided conv_transpose in the GEMM, codegen/conv_phases.h): o is the position q
// within the workgroup's phase and k the phase's tap j, so the read is input q + base(r) - j.
std::string gather_input_fn(const ir::ConvGeometry& g, const Shape& input_shape,
                            const std::string& reader, const std::string& value_type, bool by_phase = false);

// float load_w(uint grp, uint fl, uint c, uvec3 k): filter tap for output channel fl and input
// channel c, both relative to group grp, read through the GLSL function `reader(uint offset)`. Conv_transpose swaps the roles of the filter's C and F
// dims (C holds all input channels, F the outputs per group); its spatial taps are read at k
// directly because gather_input_fn already mirrors the index (o + pb - k*d), which is the flip.
// Also emitted, the same read in two parts: `uint w_row(uint grp, uint fl)` and
// `float w_tap(uint row, uint c, uvec3 k)`.
// by_phase: k is the phase's tap j, kernel tap r + s*j (zero past the kernel).
std::string load_filter_fn(const ir::ConvGeometry& g, const Shape& filter_shape,
                           const std::string& reader, bool by_phase = false);

// uvec3 decode_out(uint p): output position p (row-major over D,H,W) -> coordinates
// (by_phase: position p within a phase -> its coordinates q there).
std::string decode_out_fn(const ir::ConvGeometry& g, bool by_phase = false);

// void decode_k(uint k, out uint c, out uvec3 kk): GEMM column k -> (input channel in group,
// kernel tap), in the im2col column order of the filter layout (ir::im2col_columns).
// by_phase: over a phase's taps (ceil(K / s) per dim).
std::string decode_k_fn(const ir::ConvGeometry& g, bool by_phase = false);

// uvec3 decode_tap(uint t): kernel tap t (row-major over the kernel's spatial dims) -> its
// coordinates (by_phase: tap j of a phase, over the phase's taps).
std::string decode_tap_fn(const ir::ConvGeometry& g, bool by_phase = false);

// The GEMM's view of its group `grp` (a private uint of the kernel): `uint cgrp()`, the conv
// group, and `bool out_at(uint p, out uvec3 o)`, the output coordinates of GEMM position p, false
// for rows past the end of a phase. For a strided conv_transpose (codegen/conv_phases.h) grp
// counts conv groups x phases, and `uvec3 phase_r()`, phase_first/phase_base come with them.
std::string phase_fns(const ir::ConvGeometry& g);

// uint out_offset(uint n, uint f, uvec3 o): physical offset of an output element.
std::string out_offset_fn(const ir::ConvGeometry& g, const Shape& output_shape);

// The plan's launch shape, workgroup memory, tiles and notes, and the conv's flops and minimal
// bytes, on a one-dispatch conv kernel (the direct and depthwise kernels).
void take_plan(EmittedKernel& k, const ConvOperands& c, const ConvPlan& plan);

// float bias_of(uint f): the bias of output channel f, or 0.
std::string bias_fn(bool has_bias, const std::string& buffer);

// Statements that decode `linear` (an index in the output's physical order) into uint n, f and
// uvec3 o, so that invocation i writes physical element i and stores stay contiguous.
std::string decode_physical_output(const ir::ConvGeometry& g, const Shape& output_shape,
                                   const std::string& linear);

// 2 x multiply-accumulates actually needed (padding taps included, as a GEMM would do them).
double conv_flops(const ir::ConvGeometry& g);
// Bytes every kernel must at least move: read input, filter and bias once, write the output once.
double conv_min_bytes(const ConvOperands& c);

// The kernels of each strategy (conv_direct.cpp, conv_gemm.cpp, conv_split_k.cpp, im2col.cpp).
// Direct and depthwise: one invocation per output element, no workgroup memory.
EmittedKernel emit_conv_direct(const ConvOperands& c, const ConvPlan& plan, const KernelContext& ctx);
// Tiled depthwise (conv_depthwise_tiled.cpp): an input window and the filter taps staged in
// workgroup memory, several positions x channels per invocation (plan.depthwise).
EmittedKernel emit_conv_depthwise_tiled(const ConvOperands& c, const ConvPlan& plan, const KernelContext& ctx);
// Channels-last depthwise (conv_depthwise_channels_last.cpp): invocations over output channels,
// plan.run_w consecutive W outputs each, global memory only.
EmittedKernel emit_conv_depthwise_channels_last(const ConvOperands& c, const ConvPlan& plan,
                                                const KernelContext& ctx);
// The tiled GEMM; A is gathered from the input (implicit GEMM) when `columns_tensor` is empty,
// else read from that [N, G, P, K] im2col matrix. With a `partial_tensor` (split_k plans) each
// workgroup sums one K slice of its tile and writes the raw sums to slice `split` of that
// [split_k, output elements] f32 tensor; bias and epilogue are left to the reduce dispatch.
// Packed sources (`packed`, fp16 tensor-core plans with 16-byte staging only): the tensors A and B
// are read from, in the layouts of conv_pack.cpp; an empty `input`: A is gathered through the
// input's fused prologue (input_gathered_in_place).
struct PackedSources {
  std::string input, filter;
};
EmittedKernel emit_conv_gemm(const ConvOperands& c, const ConvPlan& plan, const KernelContext& ctx,
                             const std::string& columns_tensor, const std::string& partial_tensor = "",
                             const PackedSources* packed = nullptr);
// How the GEMM loop of emit_conv_gemm stages a tile for this conv's filter layout (gemm_core.h);
// one_tap_per_slice: the plan's slices hold one tap each (conv_slices_hold_one_tap), and the
// loads' per-slice state is computed by the loop's slice hook.
GemmCoreShape conv_gemm_core_shape(const SimtTile& t, const ir::ConvGeometry& g, const Shape& filter_shape,
                                   bool one_tap_per_slice = false);
// The split_k reduce dispatch (conv_split_k.cpp): sums the slices of `partial_tensor` per output
// element, adds the bias and stores through the fused epilogue, once per output.
EmittedKernel emit_conv_split_k_reduce(const ConvOperands& c, const ConvPlan& plan, const KernelContext& ctx,
                                       const std::string& partial_tensor);
// The im2col matrix of `c` (conv, conv_transpose or im2col op) written to `columns_tensor`, by the
// tiled kernel when a tile fits the target, else by the one-pass gather; `forced` ("tiled" or
// "gather", from the im2col op's forced strategy) picks one, and a tiled kernel that cannot fit
// is an error.
EmittedKernel emit_im2col_kernel(const ConvOperands& c, const KernelContext& ctx,
                                 const std::string& columns_tensor, const std::string& forced = "");

// The float16 layouts the tensor-core implicit GEMM reads 16 bytes at a time (conv_pack.cpp):
// the input as [N, S0.., C] (channels innermost; all channels, a group's at grp * Cg) and the
// filter as [G * Fg, taps, Cg] (GEMM column k = tap * Cg + c), Cg a multiple of 8.
Shape packed_input_shape(const ir::ConvGeometry& g);
Shape packed_filter_shape(const ir::ConvGeometry& g);
// True when the operand can be read as packed in place: a float16 buffer with no fused prologue,
// already in the packed layout (an NHWC input; an OHWI-like filter of a forward conv).
bool input_is_packed(const ConvOperands& c);
bool filter_is_packed(const ConvOperands& c);
// The dispatches that write the packed input / filter into a float16 scratch tensor.
EmittedKernel emit_pack_input(const ConvOperands& c, const KernelContext& ctx, const std::string& packed);
EmittedKernel emit_pack_filter(const ConvOperands& c, const KernelContext& ctx, const std::string& packed);
// True when the GEMM reads an input that is not packed in place through its fused prologue, 8
// values per staging load, instead of a pack dispatch writing a packed copy first: where the
// input's channels are innermost (the 8 values are one contiguous run: a channels-last value with
// a fused elementwise prologue, as squeeze-excite's scale) or it is a graph input read through a
// fused cast (the fp16 precision mode's first conv), so that neither costs a dispatch. Other
// inputs (a float16 graph input in NCHW) keep the pack dispatch: 8 strided loads per staged run,
// for each tap and N tile, would cost the GEMM more than one packing pass.
bool input_gathered_in_place(const ConvOperands& c);
// GLSL `uvec4 a_load8(uint m, uint k)` / `uvec4 b_load8(uint nn, uint k)` over the packed buffers
// `xp` and `wp` (8 consecutive GEMM columns from k, k a multiple of 8; zeros outside [M, K] and in
// the padding), for shaders/gemm_coopmat.glsl with VEC 8. With `gathered_input` (the input's
// shape), A's 8 values are read through the fused prologue `x_at` instead of from `xp`.
std::string packed_operand_fns(const ir::ConvGeometry& g, const Shape* gathered_input = nullptr);
// Where each K slice of `tk` columns holds one kernel tap (a group's input channels a multiple of
// tk; not transposed) and A comes from the packed input `xp`: the row hooks (A_ROWS) of the fp16
// and int8 tensor-core loops (shaders/gemm_coopmat.glsl, integer_coopmat.glsl) for a loop whose
// invocations each stage `rounds` A rows of `per_load` values per 16-byte load (8 float16 or 16
// int8 values), reading a_load<per_load>_row. a_row_begin decodes a staged row's output position
// once per tile, k_slice the slice's tap and each row's bounds test and offset once per slice, so
// that a load is one add and a 16-byte read (as the FMA loop's one-tap loads, conv_gemm.cpp).
// Padding reads uvec4(pad_word) (int8: the input zero point's bytes, XORed as the pack's are),
// rows past M zeros. `xs1`: the packed input's channel stride. Needs x_row, row_tap (the packed
// geometry's gather_input_fn) and decode_tap.
bool packed_rows_apply(const ir::ConvGeometry& g, uint32_t tk);
std::string packed_row_fns(const ir::ConvGeometry& g, uint32_t rounds, uint32_t per_load, uint32_t pad_word, int64_t xs1);

}  // namespace vkc::codegen::kernels::conv
