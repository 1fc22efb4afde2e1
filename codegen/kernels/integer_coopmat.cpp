// conv_integer on int8 tensor cores (see integer_coopmat.h for the arithmetic). Three dispatches:
// the input packed as signed int8 [N x input positions][C] (channels innermost, s ^ z' per byte),
// the filter as [F][taps][Cg] (GEMM column k = tap * Cg + c), both in 16-byte runs
// (shaders/integer_pack.comp), then the implicit GEMM (shaders/conv_gemm.comp with the int8 loop
// shaders/integer_coopmat.glsl), whose store subtracts the folded zero-point term, adds the bias
// and requantizes (integer_common.h's store) into the output's own layout.
#include "codegen/kernels/integer_coopmat.h"

#include <algorithm>
#include <set>

#include "codegen/conv_planner.h"
#include "codegen/glsl_types.h"
#include "codegen/grid.h"
#include "codegen/kernels/conv_common.h"
#include "codegen/kernels/gemm_coopmat.h"
#include "codegen/kernels/integer_common.h"
#include "codegen/kernels/kernel_util.h"
#include "codegen/shader_library.h"
#include "ir/conv_geometry.h"
#include "ir/matmul_geometry.h"
#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen::kernels {
namespace {

using conv::decode_tap_fn;
using conv::u32;
using integer::is_constant;

// The activation zero point moved into the signed domain (z' of integer_coopmat.h).
int64_t signed_zero_point(const ir::Op& op) {
  const int64_t zp = op.operand(2)->producer->attr_tensor("value")->get_i64(0);
  return op.operand(0)->type.dtype == DType::u8 ? zp - 128 : zp;
}

bool all_zero(const ir::Value* v) {
  const HostTensor& t = *v->producer->attr_tensor("value");
  for (int64_t i = 0; i < t.numel(); ++i)
    if (t.get_i64(i) != 0) return false;
  return true;
}

// The matmul as one GEMM: A's batches folded into its rows (B is one matrix), K and N contiguous.
struct MatmulShape {
  int64_t m = 0, n = 0, k = 0;
};
MatmulShape matmul_shape(const ir::Op& op) {
  ir::MatrixView a = ir::matrix_view(op.operand(0)->type.shape, true, false);
  ir::MatrixView b = ir::matrix_view(op.operand(1)->type.shape, false, false);
  return {op.operand(0)->type.numel() / a.cols, b.cols, a.cols};
}

// Why the op's operands do not fit the kernel's arithmetic ("" when they do).
std::string operand_misfit(const ir::Op& op) {
  const bool conv = op.kind == ir::OpKind::ConvInteger;
  const ir::Value *x = op.operand(0), *w = op.operand(1), *xzp = op.operand(2), *wzp = op.operand(3);
  const char* lhs = conv ? "the input" : "the lhs";
  const char* rhs = conv ? "the filter" : "the rhs";
  if (x->type.dtype != DType::u8 && x->type.dtype != DType::i8) return cat(lhs, " is not 8-bit");
  if (w->type.dtype != DType::i8) return cat(rhs, " is not i8 (u8 weights do not fit a signed int8 product)");
  if (!is_constant(xzp) || xzp->type.numel() != 1) return cat(lhs, " zero point is not a per-tensor constant");
  if (!is_constant(wzp) || !all_zero(wzp)) return cat(rhs, " zero points are not constant zeros");
  if (signed_zero_point(op) != 0 && !is_constant(w))
    return cat(rhs, " is not a constant (its sums fold the ", conv ? "input" : "lhs", " zero point)");
  if (conv) {
    const ir::ConvGeometry g = ir::conv_geometry(op);
    if (g.in_channels_per_group() % 16 != 0)
      return cat(g.in_channels_per_group(), " input channels per group are not a multiple of 16 (16-byte runs)");
    return "";
  }
  if (op.attr_bool("transpose_a") || op.attr_bool("transpose_b")) return "a transposed operand";
  if (x->type.shape.size() < 2 || w->type.shape.size() != 2) return "the rhs is not one matrix or the lhs not a matrix";
  const MatmulShape s = matmul_shape(op);
  if (s.k % 16 != 0 || s.n % 16 != 0) return cat("K = ", s.k, " or N = ", s.n, " is not a multiple of 16 (16-byte runs)");
  return "";
}

ir::ConvGeometry packed_geometry(const ir::ConvGeometry& g) {
  ir::ConvGeometry p = g;
  p.input_pos = {0, g.spatial_rank + 1};
  for (int i = 0; i < g.spatial_rank; ++i) p.input_pos.push_back(1 + i);
  return p;
}

// The pack dispatch: `fns` defines `uint pack_byte(uint row, uint col)` (a byte in the low 8
// bits) over `reader`'s binding 0; the [rows][cols] int8 matrix goes to `packed`.
EmittedKernel emit_pack(const ir::Op& op, const KernelContext& ctx, const ir::Value* source, const std::string& fns,
                        const std::string& packed, int64_t rows, int64_t cols, bool row_fast,
                        const std::string& operand) {
  const std::string what = op.describe();
  check(cols % 16 == 0, what, ": internal: packed rows of ", cols, " bytes are not whole 16-byte runs");
  check_32bit_elements(uint64_t(rows) * uint64_t(cols), "the packed " + operand, what);
  std::set<DType> types;
  integer::Reader r = integer::int_reader(0, source->type.dtype, "src", ctx.target, types);
  EmittedKernel k;
  k.kernel = "integer_pack_" + operand;
  k.strategy = "int8 tensor cores";
  k.bindings = {{ctx.tensor(source), false}, {packed, true}};
  plan_linear(k, uint64_t(rows * cols / 16), 256, ctx.target, what);
  k.glsl = instantiate_shader("integer_pack", {{"EXTENSIONS", glsl_extensions(types)},
                                               {"WG_SIZE", cat(k.workgroup_size[0])},
                                               {"BUFFERS", r.decl + glsl_uvec4_buffer(1, "packed", true)},
                                               {"FUNCTIONS", r.fn + fns},
                                               {"INDEX", folded_global_index(k.workgroup_size[0])},
                                               {"ROWS", cat(rows)},
                                               {"COLS", cat(cols)},
                                               {"ROW_FAST", row_fast ? "1" : "0"}});
  k.bytes = double(source->type.size_bytes()) + double(rows) * double(cols);
  k.tiles = {{"packed_rows", rows}, {"packed_columns", cols}};
  return k;
}

EmittedKernel emit_pack_input(const ir::Op& op, const KernelContext& ctx, const std::string& packed, int64_t zp) {
  const ir::ConvGeometry g = ir::conv_geometry(op);
  const ir::Value* x = op.operand(0);
  std::vector<int64_t> xs = ir::logical_strides(x->type.shape, g.input_pos);
  const int64_t positions = product(g.in_spatial);
  // u8 -> s8 flips the top bit; then XOR z' (the padding trick of integer_coopmat.h).
  const uint32_t flip = (x->type.dtype == DType::u8 ? 0x80u : 0u) ^ uint32_t(zp & 0xff);
  std::string f = cat("uint pack_byte(uint row, uint col) {\n  uint p = row % ", u32(positions), ";\n  uint off = row / ",
                      u32(positions), " * ", u32(xs[0]), " + col * ", u32(xs[1]), ";\n");
  for (size_t i = size_t(g.spatial_rank); i-- > 0;) {
    f += cat("  off += p % ", u32(g.in_spatial[i]), " * ", u32(xs[2 + i]), ";\n");
    if (i > 0) f += cat("  p /= ", u32(g.in_spatial[i]), ";\n");
  }
  f += cat("  return (uint(src_at(off)) ^ ", flip, "u) & 0xffu;\n}\n");
  // Channels-outer sources read coalesced when neighbouring invocations take neighbouring positions.
  return emit_pack(op, ctx, x, f, packed, g.batch * positions, g.in_channels, xs[1] != 1, "input");
}

EmittedKernel emit_pack_filter(const ir::Op& op, const KernelContext& ctx, const std::string& packed) {
  const ir::ConvGeometry g = ir::conv_geometry(op);
  const ir::Value* w = op.operand(1);
  std::vector<int64_t> ws = ir::logical_strides(w->type.shape, g.filter_pos);
  const int64_t cg = g.in_channels_per_group();
  std::string f = decode_tap_fn(g) + cat("uint pack_byte(uint row, uint col) {\n  uvec3 kk = decode_tap(col / ", u32(cg),
                                         ");\n  uint off = row * ", u32(ws[0]), " + col % ", u32(cg), " * ", u32(ws[1]),
                                         ";\n");
  for (size_t i = 0; i < size_t(g.spatial_rank); ++i) f += cat("  off += kk[", i, "] * ", u32(ws[2 + i]), ";\n");
  f += "  return uint(src_at(off)) & 0xffu;\n}\n";
  return emit_pack(op, ctx, w, f, packed, g.out_channels, product(g.kernel) * cg, false, "filter");
}

// "int corr(uint f)": z' * sum_k w[f, k], folded from the constant filter or rhs into `table`
// (0 when z' is 0).
std::string correction_fn(const ir::Op& op, int64_t zp, integer::ChannelTable& table) {
  if (zp == 0) return "int corr(uint f) { return 0; }\n";
  const HostTensor& w = *op.operand(1)->producer->attr_tensor("value");
  std::vector<int32_t> values;
  if (op.kind == ir::OpKind::MatMulInteger) {  // rhs [K, N]: column sums
    const MatmulShape s = matmul_shape(op);
    for (int64_t n = 0; n < s.n; ++n) {
      int64_t sum = 0;
      for (int64_t k = 0; k < s.k; ++k) sum += w.get_i64(k * s.n + n);
      values.push_back(int32_t(zp * sum));
    }
  } else {
    const ir::ConvGeometry g = ir::conv_geometry(op);
    std::vector<int64_t> ws = ir::logical_strides(w.shape(), g.filter_pos);
    const int64_t cg = g.in_channels_per_group(), taps = product(g.kernel);
    for (int64_t f = 0; f < g.out_channels; ++f) {
      int64_t sum = 0;
      for (int64_t c = 0; c < cg; ++c)
        for (int64_t t = 0; t < taps; ++t) {
          int64_t off = f * ws[0] + c * ws[1], rest = t;
          for (size_t i = size_t(g.spatial_rank); i-- > 0;) {
            off += rest % g.kernel[i] * ws[2 + i];
            rest /= g.kernel[i];
          }
          sum += w.get_i64(off);
        }
      values.push_back(int32_t(zp * sum));
    }
  }
  return cat("int corr(uint f) { return ", table.add(values, "f"), "; }\n");
}

// The per-channel table (requantization scales, folded sums) as the GEMM dispatch's last binding,
// a constant of the module; nothing when the kernel has no per-channel constants.
void bind_table(const integer::ChannelTable& table, const std::string& out, std::string& buffers,
                std::vector<KernelBinding>& bindings, std::vector<ScratchTensor>& scratch) {
  if (table.empty()) return;
  const std::string name = out + ".channel_table";
  buffers += integer::ChannelTable::declaration(uint32_t(bindings.size()));
  bindings.push_back({name, false});
  scratch.push_back({name, DType::i32, Shape{int64_t(table.values.size())}, table.tensor()});
}

}  // namespace

