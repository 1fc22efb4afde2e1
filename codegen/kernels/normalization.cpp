// layer_norm and group_norm (instance norm is group_norm with one channel per group), and cumsum:
// the normalizations group of issue 23.
//
// Both normalizations split the input into contiguous rows (layer_norm: the dims from `axis` on;
// group_norm: one group of one batch entry, C / G channels times the spatial size) and compute,
// in f32, mean = sum(x) / n and var = sum((x - mean)^2) / n (two passes around the mean, which
// keeps the variance of offset data accurate; everything is taken relative to the row's first
// element, so that a large common offset does not swamp the f32 sums and differences), then y = (x - mean) / sqrt(var + eps) * scale + bias
// with scale and bias per row element (layer_norm) or per channel (group_norm). Strategies:
//   - "loop": one invocation per row, three passes over the row in memory (short rows);
//   - "cached": one workgroup per row; the row is read once, through the fused prologue, into
//     workgroup memory (n floats) and both passes and the store read it from there; the row plus
//     one partial sum per invocation must fit the target's maxComputeSharedMemorySize;
//   - "streamed": one workgroup per row, the fallback for rows too long for workgroup memory: each
//     pass reads the row from memory again (strided over the workgroup).
// Both workgroup strategies sum the row within each subgroup first where the target has subgroup
// arithmetic, else through a tree in workgroup memory (workgroup_sum).
// The input is read through the group's prologue (x_at), so a residual add in front fuses into the
// load; the result goes through the fused epilogue (store_result).
//
// cumsum, in the compute type (f32 for floats; exact integers), plain buffers in and out:
//   - "line": one invocation per line along the axis, a sequential running sum (short lines);
//   - "scan": one workgroup per line (lines of 256 or more), chunk by chunk: a Hillis-Steele scan
//     in workgroup memory plus the running carry of the chunks before.
#include <set>

#include "codegen/fusion.h"
#include "codegen/glsl_types.h"
#include "codegen/grid.h"
#include "codegen/kernels/kernel_util.h"
#include "codegen/kernels/kernels.h"
#include "codegen/shader_library.h"
#include "support/error.h"

