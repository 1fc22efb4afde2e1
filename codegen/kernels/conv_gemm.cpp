// The tiled GEMM kernel of the implicit_gemm, split_k and im2col conv strategies.
#include "codegen/fusion.h"
#include "codegen/glsl_types.h"
#include "codegen/kernels/conv_common.h"
#include "codegen/kernels/gemm_coopmat.h"
#include "codegen/kernels/gemm_core.h"
#include "codegen/shader_library.h"
#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen::kernels::conv {
namespace {

// a_begin(m) / a_load(m, k): row m (image n, output position p) and column k of the group's A
// matrix; 0 outside [M, K] so partial tiles need no special case. a_begin decodes the row once
// (gemm_core.glsl calls it for the invocation's staging row) into the private a_row / a_ok.
std::string load_a_fn(const ConvGemmShape& s, int64_t channels_per_group, bool from_columns) {
  std::string f = cat("bool a_ok;\n", from_columns ? "uint a_row;\n" : "XRow a_row;\n",
                      "void a_begin(uint m) {\n  a_ok = m < ", u32(s.m), ";\n  uint n = m / ", u32(s.positions),
                      ";\n  uint p = m % ", u32(s.positions), ";\n");
  if (from_columns)
    return f + cat("  a_row = ((n * ", u32(s.groups), " + grp) * ", u32(s.positions), " + p) * ", u32(s.k),
                   ";\n}\nfloat a_load(uint m, uint k) {\n  if (!a_ok || k >= ", u32(s.k),
                   ") return 0.0;\n  return float(cols.data[a_row + k]);\n}\n");
  return f + cat("  a_row = x_row(n, decode_out(p));\n}\nfloat a_load(uint m, uint k) {\n  if (!a_ok || k >= ",
                 u32(s.k), ") return 0.0;\n  uint c;\n  uvec3 kk;\n  decode_k(k, c, kk);\n",
                 "  return gather_row(a_row, cgrp() * ", u32(channels_per_group), " + c, kk);\n}\n");
}

// b_begin(nn) / b_load(nn, k): filter tap for GEMM column k and output channel nn of the group.
std::string load_b_fn(const ConvGemmShape& s) {
  return cat("bool b_ok;\nuint b_row;\nvoid b_begin(uint nn) {\n  b_ok = nn < ", u32(s.n),
             ";\n  b_row = w_row(cgrp(), nn);\n}\nfloat b_load(uint nn, uint k) {\n  if (!b_ok || k >= ", u32(s.k),
             ") return 0.0;\n  uint c;\n  uvec3 kk;\n  decode_k(k, c, kk);\n  return w_tap(b_row, c, kk);\n}\n");
}

// The loads of a plan whose K slices each hold one tap (conv_slices_hold_one_tap): columns are
// tap-major, k = tap * Cg + c. k_slice decodes the slice's tap (the same for the whole workgroup)
// and, for the invocation's one staging row (A is staged M-fast), whether that tap lands inside
// the input and where its channel 0 is; a_load is then one multiply-add and a read, where
// decode_k and the per-dim bounds tests ran for every element (a 3x3 conv: ~20 instructions per
// staged value). K is a whole number of slices, so no column test either.
std::string one_tap_load_fns(const ConvGemmShape& s, int64_t channels_per_group, int64_t x_channel_stride,
                             bool deferred) {
  const std::string cg = u32(channels_per_group), xs1 = u32(x_channel_stride);
  // With the input's prologue deferred (gemm_core.h, a_finish), the same element read raw and
  // finished at the store, where the slice's a_sok / a_sbase still hold (k_slice runs at the next
  // fetch). Outside the input the padded value is 0 after the prologue, as a_load's.
  std::string finish;
  if (deferred)
    finish = cat("float a_load_raw(uint m, uint k) { return a_sok ? float(x_at_raw(a_sbase + k * ", xs1,
                 ")) : 0.0; }\n",
                 "float a_finish(uint m, uint k, float v) {\n  return a_sok ? float(x_at_fin(v, a_sbase + k * ", xs1,
                 ")) : 0.0;\n}\n");
  return cat("bool a_ok, a_sok;\nXRow a_row;\nuint a_sbase;\nuvec3 s_kk;\nuint s_ktap;\n",
             "void a_begin(uint m) {\n  a_ok = m < ", u32(s.m), ";\n  a_row = x_row(m / ", u32(s.positions),
             ", decode_out(m % ", u32(s.positions), "));\n}\n",
             "void k_slice(uint k0) {\n  uint t = k0 / ", cg, ";\n  s_ktap = t * ", cg,
             ";\n  s_kk = decode_tap(t);\n  uint off = 0u;\n  a_sok = a_ok && row_tap(a_row, s_kk, off);\n",
             "  // Wraps below zero for k < s_ktap, which a_load never asks for; the sum is exact mod 2^32.\n",
             "  a_sbase = off + (cgrp() * ", cg, " - s_ktap) * ", xs1, ";\n}\n",
             "float a_load(uint m, uint k) { return a_sok ? float(x_at(a_sbase + k * ", xs1, ")) : 0.0; }\n",
             "bool b_ok;\nuint b_row;\nvoid b_begin(uint nn) {\n  b_ok = nn < ", u32(s.n),
             ";\n  b_row = w_row(cgrp(), nn);\n}\n",
             "float b_load(uint nn, uint k) { return b_ok ? w_tap(b_row, k - s_ktap, s_kk) : 0.0; }\n") + finish;
}

// void store_c(uint m, uint nn, float v): adds the bias and hands one output element of the
// workgroup's group to store_result (the fused epilogue, codegen/fusion.h). Split-K instead
// writes the raw partial sum of the workgroup's slice at the element's output offset in that
// slice of the partial tensor, so the reduce dispatch reads each slice in the output's own order;
// bias and epilogue wait for the reduce, which runs them once per output.
std::string store_c_fn(const ConvGemmShape& s, uint64_t split_stride) {
  std::string f = cat("void store_c(uint m, uint nn, float v) {\n  uvec3 o;\n  if (m >= ", u32(s.m),
                      " || nn >= ", u32(s.n), " || !out_at(m % ", u32(s.positions), ", o)) return;\n  uint f = cgrp() * ",
                      u32(s.n), " + nn;\n  uint off = out_offset(m / ", u32(s.positions), ", f, o);\n");
  if (split_stride == 0) return f + "  store_result(off, v + bias_of(f));\n}\n";
  return f + cat("  partial.data[split * ", u32(int64_t(split_stride)), " + off] = v;\n}\n");
}

// void store_c4(uint m, uint nn, vec4 v): rows m..m+3 (m % 4 == 0) of column nn, four consecutive
// output positions of one image (conv_positions_in_quads), through store_result4.
std::string store_c4_fn(const ConvGemmShape& s) {
  return cat("void store_c4(uint m, uint nn, vec4 v) {\n  if (m >= ", u32(s.m), " || nn >= ", u32(s.n),
             ") return;\n  uint f = cgrp() * ", u32(s.n), " + nn;\n  store_result4(out_offset(m / ", u32(s.positions),
             ", f, decode_out(m % ", u32(s.positions), ")), v + bias_of(f));\n}\n");
}

// void store_c4(uint m, uint nn, vec4 v) for the tensor-core loop: columns nn..nn+3 (nn % 4 == 0)
// of row m, four consecutive channels of one output position (channels_leave_in_quads), through
// store_result4, each with its own bias.
std::string store_c4_columns_fn(const ConvGemmShape& s) {
  return cat("void store_c4(uint m, uint nn, vec4 v) {\n  uvec3 o;\n  if (m >= ", u32(s.m), " || nn >= ", u32(s.n),
             " || !out_at(m % ", u32(s.positions), ", o)) return;\n  uint f = cgrp() * ", u32(s.n),
             " + nn;\n  store_result4(out_offset(m / ", u32(s.positions),
             ", f, o), v + vec4(bias_of(f), bias_of(f + 1u), bias_of(f + 2u), bias_of(f + 3u)));\n}\n");
}

// Whether four consecutive GEMM columns nn..nn+3 (nn % 4 == 0) of a row are four consecutive
// elements of the output: its channels are the innermost dim (the tensor-core convs' channels-last
// activations, ir/passes/channels_last.cpp) and each group's channel count is a multiple of 4.
bool channels_leave_in_quads(const ir::ConvGeometry& g, const Shape& output_shape, int64_t n) {
  return ir::logical_strides(output_shape, g.output_pos)[1] == 1 && n % 4 == 0;
}

}  // namespace