std::string integer_coopmat_glsl(const CoopTile& c, bool store_m_fast, bool for_khr, bool a_rows) {
  check(c.int8() && coop_loop_supports(c), "internal: the int8 GEMM loop does not support tile ", c.str());
  std::vector<std::pair<std::string, std::string>> values = coopmat_loop_values(c, store_m_fast, for_khr);
  values.push_back({"FRAG_K", std::to_string(c.fk)});
  values.push_back({"A_ROWS", a_rows ? "1" : "0"});
  return instantiate_shader("integer_coopmat.glsl", values);
}

IntegerCoopPlan plan_integer_coopmat(const ir::Op& op, const TargetLimits& target, const std::string& forced) {
  IntegerCoopPlan plan;
  const std::string what = op.describe();
  if (forced == "simt") {
    plan.why = "forced";
    return plan;
  }
  const bool must = forced.rfind("coopmat", 0) == 0;
  check(forced.empty() || must, what, ": unknown strategy '", forced,
        "' (simt, coopmat, coopmat=TMxTNxTK for the int8 tensor-core kernel)");
  plan.why = operand_misfit(op);
  if (plan.why.empty()) plan.why = coopmat_int8_misfit(target);
  const DType rt = op.result()->type.dtype;
  if (plan.why.empty() && rt != DType::i32 && !gpu_storable(rt, target)) plan.why = "no 8-bit storage for the result";
  if (!plan.why.empty()) {
    check(!must, what, ": the int8 tensor-core kernel cannot run it: ", plan.why);
    return plan;
  }
  GemmProblem p;
  p.simt = false;
  p.coop_vec = 16;
  p.a_kfast = true;
  if (op.kind == ir::OpKind::ConvInteger) {
    const ConvGemmShape s = conv_gemm_shape(ir::conv_geometry(op));
    p.m = s.m, p.n = s.n, p.k = s.k, p.batches = s.groups;
    p.b_kfast = true;  // the packed filter [F][taps][Cg]
  } else {
    const MatmulShape s = matmul_shape(op);
    p.m = s.m, p.n = s.n, p.k = s.k;
    p.b_kfast = false;  // the rhs [K, N] read in place
  }
  if (forced.rfind("coopmat=", 0) == 0) {
    const std::string want = forced.substr(8);
    for (const GemmTileEntry& e : gemm_tile_table()) {
      const CoopTile* c = std::get_if<CoopTile>(&e.tile);
      if (c == nullptr || !c->int8() || cat(c->tm, "x", c->tn, "x", c->tk) != want) continue;
      CoopTile tile = *c;
      tile.subgroup = coopmat_subgroup_size(target);
      const std::array<uint32_t, 3> fragment = coopmat_int8_fragment(target);
      tile.fm = fragment[0], tile.fn = fragment[1], tile.fk = fragment[2];
      tile.a_kfast = p.a_kfast;
      tile.b_kfast = p.b_kfast;
      const std::string why = tile_misfit(tile, target);
      check(why.empty(), what, ": int8 tile ", want, " does not fit target '", target.name, "': ", why);
      plan.choice = GemmChoice{tile, 1};
      return plan;
    }
    check(false, what, ": no int8 tensor-core tile ", want, " in the table");
  }
  plan.choice = choose_gemm(p, target);
  if (!plan.choice) {
    plan.why = "no int8 tensor-core tile fits the target";
    check(!must, what, ": ", plan.why);
  }
  return plan;
}

