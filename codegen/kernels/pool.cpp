// MaxPool, AvgPool: N-D (1-3 spatial dims), any layout, strides, pads, dilations, ceil_mode,
// count_include_pad and global pooling, with the reference's exact window rules (ir/conv_geometry).
//
// Strategies:
// - "direct": one invocation per output element walks its window. Right for small windows, and
//   for large ones whose input is channels-last (adjacent invocations read adjacent channels).
// - "workgroup": one workgroup per output element; its invocations stride over the flattened
//   window and combine partial results in workgroup memory. Chosen for large windows whose input's
//   fastest dim lies inside the window (global pooling in NCHW: squeeze-excite blocks and
//   classifier heads), where "direct" had adjacent invocations read rows thousands of elements
//   apart and few invocations in all (on the H100 a third of lraspp_mobilenet_v3's GPU time).
//
// The input is read through the group's fused prologue (x_at, codegen/fusion.h) and a float
// result is stored through its fused epilogue (store_result); integer pools (an i8 max pool)
// store their own value, since the epilogue's f32 accumulator is not their type.
#include <set>

#include "codegen/fusion.h"
#include "codegen/glsl_types.h"
#include "codegen/grid.h"
#include "codegen/kernels/kernel_util.h"
#include "codegen/kernels/kernels.h"
#include "codegen/shader_library.h"
#include "ir/conv_geometry.h"
#include "support/error.h"