GemmCoreShape conv_gemm_core_shape(const SimtTile& t, const ir::ConvGeometry& g, const Shape& filter_shape,
                                   bool one_tap_per_slice) {
  GemmCoreShape core{t};
  // Per-element gathers' index math makes the loop body long: unrolled over TK it ran 3-5x slower than
  // rolled on H200 (ResNet 3x3 conv 6.1 ms unrolled, 1.2 ms rolled; bench/RESULTS.md, 2026-11-24).
  core.kk_unroll = 1;
  core.slice_hook = one_tap_per_slice;
  // With the tap decoded once per slice the loads are short, and the multiply loop unrolls as for
  // plain matrices: fully unrolled measured 7-17% faster than rolled, and 2 or 4 steps per
  // iteration slower than both on the seed conv (H200, bench/RESULTS.md, session 19).
  if (one_tap_per_slice) core.kk_unroll = 0;
  // Output positions contiguous (channels not the output's innermost dim, e.g. NCHW): results
  // leave with neighbouring invocations on neighbouring positions (seed conv 2.919 -> 2.698 ms,
  // the 1x1 conv 0.047 -> 0.042; a conv with K = 2304, 1.108 -> 1.135: its long K hides the
  // scattered stores; same call, H200).
  core.store_m_fast = g.output_pos[1] != int(g.output_pos.size()) - 1 && core.store_m_fast_fits();
  // B walks K fastest when the filter's output channels are not its contiguous dim (OIHW-like
  // filters: K = C x taps runs along memory), so staging reads whole cache lines.
  std::vector<int64_t> ws = ir::logical_strides(filter_shape, g.filter_pos);
  core.b_kfast = ws[0] != 1 && core.stages_evenly(t.tn, true);  // w_row: n walks ws[0] in conv and conv_transpose
  return core;
}

