// Packing a conv's input and filter for the tensor-core implicit GEMM's 16-byte staging loads
// (shaders/gemm_coopmat.glsl with VEC 8, shaders/conv_pack.comp).
//
// Why pack: one staged float16 value per gather cost the tensor-core loop its speed (bench/
// RESULTS.md, Run I: ~30 instructions of index math per 2-byte load, four times the MMAs' time).
// With the GEMM column order k = tap * Cg + c and channels innermost in memory, the 8 columns
// k..k+7 (k a multiple of 8, Cg a multiple of 8) are 8 neighbouring channels of one input
// position and one tap: one aligned 16-byte load, one bounds test, one index computation. The
// packing passes read each source element once (through its fused prologue and any layout) and
// cost a copy of the input and the filter, small beside the GEMM's reuse of them.
#include <algorithm>

#include "codegen/conv_phases.h"
#include "codegen/fusion.h"
#include "codegen/glsl_types.h"
#include "codegen/kernels/conv_common.h"
#include "codegen/kernels/kernel_util.h"
#include "codegen/shader_library.h"
#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen::kernels::conv {
namespace {

// The geometry's input positions for the packed input: N outermost, then the spatial dims in
// order, channels innermost.
std::vector<int> packed_input_pos(const ir::ConvGeometry& g) {
  std::vector<int> pos{0, g.spatial_rank + 1};
  for (int i = 0; i < g.spatial_rank; ++i) pos.push_back(1 + i);
  return pos;
}

bool raw_f16(const ConvOperands& c, const ir::Value* v) {
  return v->type.dtype == DType::f16 &&
         std::none_of(c.group->prologue.begin(), c.group->prologue.end(),
                      [&](const ir::Op* op) { return op->result() == v; });
}

// The pack dispatch of `operand` ("input" or "filter"): `fns` defines
// `float pack_value(uint row, uint col)` over `io`'s bindings, the packed [rows][cols] float16
// matrix goes to `packed`.
EmittedKernel emit_pack(const ConvOperands& c, const KernelContext& ctx, const FusedCode& io, std::string fns,
                        const std::string& packed, int64_t rows, int64_t cols, bool row_fast,
                        const std::string& operand) {
  check(cols % 8 == 0, c.what, ": internal: packed rows of ", cols, " values are not whole 16-byte runs");
  check_32bit_elements(uint64_t(rows) * uint64_t(cols), "the packed " + operand, c.what);
  EmittedKernel k;
  k.kernel = "conv_pack_" + operand;
  k.strategy = "implicit_gemm_coopmat";
  k.bindings = io.bindings;
  std::string buffers = io.buffers + glsl_uvec4_buffer(uint32_t(k.bindings.size()), "packed", true);
  k.bindings.push_back({packed, true});
  std::set<DType> types = io.types;
  types.insert(DType::f16);
  plan_linear(k, uint64_t(rows * cols / 8), 256, ctx.target, c.what);
  k.glsl = instantiate_shader("conv_pack", {{"EXTENSIONS", glsl_extensions(types)},
                                            {"WG_SIZE", cat(k.workgroup_size[0])},
                                            {"BUFFERS", buffers},
                                            {"FUNCTIONS", io.functions + fns},
                                            {"INDEX", folded_global_index(k.workgroup_size[0])},
                                            {"ROWS", cat(rows)},
                                            {"COLS", cat(cols)},
                                            {"ROW_FAST", row_fast ? "1" : "0"}});
  k.bytes = io.bytes + 2.0 * double(rows) * double(cols);
  k.tiles = {{"packed_rows", rows}, {"packed_columns", cols}};
  return k;
}

}  // namespace

Shape packed_input_shape(const ir::ConvGeometry& g) {
  Shape s{g.batch};
  s.insert(s.end(), g.in_spatial.begin(), g.in_spatial.end());
  s.push_back(g.in_channels);
  return s;
}

Shape packed_filter_shape(const ir::ConvGeometry& g) {
  return {g.groups * g.out_channels_per_group(), product(g.kernel), g.in_channels_per_group()};
}

bool input_is_packed(const ConvOperands& c) {
  return raw_f16(c, c.input) &&
         ir::logical_strides(c.input->type.shape, c.g.input_pos) ==
             ir::logical_strides(packed_input_shape(c.g), packed_input_pos(c.g));
}