namespace vkc::codegen::kernels {
namespace {

using K = ir::OpKind;

// Rows of one normalization and how an element's scale/bias index follows from (slot, r).
struct Rows {
  int64_t slots = 0, row = 0;
  std::string param_index;  // GLSL expression of `slot` and `r`
};

Rows rows_of(const ir::Op& op) {
  const Shape& shape = op.operand(0)->type.shape;
  Rows r;
  int64_t total = shape_numel(shape);
  if (op.kind == K::LayerNorm) {
    int64_t axis = op.attr_int("axis");
    if (axis < 0) axis += int64_t(shape.size());
    r.row = 1;
    for (size_t d = size_t(axis); d < shape.size(); ++d) r.row *= shape[d];
    r.param_index = "r";
  } else {
    int64_t groups = op.attr_int("num_groups"), per_group = shape[1] / groups, spatial = 1;
    for (size_t d = 2; d < shape.size(); ++d) spatial *= shape[d];
    r.row = per_group * spatial;
    r.param_index = cat("(slot % ", groups, "u) * ", per_group, "u + r / ", spatial, "u");
  }
  r.slots = r.row == 0 ? 0 : total / r.row;
  return r;
}

enum class Strategy { Loop, Cached, Streamed };

struct Plan {
  Strategy strategy = Strategy::Loop;
  uint32_t wg = 1;
};

// Workgroup memory of the cached strategy: the row, then one partial sum per invocation.
uint64_t cached_bytes(int64_t row, uint32_t wg) { return uint64_t(row) * 4 + uint64_t(wg) * 4; }

Plan choose(const ir::Op& op, const Rows& rows, const KernelContext& ctx, const std::string& what) {
  std::string forced = ctx.forced(op);
  check(forced.empty() || forced == "loop" || forced == "cached" || forced == "streamed", what,
        ": unknown strategy '", forced, "' (normalizations have: loop, cached, streamed)");
  Plan p;
  if (forced == "loop" || (forced.empty() && rows.row < 128)) return p;
  uint32_t want = 256;
  while (want > 32 && int64_t(want / 2) >= rows.row) want /= 2;  // short rows: smaller groups
  p.wg = fit_workgroup_size_x(want, ctx.target);
  while (p.wg > 1 && p.wg * 4 > ctx.target.max_compute_shared_memory_size) p.wg /= 2;
  const bool fits = cached_bytes(rows.row, p.wg) <= ctx.target.max_compute_shared_memory_size;
  if (forced == "cached" && !fits)
    throw Error(cat(what, ": strategy 'cached' needs ", cached_bytes(rows.row, p.wg),
                    " bytes of workgroup memory for a row of ", rows.row, " elements, target '", ctx.target.name,
                    "' has ", ctx.target.max_compute_shared_memory_size));
  p.strategy = forced == "streamed" || !fits ? Strategy::Streamed : Strategy::Cached;
  return p;
}

using Io = KernelIo;

// The workgroup's sum of each invocation's `value`, left in `total`; red is free again after.
// With subgroup arithmetic each subgroup sums its own in registers and one invocation per
// subgroup leaves it in red: two barriers instead of the tree's log2(wg) + 2 (ViT-B/16's 25 layer
// norms of 768-wide rows, 256 invocations: 0.257 -> 0.220 ms, H200, session 34).
std::string workgroup_sum(uint32_t wg, bool subgroups, const std::string& value, const std::string& total) {
  if (subgroups)
    return cat("  {\n    float part = subgroupAdd(", value, ");\n    if (subgroupElect()) red[gl_SubgroupID] = part;\n",
               "  }\n  barrier();\n  float ", total, " = 0.0;\n",
               "  for (uint i = 0u; i < gl_NumSubgroups; ++i) ", total, " += red[i];\n",
               "  barrier();  // everyone has read red before it is reused\n");
  return cat("  red[tid] = ", value, ";\n  barrier();\n  for (uint s = ", wg / 2,
             "u; s > 0u; s >>= 1u) {\n    if (tid < s) {\n      red[tid] += red[tid + s];\n    }\n    barrier();\n  }\n",
             "  float ", total, " = red[0];\n  barrier();  // everyone has read red[0] before it is reused\n");
}

EmittedKernel normalization_kernel(const DispatchGroup& group, const KernelContext& ctx, const std::string& what) {
  const ir::Op& op = *group.anchor;
  Rows rows = rows_of(op);
  Plan p = choose(op, rows, ctx, what);
  const std::string n = cat(rows.row, "u"), nf = cat("float(", rows.row, ")");

  Io io;
  io.add(operand_loader(group, op.operand(0), "x_at", 0, ctx));
  std::string fns;
  fns += "float load(uint i) { return float(x_at(i)); }\n";
  if (op.num_operands() > 1) {
    io.add(operand_loader(group, op.operand(1), "scale_at", uint32_t(io.bindings.size()), ctx));
    fns += cat("float scale_of(uint slot, uint r) { return float(scale_at(", rows.param_index, ")); }\n");
  } else {
    fns += "float scale_of(uint slot, uint r) { return 1.0; }\n";
  }
  if (op.num_operands() > 2) {
    io.add(operand_loader(group, op.operand(2), "bias_at", uint32_t(io.bindings.size()), ctx));
    fns += cat("float bias_of(uint slot, uint r) { return float(bias_at(", rows.param_index, ")); }\n");
  } else {
    fns += "float bias_of(uint slot, uint r) { return 0.0; }\n";
  }
  io.add(result_store(group, uint32_t(io.bindings.size()), ctx));
  const std::string eps = glsl_literal(DType::f32, op.attr_float("epsilon"));
  // mean is relative to shift: (x - shift) is exact for x near shift, so offset data keep their digits.
  const std::string store = "store_result(base + r, ((x - shift) - mean) * inv * scale_of(slot, r) + bias_of(slot, r));";

  // RMSNorm (`rms`): no mean, so shift and mean are 0 and the first pass is left out (the cached
  // strategy still reads the row into workgroup memory in it).
  const bool rms = op.kind == K::LayerNorm && op.attr_bool("rms");

  // The workgroup strategies sum their rows within each subgroup first where the target has
  // subgroup arithmetic (workgroup_sum; no subgroup size is assumed), else through a tree.
  const bool subgroups = p.strategy != Strategy::Loop && ctx.target.subgroup_arithmetic;
  EmittedKernel k;
  k.kernel = op.kind == K::LayerNorm ? (rms ? "rms_norm" : "layer_norm") : "group_norm";
  std::string body, shared;
  if (p.strategy == Strategy::Loop) {
    k.strategy = "loop";
    plan_linear(k, uint64_t(rows.slots), 64, ctx.target, what);
    body += folded_global_index(k.workgroup_size[0], "slot") + cat("  if (slot >= ", rows.slots, "u) return;\n");
    std::string loop = cat("for (uint r = 0u; r < ", n, "; ++r)");
    if (rms) {
      body += cat("  uint base = slot * ", n, ";\n  float shift = 0.0, mean = 0.0, sq = 0.0;\n");
    } else {
      body += cat("  uint base = slot * ", n, ";\n  float shift = load(base);\n  float sum = 0.0;\n");
      body += cat("  ", loop, " sum += load(base + r) - shift;\n  float mean = sum / ", nf, ";\n  float sq = 0.0;\n");
    }
    body += cat("  ", loop, " { float d = (load(base + r) - shift) - mean; sq += d * d; }\n");
    body += cat("  float inv = 1.0 / sqrt(sq / ", nf, " + ", eps, ");\n");
    body += cat("  ", loop, " { float x = load(base + r); ", store, " }\n");
  } else {
    const bool cached = p.strategy == Strategy::Cached;
    k.strategy = cached ? "cached" : "streamed";
    k.workgroup_size = {p.wg, 1, 1};
    k.workgroup_count = linear_grid(uint64_t(rows.slots) * p.wg, p.wg, ctx.target, what);
    // The whole workgroup leaves together, so the barriers below stay in uniform control flow.
    body += folded_workgroup_index("slot") + cat("  if (slot >= ", rows.slots, "u) return;\n");
    body += "  uint tid = gl_LocalInvocationID.x;\n";
    std::string loop = cat("for (uint r = tid; r < ", n, "; r += ", p.wg, "u)");
    // Each invocation rereads only the row elements it cached itself: no barrier needed for them.
    std::string x = cached ? "row_data[r]" : "load(base + r)";
    if (rms) {
      body += cat("  uint base = slot * ", n, ";\n  float shift = 0.0, mean = 0.0;\n");
      if (cached) body += cat("  ", loop, " row_data[r] = load(base + r);\n");
    } else {
      body += cat("  uint base = slot * ", n, ";\n  float shift = load(base);\n  float sum = 0.0;\n");
      body += cached ? cat("  ", loop, " { float v = load(base + r); row_data[r] = v; sum += v - shift; }\n")
                     : cat("  ", loop, " sum += load(base + r) - shift;\n");
      body += workgroup_sum(p.wg, subgroups, "sum", "row_sum");
      body += cat("  float mean = row_sum / ", nf, ";\n");
    }
    body += cat("  float sq = 0.0;\n  ", loop, " { float d = (", x, " - shift) - mean; sq += d * d; }\n");
    body += workgroup_sum(p.wg, subgroups, "sq", "row_sq");
    body += cat("  float inv = 1.0 / sqrt(row_sq / ", nf, " + ", eps, ");\n");
    body += cat("  ", loop, " { float x = ", x, "; ", store, " }\n");
    shared = cat("shared float red[", p.wg, "];\n");
    k.workgroup_memory_bytes = p.wg * 4;
    if (cached) {
      shared += cat("shared float row_data[", rows.row, "];\n");
      k.workgroup_memory_bytes = uint32_t(cached_bytes(rows.row, p.wg));
    }
  }
  std::set<DType> all = io.types;
  k.bindings = io.bindings;
  std::string extensions = glsl_extensions(all);
  if (subgroups)
    extensions += "#extension GL_KHR_shader_subgroup_basic : require\n#extension GL_KHR_shader_subgroup_arithmetic : require\n";
  k.glsl = instantiate_shader("normalize", {{"EXTENSIONS", extensions},
                                            {"WG_SIZE", cat(k.workgroup_size[0])},
                                            {"BUFFERS", io.buffers},
                                            {"SHARED", shared},
                                            {"FUNCTIONS", io.functions + fns},
                                            {"BODY", body}});
  k.flops = double(rows.slots * rows.row) * 7;
  k.bytes = io.bytes;
  k.tiles["rows"] = rows.slots;
  k.tiles["row_length"] = rows.row;
  return k;
}

EmittedKernel cumsum_kernel(const DispatchGroup& group, const KernelContext& ctx, const std::string& what) {
  const ir::Op& op = *group.anchor;
  const ir::Value* in = op.operand(0);
  const ir::Value* out = op.result();
  const DType t = in->type.dtype;
  require_storable(t, ctx.target, what);
  const Shape& shape = in->type.shape;
  int64_t axis = op.attr_int("axis");
  if (axis < 0) axis += int64_t(shape.size());
  int64_t dim = shape[size_t(axis)], inner = 1;
  for (size_t d = size_t(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  int64_t lines = dim == 0 ? 0 : shape_numel(shape) / dim;
  const bool exclusive = op.attr_bool("exclusive"), reverse = op.attr_bool("reverse");
  const std::string ct = glsl_compute_type(t), st = glsl_storage_type(t);

  std::string forced = ctx.forced(op);
  check(forced.empty() || forced == "line" || forced == "scan", what, ": unknown strategy '", forced,
        "' (cumsum has: line, scan)");
  const bool scan = forced.empty() ? dim >= 256 : forced == "scan";
  const std::string index = reverse ? cat("base + (", dim - 1, "u - k) * ", inner, "u") : cat("base + k * ", inner, "u");

  EmittedKernel k;
  k.kernel = "cumsum";
  std::string body, shared;
  if (!scan) {
    k.strategy = "line";
    plan_linear(k, uint64_t(lines), 64, ctx.target, what);
    body = folded_global_index(k.workgroup_size[0], "line") + cat("  if (line >= ", lines, "u) return;\n");
    body += cat("  uint base = (line / ", inner, "u) * ", dim * inner, "u + line % ", inner, "u;\n");
    body += cat("  ", ct, " acc = ", ct, "(0);\n");
    body += cat("  for (uint k = 0u; k < ", dim, "u; ++k) {\n    uint i = ", index, ";\n");
    body += cat("    ", ct, " v = ", ct, "(x.data[i]);\n");
    body += exclusive ? cat("    y.data[i] = ", st, "(acc);\n    acc += v;\n") : cat("    acc += v;\n    y.data[i] = ", st, "(acc);\n");
    body += "  }\n";
  } else {
    // One workgroup per line: chunks of wg elements, each scanned in workgroup memory
    // (Hillis-Steele), plus the carry of the chunks before it. Exclusive sums are the inclusive
    // ones minus the element (exact for integers; one rounding for floats).
    k.strategy = "scan";
    const uint32_t size = ct == "int64_t" ? 8 : 4;
    uint32_t wg = fit_workgroup_size_x(256, ctx.target);
    while (wg > 1 && wg * size > ctx.target.max_compute_shared_memory_size) wg /= 2;
    k.workgroup_size = {wg, 1, 1};
    k.workgroup_count = linear_grid(uint64_t(lines) * wg, wg, ctx.target, what);
    body = folded_workgroup_index("line") + cat("  if (line >= ", lines, "u) return;\n");
    body += "  uint tid = gl_LocalInvocationID.x;\n";
    body += cat("  uint base = (line / ", inner, "u) * ", dim * inner, "u + line % ", inner, "u;\n");
    body += cat("  ", ct, " carry = ", ct, "(0);\n");
    body += cat("  for (uint c0 = 0u; c0 < ", dim, "u; c0 += ", wg, "u) {\n");
    body += cat("    uint k = c0 + tid;\n    uint i = ", index, ";\n");
    body += cat("    ", ct, " v = k < ", dim, "u ? ", ct, "(x.data[i]) : ", ct, "(0);\n");
    body += "    part[tid] = v;\n    barrier();\n";
    body += cat("    for (uint off = 1u; off < ", wg, "u; off <<= 1u) {\n");
    body += cat("      ", ct, " t = tid >= off ? part[tid - off] : ", ct, "(0);\n");
    body += "      barrier();\n      part[tid] += t;\n      barrier();\n    }\n";
    body += cat("    if (k < ", dim, "u) y.data[i] = ", st, "(carry + ", exclusive ? "(part[tid] - v)" : "part[tid]", ");\n");
    body += cat("    carry += part[", wg - 1, "];\n    barrier();  // all have read the chunk's total\n  }\n");
    shared = cat("shared ", ct, " part[", wg, "];\n");
    k.workgroup_memory_bytes = wg * size;
  }
  std::set<DType> types{t};
  k.bindings = {{ctx.tensor(in), false}, {ctx.tensor(out), true}};
  k.glsl = instantiate_shader("normalize", {{"EXTENSIONS", glsl_extensions(types)},
                                            {"WG_SIZE", cat(k.workgroup_size[0])},
                                            {"BUFFERS", glsl_buffer(0, t, false, "x") + glsl_buffer(1, t, true, "y")},
                                            {"SHARED", shared},
                                            {"FUNCTIONS", ""},
                                            {"BODY", body}});
  k.flops = double(shape_numel(shape));
  k.bytes = double(in->type.size_bytes() + out->type.size_bytes());
  k.tiles["lines"] = lines;
  k.tiles["line_length"] = dim;
  return k;
}

}  // namespace

std::vector<EmittedKernel> emit_normalization(const DispatchGroup& group, const KernelContext& ctx,
                                              std::vector<ScratchTensor>&) {
  const std::string what = group.anchor->describe();
  check_32bit(shape_numel(group.anchor->operand(0)->type.shape), what);
  return {normalization_kernel(group, ctx, what)};
}

std::vector<EmittedKernel> emit_cumsum(const DispatchGroup& group, const KernelContext& ctx,
                                       std::vector<ScratchTensor>&) {
  const std::string what = group.anchor->describe();
  check_32bit(shape_numel(group.anchor->operand(0)->type.shape), what);
  return {cumsum_kernel(group, ctx, what)};
}

}  // namespace vkc::codegen::kernels