EmittedKernel emit_conv_gemm(const ConvOperands& c, const ConvPlan& plan, const KernelContext& ctx,
                             const std::string& columns_tensor, const std::string& partial_tensor,
                             const PackedSources* packed) {
  const ir::ConvGeometry& g = c.g;
  ConvGemmShape s = conv_gemm_shape(g);
  bool from_columns = !columns_tensor.empty();
  bool split = !partial_tensor.empty();
  check(!split || (plan.split_k > 1 && !from_columns), c.what, ": internal: split-K plan mismatch");
  EmittedKernel k;
  const bool coop = plan.strategy == ConvStrategy::implicit_gemm_coopmat;
  // Whether results may leave in 16-byte stores of four positions (the FMA loop's register
  // blocks hold 4 rows, and the output keeps positions dense); then also whether the epilogue
  // takes them (st.quads). Not split-K's raw partial sums: with no side operands to read, their
  // stores through workgroup memory (whole rows of positions) measured faster (H200, session 30:
  // ResNet-50 b32 10.70 ms against 10.90 with quads there, FCN-ResNet50 5.36 against 5.57).
  const bool quads_fit = !coop && !split && s.phases == 1 && plan.simt().rm % 4 == 0 &&
                         conv_positions_in_quads(g, uint32_t(dtype_size(c.output->type.dtype)));
  // The tensor-core loop hands each lane 4 consecutive columns where they are 4 consecutive
  // channels of the output (store_c4_columns_fn).
  const bool coop_quads_fit = coop && !split && s.phases == 1 && coop_quads_supported(plan.coop()) &&
                              channels_leave_in_quads(g, c.output->type.shape, s.n);
  check(!coop || (!from_columns && !split), c.what, ": internal: fp16 tensor-core plan mismatch");
  // 16-byte staging reads A and B from their packed forms (conv_pack.cpp), not through x_at / w_at.
  const bool vec8 = coop && plan.coop().vec == 8;
  check(vec8 == (packed != nullptr), c.what, ": internal: packed sources do not match the plan");
  k.kernel = from_columns ? "conv_gemm_columns" : split ? "conv_split_k_gemm"
             : coop      ? "conv_implicit_gemm_coopmat"
                         : "conv_implicit_gemm";
  k.strategy = conv_strategy_name(plan.strategy);
  // Binding 0.. is A's source: the input through its fused prologue (implicit GEMM) or the im2col
  // matrix (whose kernel applied the prologue); then the filter, and then the bias and the fused
  // epilogue, or for split-K only the partial sums (the reduce dispatch binds the other two).
  const bool one_tap = !coop && !from_columns && conv_slices_hold_one_tap(g, plan);
  FusedCode xl;
  std::string buffers;
  if (from_columns) {
    buffers = glsl_buffer(0, c.dtype, false, "cols");
    k.bindings = {{columns_tensor, false}};
  } else if (vec8 && !packed->input.empty()) {
    buffers = glsl_uvec4_buffer(0, "xp");
    k.bindings = {{packed->input, false}};
  } else {
    // A prologue of elementwise math (DenseNet's pre-activation BN + ReLU) is finished where A
    // is stored to workgroup memory, on the loop that stages one tap per slice (gemm_core.h,
    // a_finish). H200, session 40, same binary: DenseNet-121 b32 14.6 -> 11.5 ms, EfficientNet-B0
    // b32 3.7 -> 3.2 (its squeeze-excite scales); a lone 1x1 conv of K 512 at 28x28 0.59 -> 0.39.
    xl = operand_loader(*c.group, c.input, "x_at", 0, ctx, one_tap);
    buffers = xl.buffers;
    k.bindings = xl.bindings;
  }
  FusedCode wl;
  if (vec8) {
    buffers += glsl_uvec4_buffer(uint32_t(k.bindings.size()), "wp");
    k.bindings.push_back({packed->filter, false});
  } else {
    wl = operand_loader(*c.group, c.filter, "w_at", uint32_t(k.bindings.size()), ctx);
    buffers += wl.buffers;
    k.bindings.insert(k.bindings.end(), wl.bindings.begin(), wl.bindings.end());
  }
  FusedCode st;
  if (split) {
    buffers += glsl_buffer(uint32_t(k.bindings.size()), DType::f32, true, "partial");
    k.bindings.push_back({partial_tensor, true});
  } else {
    if (c.bias) {
      buffers += glsl_buffer(uint32_t(k.bindings.size()), c.dtype, false, "b");
      k.bindings.push_back({ctx.tensor(c.bias), false});
    }
    st = result_store(*c.group, uint32_t(k.bindings.size()), ctx, quads_fit || coop_quads_fit);
    buffers += st.buffers;
    k.bindings.insert(k.bindings.end(), st.bindings.begin(), st.bindings.end());
  }
  std::set<DType> types{c.dtype};
  for (const FusedCode* f : {&xl, &wl, &st}) types.insert(f->types.begin(), f->types.end());

  const bool by_phase = s.phases > 1;
  check(!by_phase || !from_columns, c.what, ": internal: a conv_transpose by phase has no column form");
  std::string helpers = xl.functions + wl.functions + st.functions + decode_out_fn(g, by_phase) +
                        out_offset_fn(g, c.output->type.shape) + phase_fns(g);
  if (!split) helpers += bias_fn(c.bias != nullptr, "b");
  // The tensor-core loop's row hooks where each K slice holds one tap of the packed input.
  // H200, session 20: seed conv 0.712 -> 0.673 ms, resnet3x3 8x256x56x56 0.204 -> 0.182, ggml's
  // 16x256x19x19 * 4096x256x4x4 0.778 -> 0.711.
  const bool coop_rows = vec8 && !packed->input.empty() && !by_phase && packed_rows_apply(g, plan.coop().tk);
  if (vec8) {
    helpers += packed_operand_fns(g, packed->input.empty() ? &c.input->type.shape : nullptr);
    if (coop_rows)  // the packed input holds channels innermost: stride 1
      helpers += packed_row_fns(g, coop_a_rounds(plan.coop()), 8, 0, 1);
  } else {
    helpers += load_filter_fn(g, c.filter->type.shape, "w_at", by_phase);
    if (!from_columns) helpers += gather_input_fn(g, c.input->type.shape, "x_at", "float", by_phase);
    if (one_tap) {
      const int64_t xs1 = ir::logical_strides(c.input->type.shape, g.input_pos)[1];
      helpers += decode_tap_fn(g) + one_tap_load_fns(s, g.in_channels_per_group(), xs1, xl.deferred);
    } else {
      helpers += decode_k_fn(g, by_phase) + load_a_fn(s, g.in_channels_per_group(), from_columns) + load_b_fn(s);
    }
  }
  helpers += store_c_fn(s, split ? uint64_t(c.output->type.numel()) : 0);

  const uint64_t tm = tile_m(plan.tile), tn = tile_n(plan.tile), tk = tile_k(plan.tile);
  uint64_t m_tiles = ceil_div(uint64_t(s.m), tm), n_tiles = ceil_div(uint64_t(s.n), tn);
  uint64_t k_steps = ceil_div(uint64_t(s.k), tk);
  // The tensor-core loop hands results out walking M fastest unless the output's channels (N)
  // are its innermost dim.
  k.cooperative_matrix_khr = coop && coopmat_uses_khr(ctx.target);
  // The fragments' staging and store layout assume the subgroup size the tile was planned for: a
  // device with another size must refuse the module (module/device_fit.h), not run it wrong.
  if (coop) k.subgroup_sizes = {plan.coop().subgroup, plan.coop().subgroup};
  std::string core;
  bool quads = false;
  uint32_t sets = 1;  // the tensor-core loop's register sets (coop_register_sets)
  if (coop) {
    quads = coop_quads_fit && st.quads;
    sets = coop_register_sets(plan.coop(), ctx.target);
    core = gemm_coopmat_glsl(plan.coop(), g.output_pos[1] != int(g.output_pos.size()) - 1, k.cooperative_matrix_khr,
                             coop_rows, quads, sets, coop_lagged(plan.coop(), ctx.target));
    if (quads) helpers += store_c4_columns_fn(s);
  } else {
    GemmCoreShape shape = conv_gemm_core_shape(plan.simt(), g, c.filter->type.shape, one_tap);
    shape.a_finish = xl.deferred;
    if (quads_fit && st.quads) {
      shape.store_quads = GemmCoreShape::Quads::rows;
      shape.store_m_fast = false;
      quads = true;
      helpers += store_c4_fn(s);
    }
    core = gemm_core_glsl(shape);
    k.optimize_spirv = shape.spirv_opt();
  }
  uint32_t threads = invocations(plan.tile);
  check_32bit_elements(plan.tile_count * plan.split_k, "the tile grid", c.what);
  // The balanced-slice bounds compute (split + 1) * K_STEPS in 32 bits.
  check_32bit_elements(k_steps * plan.split_k, "the split-K step range", c.what);
  k.glsl = instantiate_shader("conv_gemm", {{"EXTENSIONS", glsl_extensions(types)},
                                            {"THREADS", std::to_string(threads)},
                                            {"BUFFERS", buffers},
                                            {"HELPERS", helpers},
                                            {"GEMM_CORE", core},
                                            {"K_STEPS", std::to_string(k_steps)},
                                            {"SPLITS", std::to_string(plan.split_k)},
                                            {"M_TILES", std::to_string(m_tiles)},
                                            {"N_TILES", std::to_string(n_tiles)},
                                            {"TILES", std::to_string(plan.tile_count)}});
  k.workgroup_size = plan.workgroup_size;
  k.workgroup_count = plan.workgroup_count;
  k.workgroup_memory_bytes = plan.workgroup_memory_bytes;
  k.tiles = plan.tiles;
  if (quads) k.tiles["quad_stores"] = 1;  // --report shows these
  if (sets > 1) k.tiles["register_sets"] = sets;
  if (xl.deferred) k.tiles["prologue_at_store"] = 1;
  k.flops = conv_flops(g);
  k.bytes = conv_min_bytes(c);
  if (split)  // the partial sums instead of the output (the reduce dispatch counts the rest)
    k.bytes += 4.0 * double(plan.partial_elements) - double(c.output->type.size_bytes()) -
               (c.bias ? double(c.bias->type.size_bytes()) : 0.0);
  if (from_columns)  // the GEMM reads the columns instead of the input
    k.bytes += double(s.groups) * double(s.m) * double(s.k) * double(dtype_size(c.dtype)) -
               double(c.input->type.size_bytes());
  k.notes = plan.notes;
  return k;
}

}  // namespace vkc::codegen::kernels::conv