bool filter_is_packed(const ConvOperands& c) {
  if (c.g.transposed || !raw_f16(c, c.filter)) return false;
  // Logical filter dims [F, C, K0..]: F outermost, then the taps, C innermost.
  const ir::ConvGeometry& g = c.g;
  std::vector<int64_t> want(size_t(2 + g.spatial_rank));
  int64_t stride = 1;
  want[1] = stride;
  stride *= g.in_channels_per_group();
  for (size_t i = size_t(g.spatial_rank); i-- > 0;) {
    want[2 + i] = stride;
    stride *= g.kernel[i];
  }
  want[0] = stride;
  return ir::logical_strides(c.filter->type.shape, g.filter_pos) == want;
}

EmittedKernel emit_pack_input(const ConvOperands& c, const KernelContext& ctx, const std::string& packed) {
  const ir::ConvGeometry& g = c.g;
  FusedCode xl = operand_loader(*c.group, c.input, "x_at", 0, ctx);
  std::vector<int64_t> xs = ir::logical_strides(c.input->type.shape, g.input_pos);
  const int64_t positions = product(g.in_spatial);
  std::string f = cat("float pack_value(uint row, uint col) {\n  uint p = row % ", u32(positions),
                      ";\n  uint off = row / ", u32(positions), " * ", u32(xs[0]), " + col * ", u32(xs[1]), ";\n");
  for (size_t i = size_t(g.spatial_rank); i-- > 0;) {
    f += cat("  off += p % ", u32(g.in_spatial[i]), " * ", u32(xs[2 + i]), ";\n");
    if (i > 0) f += cat("  p /= ", u32(g.in_spatial[i]), ";\n");
  }
  f += "  return float(x_at(off));\n}\n";
  // Channels-outer sources read coalesced when neighbouring invocations take neighbouring positions.
  return emit_pack(c, ctx, xl, f, packed, g.batch * positions, g.in_channels, xs[1] != 1, "input");
}

EmittedKernel emit_pack_filter(const ConvOperands& c, const KernelContext& ctx, const std::string& packed) {
  const ir::ConvGeometry& g = c.g;
  FusedCode wl = operand_loader(*c.group, c.filter, "w_at", 0, ctx);
  const int64_t cg = g.in_channels_per_group(), fg = g.out_channels_per_group();
  std::string f = load_filter_fn(g, c.filter->type.shape, "w_at") + decode_tap_fn(g) +
                  cat("float pack_value(uint row, uint col) {\n  return load_w(row / ", u32(fg), ", row % ", u32(fg),
                      ", col % ", u32(cg), ", decode_tap(col / ", u32(cg), "));\n}\n");
  return emit_pack(c, ctx, wl, f, packed, g.groups * fg, product(g.kernel) * cg, false, "filter");
}

bool input_gathered_in_place(const ConvOperands& c) {
  if (input_is_packed(c)) return false;
  // Channels innermost: the 8 values are neighbours, one contiguous run.
  if (ir::logical_strides(c.input->type.shape, c.g.input_pos)[1] == 1) return true;
  // A graph input through its fused cast (the fp16 precision mode's input cast; a float16 graph
  // input, as in the fp16 conv benchmarks, keeps its pack dispatch and the GEMM's 16-byte loads).
  const ir::Value* v = c.input;
  bool cast = false;
  auto in_prologue = [&](const ir::Op* op) {
    return std::find(c.group->prologue.begin(), c.group->prologue.end(), op) != c.group->prologue.end();
  };
  while (v->producer != nullptr && in_prologue(v->producer) && v->producer->num_operands() == 1) {
    cast = cast || v->producer->kind == ir::OpKind::Cast;
    v = v->producer->operand(0);
  }
  return cast && v->producer == nullptr;
}