namespace vkc::codegen::kernels {

namespace {

// Whether the input's fastest-varying physical dim (of extent > 1) is one the window walks, so
// that a workgroup's invocations striding over the window read adjacent elements.
bool window_is_innermost(const ir::ConvGeometry& g, const Shape& in_shape) {
  for (size_t d = in_shape.size(); d-- > 0;) {
    if (in_shape[d] == 1) continue;
    for (int i = 0; i < g.spatial_rank; ++i)
      if (size_t(g.input_pos[size_t(2 + i)]) == d) return true;
    return false;
  }
  return false;
}

}  // namespace

std::vector<EmittedKernel> emit_pool(const DispatchGroup& group, const KernelContext& ctx,
                                     std::vector<ScratchTensor>&) {
  const ir::Op& op = *group.anchor;
  const std::string what = op.describe();
  std::string forced = ctx.forced(op);
  check(forced.empty() || forced == "direct" || forced == "workgroup", what, ": unknown strategy '",
        forced, "' (pooling has: direct, workgroup)");
  const ir::ConvGeometry g = ir::pool_geometry(op);
  const bool is_max = op.kind == ir::OpKind::MaxPool;
  const bool include_pad = op.attr_bool("count_include_pad");
  const ir::Value* in = op.operand(0);
  const ir::Value* out = op.result();
  const int64_t total = shape_numel(out->type.shape);
  check_32bit(std::max(total, shape_numel(in->type.shape)), what);
  const size_t S = size_t(g.spatial_rank);
  std::vector<int64_t> xs = strides_of(in->type.shape);
  int64_t window = 1;
  for (int64_t w : g.kernel) window *= w;

  // 64 positions and up: below that a workgroup's tree costs more than the loop it replaces.
  const bool use_workgroup =
      forced.empty() ? window >= 64 && window_is_innermost(g, in->type.shape) : forced == "workgroup";
  uint32_t wg = 1;
  const uint32_t shared_per_invocation = is_max ? 4 : 8;  // the partial value (+ the count)
  if (use_workgroup) {
    uint32_t want = 256;
    while (want > 32 && int64_t(want / 2) >= window) want /= 2;  // small windows: smaller groups
    wg = fit_workgroup_size_x(want, ctx.target);
    while (wg > 1 && wg * shared_per_invocation > ctx.target.max_compute_shared_memory_size) wg /= 2;
  }

  // Output coordinates in physical order, then the logical N, C, spatial ones.
  std::string body = unravel_code(out->type.shape, "gid", "o");
  auto logical = [&](size_t l) { return cat("o", g.output_pos[l]); };
  body += cat("  int base = int(", logical(0), ") * ", xs[size_t(g.input_pos[0])], " + int(", logical(1),
              ") * ", xs[size_t(g.input_pos[1])], ";\n");
  body += is_max ? "  float acc = uintBitsToFloat(0xff800000u);\n  bool nan_seen = false;\n"
                 : "  float acc = 0.0;\n  int count = 0;\n";
  std::string indent = "  ";
  if (use_workgroup) {
    // The flattened window position r, unravelled into k0..k(S-1) (C order).
    body += cat("  for (uint r = tid; r < ", window, "u; r += ", wg, "u) {\n    uint rest = r;\n");
    for (size_t i = S; i-- > 0;) {
      body += i > 0 ? cat("    int k", i, " = int(rest % ", g.kernel[i], "u);\n    rest /= ", g.kernel[i], "u;\n")
                    : cat("    int k", i, " = int(rest);\n");
    }
    indent = "    ";
    for (size_t i = 0; i < S; ++i)
      body += cat(indent, "int p", i, " = int(", logical(2 + i), ") * ", g.strides[i], " - ", g.pad_begin[i],
                  " + k", i, " * ", g.dilations[i], ";\n");
  } else {
    for (size_t i = 0; i < S; ++i) {
      body += cat(indent, "for (int k", i, " = 0; k", i, " < ", g.kernel[i], "; ++k", i, ") {\n");
      indent += "  ";
      body += cat(indent, "int p", i, " = int(", logical(2 + i), ") * ", g.strides[i], " - ", g.pad_begin[i],
                  " + k", i, " * ", g.dilations[i], ";\n");
    }
  }
  std::string in_input, in_padded, offset = "base";
  for (size_t i = 0; i < S; ++i) {
    in_input += cat(i ? " && " : "", "p", i, " >= 0 && p", i, " < ", g.in_spatial[i]);
    in_padded += cat(i ? " && " : "", "p", i, " < ", g.in_spatial[i] + g.pad_end[i]);
    offset += cat(" + p", i, " * ", xs[size_t(g.input_pos[2 + i])]);
  }
  if (!is_max)  // positions before the padded begin cannot occur: p >= -pad_begin by construction
    body += cat(indent, "if (", include_pad ? in_padded : in_input, ") ++count;\n");
  body += cat(indent, "if (", in_input, ") {\n");
  body += cat(indent, "  float v = float(x_at(", offset, "));\n");
  body += is_max ? cat(indent, "  nan_seen = nan_seen || isnan(v);\n", indent, "  acc = v > acc ? v : acc;\n")
                 : cat(indent, "  acc += v;\n");
  body += cat(indent, "}\n");
  const char* nan = "uintBitsToFloat(0x7fc00000u)";
  std::string value;
  std::string shared;
  if (use_workgroup) {
    body += "  }\n";
    // Partial results combine in a tree; NaN propagates through max as in the sequential loop.
    if (is_max) {
      body += cat("  red[tid] = nan_seen ? ", nan, " : acc;\n  barrier();\n");
      body += cat("  for (uint s = ", wg / 2, "u; s > 0u; s >>= 1u) {\n    if (tid < s) {\n"
                  "      float a = red[tid], b = red[tid + s];\n"
                  "      red[tid] = (isnan(a) || isnan(b)) ? ", nan, " : max(a, b);\n    }\n    barrier();\n  }\n");
      value = "red[0]";
      shared = cat("shared float red[", wg, "];\n");
    } else {
      body += "  red[tid] = acc;\n  cnt[tid] = count;\n  barrier();\n";
      body += cat("  for (uint s = ", wg / 2, "u; s > 0u; s >>= 1u) {\n    if (tid < s) {\n"
                  "      red[tid] += red[tid + s];\n      cnt[tid] += cnt[tid + s];\n    }\n    barrier();\n  }\n");
      value = cat("(cnt[0] == 0 ? ", nan, " : red[0] / float(cnt[0]))");
      shared = cat("shared float red[", wg, "];\nshared int cnt[", wg, "];\n");
    }
    body += "  if (tid != 0u) return;\n";
  } else {
    for (size_t i = 0; i < S; ++i) {
      indent.resize(indent.size() - 2);
      body += cat(indent, "}\n");
    }
    value = is_max ? cat("(nan_seen ? ", nan, " : acc)")
                   // a window wholly in padding counts nothing: 0/0 is NaN (reference)
                   : cat("(count == 0 ? ", nan, " : acc / float(count))");
  }

  EmittedKernel k;
  k.kernel = is_max ? "max_pool" : "avg_pool";
  k.strategy = use_workgroup ? "workgroup" : "direct";
  FusedCode xl = operand_loader(group, in, "x_at", 0, ctx);
  std::string buffers = xl.buffers, functions = xl.functions;
  std::set<DType> types = xl.types;
  k.bindings = xl.bindings;
  k.bytes = xl.bytes;
  const DType rt = out->type.dtype;
  if (is_float(rt)) {
    FusedCode st = result_store(group, uint32_t(k.bindings.size()), ctx);
    buffers += st.buffers;
    functions += st.functions;
    types.insert(st.types.begin(), st.types.end());
    k.bindings.insert(k.bindings.end(), st.bindings.begin(), st.bindings.end());
    k.bytes += st.bytes;
    body += cat("  store_result(gid, ", value, ");\n");
  } else {
    require_storable(rt, ctx.target, what);
    types.insert(rt);
    buffers += glsl_buffer(uint32_t(k.bindings.size()), rt, true, "result");
    k.bindings.push_back({ctx.tensor(out), true});
    k.bytes += double(out->type.size_bytes());
    body += cat("  result.data[gid] = ", glsl_storage_type(rt), "(", value, ");\n");
  }
  std::string index;
  if (use_workgroup) {
    // One workgroup per output element: the early return below is uniform in each workgroup,
    // so the tree's barriers stay in uniform control flow.
    k.workgroup_size = {wg, 1, 1};
    k.workgroup_count = linear_grid(uint64_t(total) * wg, wg, ctx.target, what);
    k.workgroup_memory_bytes = wg * shared_per_invocation;
    index = folded_workgroup_index("gid") + "  uint tid = gl_LocalInvocationID.x;\n";
  } else {
    plan_linear(k, uint64_t(total), 128, ctx.target, what);
    index = folded_global_index(k.workgroup_size[0]);
  }
  k.glsl = instantiate_shader("pool", {{"EXTENSIONS", glsl_extensions(types)},
                                       {"WG_SIZE", cat(k.workgroup_size[0])},
                                       {"BUFFERS", buffers + shared},
                                       {"FUNCTIONS", functions},
                                       {"INDEX", index},
                                       {"TOTAL", cat(total)},
                                       {"BODY", body}});
  k.flops = double(total) * double(window);
  k.tiles["window"] = window;
  if (use_workgroup) k.tiles["wg"] = wg;
  return {k};
}

}  // namespace vkc::codegen::kernels