namespace {

// The GEMM dispatch (shaders/conv_gemm.comp around the int8 loop) over `bindings`, whose GLSL
// `buffers` and `helpers` define a_load16, b_load16 and store_c; `batches` x M x N output tiles.
EmittedKernel gemm_kernel(const ir::Op& op, const CoopTile& tile, const KernelContext& ctx, std::string buffers,
                          std::vector<KernelBinding> bindings, const std::string& helpers, int64_t m, int64_t n, int64_t k,
                          int64_t batches, bool store_m_fast, const std::string& name, bool a_rows = false) {
  const std::string what = op.describe();
  EmittedKernel e;
  e.kernel = name;
  e.bindings = std::move(bindings);
  check(e.bindings.size() <= ctx.target.max_per_stage_descriptor_storage_buffers, what, ": needs ",
        e.bindings.size(), " storage buffers, target '", ctx.target.name, "' allows ",
        ctx.target.max_per_stage_descriptor_storage_buffers);
  std::set<DType> types;
  const DType rt = op.result()->type.dtype;
  if (rt != DType::i32) types.insert(rt);
  e.cooperative_matrix_khr = coopmat_uses_khr(ctx.target);
  // The fragments' staging and store layout assume the subgroup size the tile was planned for.
  e.subgroup_sizes = {tile.subgroup, tile.subgroup};
  const uint64_t m_tiles = ceil_div(uint64_t(m), tile.tm), n_tiles = ceil_div(uint64_t(n), tile.tn);
  const uint64_t tiles = uint64_t(batches) * m_tiles * n_tiles;
  check_32bit_elements(tiles, "the tile grid", what);
  const uint32_t threads = tile.invocations();
  e.glsl = instantiate_shader("conv_gemm", {{"EXTENSIONS", glsl_extensions(types)},
                                            {"THREADS", std::to_string(threads)},
                                            {"BUFFERS", buffers},
                                            {"HELPERS", helpers},
                                            {"GEMM_CORE", integer_coopmat_glsl(tile, store_m_fast, e.cooperative_matrix_khr, a_rows)},
                                            {"K_STEPS", std::to_string(ceil_div(uint64_t(k), tile.tk))},
                                            {"SPLITS", "1"},
                                            {"M_TILES", std::to_string(m_tiles)},
                                            {"N_TILES", std::to_string(n_tiles)},
                                            {"TILES", std::to_string(tiles)}});
  e.strategy = "int8 tensor cores, int32 sums" + std::string(rt == DType::i32 ? "" : ", requantized to 8 bits");
  e.workgroup_size = {threads, 1, 1};
  e.workgroup_count = linear_grid(tiles * threads, threads, ctx.target, what);
  e.workgroup_memory_bytes = tile.workgroup_memory_bytes();
  e.tiles = {{"tile_m", tile.tm}, {"tile_n", tile.tn}, {"tile_k", tile.tk}, {"subgroups_m", tile.wm},
             {"subgroups_n", tile.wn}, {"staging_load_bytes", 16}};
  if (!tile.default_fragment())  // AMD's 16x16x16 (NVIDIA's 16x16x32 keeps its plans' text)
    e.tiles["fragment_m"] = tile.fm, e.tiles["fragment_n"] = tile.fn, e.tiles["fragment_k"] = tile.fk;
  e.notes = tile.str();
  e.flops = 2.0 * double(batches) * double(m) * double(n) * double(k);
  double bytes = 0;
  for (const ir::Value* v : op.operands) bytes += double(v->type.size_bytes());
  e.bytes = bytes + double(op.result()->type.size_bytes());
  return e;
}

// matmul_integer: A and B read in place, 16 bytes at a time (K and N multiples of 16), A's bytes
// flipped to s8 in the loader; one dispatch.
std::vector<EmittedKernel> emit_matmul(const ir::Op& op, const CoopTile& tile, const KernelContext& ctx,
                                       std::vector<ScratchTensor>& scratch) {
  const MatmulShape s = matmul_shape(op);
  const int64_t zp = signed_zero_point(op);
  const uint32_t flip = op.operand(0)->type.dtype == DType::u8 ? 0x80808080u : 0u;
  std::string buffers = glsl_uvec4_buffer(0, "ap") + glsl_uvec4_buffer(1, "bp");
  std::vector<KernelBinding> bindings{{ctx.tensor(op.operand(0)), false}, {ctx.tensor(op.operand(1)), false}};
  const DType rt = op.result()->type.dtype;
  buffers += glsl_buffer(2, rt, true, "result");
  bindings.push_back({ctx.tensor(op.result()), true});
  // Rows past M read zeros (never stored); B past K reads zeros, so nothing there counts.
  std::string helpers = cat("uvec4 a_load16(uint m, uint k) {\n  if (m >= ", u32(s.m), ") return uvec4(0u);\n  return ap.data[(m * ",
                            u32(s.k), " + k) / 16u] ^ uvec4(", flip, "u);\n}\n");
  helpers += cat("uvec4 b_load16(uint n, uint k) {\n  if (k >= ", u32(s.k), " || n >= ", u32(s.n),
                 ") return uvec4(0u);\n  return bp.data[(k * ", u32(s.n), " + n) / 16u];\n}\n");
  integer::ChannelTable table;  // the folded sums, then the scales (two statements: that order)
  helpers += correction_fn(op, zp, table);
  helpers += integer::store_fn(op, rt, false, &table);
  helpers += cat("void store_c(uint m, uint n, int v) {\n  if (m >= ", u32(s.m), " || n >= ", u32(s.n),
                 ") return;\n  store(m * ", u32(s.n), " + n, n, v - corr(n));\n}\n");
  bind_table(table, ctx.tensor(op.result()), buffers, bindings, scratch);
  return {gemm_kernel(op, tile, ctx, buffers, bindings, helpers, s.m, s.n, s.k, 1, false, "matmul_integer_coopmat")};
}

std::vector<EmittedKernel> emit_conv(const ir::Op& op, const CoopTile& tile, const KernelContext& ctx,
                                     std::vector<ScratchTensor>& scratch) {
  const ir::ConvGeometry g = ir::conv_geometry(op);
  const ConvGemmShape s = conv_gemm_shape(g);
  const int64_t zp = signed_zero_point(op);
  const int64_t cg = g.in_channels_per_group();
  const std::string out = ctx.tensor(op.result());
  std::vector<EmittedKernel> kernels;
  const std::string packed_input = out + ".packed_input", packed_filter = out + ".packed_filter";
  Shape pin{g.batch};
  pin.insert(pin.end(), g.in_spatial.begin(), g.in_spatial.end());
  pin.push_back(g.in_channels);
  scratch.push_back({packed_input, DType::i8, pin});
  scratch.push_back({packed_filter, DType::i8, Shape{g.out_channels, product(g.kernel), cg}});
  kernels.push_back(emit_pack_input(op, ctx, packed_input, zp));
  kernels.push_back(emit_pack_filter(op, ctx, packed_filter));

  std::string buffers = glsl_uvec4_buffer(0, "xp") + glsl_uvec4_buffer(1, "wp");
  std::vector<KernelBinding> bindings{{packed_input, false}, {packed_filter, false}};
  const bool has_bias = op.num_operands() == 5;
  if (has_bias) {
    buffers += glsl_buffer(2, DType::i32, false, "bias");
    bindings.push_back({ctx.tensor(op.operand(4)), false});
  }
  const DType rt = op.result()->type.dtype;
  buffers += glsl_buffer(uint32_t(bindings.size()), rt, true, "result");
  bindings.push_back({out, true});

  const uint32_t pad = uint32_t(zp & 0xff) * 0x01010101u;
  const ir::ConvGeometry packed = packed_geometry(g);
  std::string helpers = conv::decode_out_fn(g) + conv::phase_fns(g) +
                        conv::out_offset_fn(g, op.result()->type.shape) + decode_tap_fn(g);
  helpers += "uvec4 xp_load16(uint off) { return xp.data[off / 16u]; }\n" +
             conv::gather_input_fn(packed, pin, "xp_load16", "uvec4");
  // A: 16 channels of one tap; the padding reads z' (the XOR undoes the pack's, see the header).
  helpers += cat("uvec4 a_load16(uint m, uint k) {\n  if (m >= ", u32(s.m), " || k >= ", u32(s.k),
                 ") return uvec4(0u);\n  XRow r = x_row(m / ", u32(s.positions), ", decode_out(m % ", u32(s.positions),
                 "));\n  return gather_row(r, cgrp() * ", u32(cg), " + k % ", u32(cg), ", decode_tap(k / ", u32(cg),
                 ")) ^ uvec4(", pad, "u);\n}\n");
  // The loop's row hooks where each K slice holds one tap (the packed input: channels innermost).
  // H200, session 20 (with the unrolled stores): the seed QDQ conv 0.408 -> 0.389 ms.
  const bool a_rows = conv::packed_rows_apply(g, tile.tk);
  if (a_rows) helpers += conv::packed_row_fns(g, coop_a_rounds(tile), 16, pad, 1);
  // B: zeros past K, so that nothing there counts whatever A holds.
  helpers += cat("uvec4 b_load16(uint nn, uint k) {\n  if (nn >= ", u32(s.n), " || k >= ", u32(s.k),
                 ") return uvec4(0u);\n  return wp.data[((cgrp() * ", u32(s.n), " + nn) * ", u32(s.k),
                 " + k) / 16u];\n}\n");
  integer::ChannelTable table;  // the folded sums, then the scales (two statements: that order)
  helpers += correction_fn(op, zp, table);
  helpers += integer::store_fn(op, rt, false, &table);
  helpers += cat("void store_c(uint m, uint nn, int v) {\n  uvec3 o;\n  if (m >= ", u32(s.m), " || nn >= ", u32(s.n),
                 " || !out_at(m % ", u32(s.positions), ", o)) return;\n  uint f = cgrp() * ", u32(s.n),
                 " + nn;\n  store(out_offset(m / ", u32(s.positions), ", f, o), f, v - corr(f)",
                 has_bias ? " + bias.data[f]" : "", ");\n}\n");
  bind_table(table, out, buffers, bindings, scratch);
  // Results leave walking M fastest unless the output's channels are its innermost dim.
  const bool store_m_fast = g.output_pos[1] != int(g.output_pos.size()) - 1;
  kernels.push_back(gemm_kernel(op, tile, ctx, buffers, bindings, helpers, s.m, s.n, s.k, s.groups, store_m_fast,
                                "conv_integer_coopmat", a_rows));
  return kernels;
}

}  // namespace

std::vector<EmittedKernel> emit_integer_coopmat(const ir::Op& op, const GemmChoice& choice, const KernelContext& ctx,
                                                std::vector<ScratchTensor>& scratch) {
  const CoopTile& tile = std::get<CoopTile>(choice.tile);
  if (op.kind == ir::OpKind::MatMulInteger) return emit_matmul(op, tile, ctx, scratch);
  return emit_conv(op, tile, ctx, scratch);
}

}  // namespace vkc::codegen::kernels