std::string packed_operand_fns(const ir::ConvGeometry& g, const Shape* gathered_input) {
  ConvGemmShape s = conv_gemm_shape(g);
  const int64_t cg = g.in_channels_per_group();
  const bool by_phase = s.phases > 1;  // a strided conv_transpose (codegen/conv_phases.h)
  std::string a_fns;
  if (gathered_input) {
    // 8 channels from c read one by one through the fused prologue x_at, packed as float16 pairs
    // (as the pack dispatch would have stored them).
    a_fns = gather_input_fn(g, *gathered_input, "x_at", "float", by_phase) +
            "uint gather2(XRow r, uint c, uvec3 k) {\n"
            "  return packHalf2x16(vec2(gather_row(r, c, k), gather_row(r, c + 1u, k)));\n}\n"
            "uvec4 gather8(XRow r, uint c, uvec3 k) {\n"
            "  return uvec4(gather2(r, c, k), gather2(r, c + 2u, k), gather2(r, c + 4u, k), gather2(r, c + 6u, k));\n}\n";
  } else {
    ir::ConvGeometry packed = g;
    packed.input_pos = packed_input_pos(g);
    // gather_row over the packed input returns the uvec4 of 8 channels from c (a multiple of 8).
    a_fns = "uvec4 xp_load8(uint off) { return xp.data[off / 8u]; }\n" +
            gather_input_fn(packed, packed_input_shape(g), "xp_load8", "uvec4", by_phase) +
            "uvec4 gather8(XRow r, uint c, uvec3 k) { return gather_row(r, c, k); }\n";
  }
  // B: the packed filter [F, taps, C] holds every kernel tap; a phase reads its tap r + s*j of it.
  std::string b_fn = cat("uvec4 b_load8(uint nn, uint k) {\n  if (nn >= ", u32(s.n), " || k >= ", u32(s.k),
                         ") return uvec4(0u);\n");
  if (!by_phase) {
    b_fn += cat("  return wp.data[((grp * ", u32(s.n), " + nn) * ", u32(s.k), " + k) / 8u];\n}\n");
  } else {
    const int64_t full_k = cg * product(g.kernel);
    b_fn += cat("  uvec3 j = decode_tap(k / ", u32(cg), ");\n  uvec3 r = phase_r();\n  uint t = 0u;\n");
    for (size_t i = 0; i < size_t(g.spatial_rank); ++i)
      b_fn += cat("  uint k", i, " = r[", i, "] + j[", i, "] * ", u32(g.strides[i]), ";\n  if (k", i, " >= ",
                  u32(g.kernel[i]), ") return uvec4(0u);\n  t = t * ", u32(g.kernel[i]), " + k", i, ";\n");
    b_fn += cat("  return wp.data[((cgrp() * ", u32(s.n), " + nn) * ", u32(full_k), " + t * ", u32(cg), " + k % ",
                u32(cg), ") / 8u];\n}\n");
  }
  return a_fns + decode_tap_fn(g, by_phase) +
         cat("uvec4 a_load8(uint m, uint k) {\n  if (m >= ", u32(s.m), " || k >= ", u32(s.k),
             ") return uvec4(0u);\n  XRow r = x_row(m / ", u32(s.positions), ", decode_out(m % ", u32(s.positions),
             "));\n  return gather8(r, cgrp() * ", u32(cg), " + k % ", u32(cg), ", decode_tap(k / ", u32(cg),
             "));\n}\n") +
         b_fn;
}

bool packed_rows_apply(const ir::ConvGeometry& g, uint32_t tk) {
  return !g.transposed && tk > 0 && g.in_channels_per_group() % int64_t(tk) == 0;
}

std::string packed_row_fns(const ir::ConvGeometry& g, uint32_t rounds, uint32_t per_load, uint32_t pad_word,
                           int64_t channel_stride) {
  ConvGemmShape s = conv_gemm_shape(g);
  const std::string cg = u32(g.in_channels_per_group()), r = u32(rounds), xs1 = u32(channel_stride);
  // One statement per row, written out: constant indices keep the arrays in registers (this text
  // precedes the loop's extensions, so it cannot ask for an unrolled loop).
  std::string rows;
  for (uint32_t i = 0; i < rounds; ++i)
    rows += cat("  off = 0u;\n  a_sok[", i, "] = a_rok[", i, "] && row_tap(a_rows[", i, "], kk, off);\n  a_sbase[", i,
                "] = off + (cgrp() * ", cg, " - s_ktap) * ", xs1, ";\n");
  const std::string read = cat("xp.data[(a_sbase[i] + k * ", xs1, ") / ", per_load, "u]");
  const std::string load =
      pad_word == 0 ? cat("a_sok[i] ? ", read, " : uvec4(0u)")
                    : cat("a_rok[i] ? ((a_sok[i] ? ", read, " : uvec4(0u)) ^ uvec4(", pad_word, "u)) : uvec4(0u)");
  return cat("XRow a_rows[", r, "];\nbool a_rok[", r, "], a_sok[", r, "];\nuint a_sbase[", r, "], s_ktap;\n",
             "void a_row_begin(uint i, uint m) {\n  a_rok[i] = m < ", u32(s.m), ";\n  a_rows[i] = x_row(m / ",
             u32(s.positions), ", decode_out(m % ", u32(s.positions), "));\n}\n",
             "void k_slice(uint k0) {\n  uint t = k0 / ", cg, ";\n  s_ktap = t * ", cg, ";\n  uvec3 kk = decode_tap(t);\n",
             "  uint off;\n  // a_sbase wraps below zero for the columns before s_ktap, which the loads never ask for.\n",
             rows, "}\n", "uvec4 a_load", per_load, "_row(uint i, uint k) { return ", load, "; }\n");
}

}  // namespace vkc::codegen::kernels::conv
