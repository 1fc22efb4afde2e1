// MaxPool, AvgPool: N-D (1-3 spatial dims), any layout, strides, pads, dilations, ceil_mode,
// count_include_pad and global pooling, with the reference's exact window rules (ir/conv_geometry).
//
// One invocation per output element walks its window. Windows are small for strided pooling; for
// global pooling of a large extent the loop is long but has no cross-invocation traffic.
//
// The input is read through the group's fused prologue (x_at, codegen/fusion.h) and a float
// result is stored through its fused epilogue (store_result); integer pools (an i8 max pool)
// store their own value, since the epilogue's f32 accumulator is not their type.
#include <set>

#include "codegen/fusion.h"
#include "codegen/glsl_types.h"
#include "codegen/kernels/kernel_util.h"
#include "codegen/kernels/kernels.h"
#include "codegen/shader_library.h"
#include "ir/conv_geometry.h"
#include "support/error.h"

namespace vkc::codegen::kernels {

std::vector<EmittedKernel> emit_pool(const DispatchGroup& group, const KernelContext& ctx,
                                     std::vector<ScratchTensor>&) {
  const ir::Op& op = *group.anchor;
  const std::string what = op.describe();
  std::string forced = ctx.forced(op);
  check(forced.empty() || forced == "direct", what, ": unknown strategy '", forced,
        "' (pooling has: direct)");
  const ir::ConvGeometry g = ir::pool_geometry(op);
  const bool is_max = op.kind == ir::OpKind::MaxPool;
  const bool include_pad = op.attr_bool("count_include_pad");
  const ir::Value* in = op.operand(0);
  const ir::Value* out = op.result();
  const int64_t total = shape_numel(out->type.shape);
  check_32bit(std::max(total, shape_numel(in->type.shape)), what);
  const size_t S = size_t(g.spatial_rank);
  std::vector<int64_t> xs = strides_of(in->type.shape);
  std::vector<int64_t> window_size = g.kernel;

  // Output coordinates in physical order, then the logical N, C, spatial ones.
  std::string body = unravel_code(out->type.shape, "gid", "o");
  auto logical = [&](size_t l) { return cat("o", g.output_pos[l]); };
  body += cat("  int base = int(", logical(0), ") * ", xs[size_t(g.input_pos[0])], " + int(", logical(1),
              ") * ", xs[size_t(g.input_pos[1])], ";\n");
  body += is_max ? "  float acc = uintBitsToFloat(0xff800000u);\n  bool nan_seen = false;\n"
                 : "  float acc = 0.0;\n  int count = 0;\n";
  std::string indent = "  ";
  for (size_t i = 0; i < S; ++i) {
    body += cat(indent, "for (int k", i, " = 0; k", i, " < ", g.kernel[i], "; ++k", i, ") {\n");
    indent += "  ";
    body += cat(indent, "int p", i, " = int(", logical(2 + i), ") * ", g.strides[i], " - ", g.pad_begin[i],
                " + k", i, " * ", g.dilations[i], ";\n");
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
  for (size_t i = 0; i < S; ++i) {
    indent.resize(indent.size() - 2);
    body += cat(indent, "}\n");
  }
  std::string value = is_max ? "(nan_seen ? uintBitsToFloat(0x7fc00000u) : acc)"
                             // a window wholly in padding counts nothing: 0/0 is NaN (reference)
                             : "(count == 0 ? uintBitsToFloat(0x7fc00000u) : acc / float(count))";

  EmittedKernel k;
  k.kernel = is_max ? "max_pool" : "avg_pool";
  k.strategy = "direct";
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
  plan_linear(k, uint64_t(total), 128, ctx.target, what);
  k.glsl = instantiate_shader("pool", {{"EXTENSIONS", glsl_extensions(types)},
                                       {"WG_SIZE", cat(k.workgroup_size[0])},
                                       {"BUFFERS", buffers},
                                       {"FUNCTIONS", functions},
                                       {"INDEX", folded_global_index(k.workgroup_size[0])},
                                       {"TOTAL", cat(total)},
                                       {"BODY", body}});
  int64_t window = 1;
  for (int64_t w : window_size) window *= w;
  k.flops = double(total) * double(window);
  k.tiles["window"] = window;
  return {k};
}

}  // namespace vkc::codegen::kernels
