// MaxPoolWithIndices (ONNX MaxPool's second output): the values of max_pool plus the flat input
// index of each maximum, with the reference's window order, tie and NaN rules
// (ir/interpreter_pool.cpp). A kernel of its own so max_pool's kernel stays free of index work.
#include <climits>

#include "codegen/glsl_types.h"
#include "codegen/kernels/kernel_util.h"
#include "codegen/kernels/kernels.h"
#include "codegen/shader_library.h"
#include "ir/conv_geometry.h"
#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen::kernels {
namespace {

// The smallest value of the compute type: what an empty window holds (the reference's -inf,
// saturated to the element type).
std::string lowest(DType t) {
  switch (t) {
    case DType::f32:
    case DType::f16: return "uintBitsToFloat(0xff800000u)";
    case DType::i64: return "int64_t(-9223372036854775807l - 1l)";
    case DType::i32: return int_literal(INT32_MIN);
    case DType::i8: return "-128";
    default: return "0";  // u8
  }
}

}  // namespace

std::vector<EmittedKernel> emit_pool_indices(const DispatchGroup& group, const KernelContext& ctx,
                                             std::vector<ScratchTensor>&) {
  const ir::Op& op = *group.anchor;
  check(group.ops.size() == 1, "internal: ", op.describe(), " was fused with other ops");
  const std::string what = op.describe();
  std::string forced = ctx.forced(op);
  check(forced.empty() || forced == "direct", what, ": unknown strategy '", forced,
        "' (max_pool_with_indices has: direct)");
  const ir::ConvGeometry g = ir::pool_geometry(op);
  const bool column_major = op.attr_int("storage_order") == 1;
  const ir::Value* in = op.operand(0);
  const ir::Value* values = op.result(0);
  const ir::Value* indices = op.result(1);
  const DType t = in->type.dtype;
  require_storable(t, ctx.target, what);
  const int64_t total = shape_numel(values->type.shape);
  check_32bit(std::max(total, shape_numel(in->type.shape)), what);
  const size_t S = size_t(g.spatial_rank);
  const std::vector<int64_t> xs = strides_of(in->type.shape);
  const int64_t spatial_total = product(g.in_spatial);
  const std::string ct = glsl_compute_type(t);

  std::string body = unravel_code(values->type.shape, "gid", "o");
  auto logical = [&](size_t l) { return cat("int(o", g.output_pos[l], ")"); };
  body += cat("  int base = ", logical(0), " * ", xs[size_t(g.input_pos[0])], " + ", logical(1), " * ",
              xs[size_t(g.input_pos[1])], ";\n");
  body += cat("  int plane = (", logical(0), " * ", g.in_channels, " + ", logical(1), ") * ", spatial_total, ";\n");
  body += cat("  ", ct, " best = ", lowest(t), ";\n  int best_index = -1;\n  bool nan_seen = false;\n");
  std::string indent = "  ";
  for (size_t i = 0; i < S; ++i) {
    body += cat(indent, "for (int k", i, " = 0; k", i, " < ", g.kernel[i], "; ++k", i, ") {\n");
    indent += "  ";
    body += cat(indent, "int p", i, " = ", logical(2 + i), " * ", g.strides[i], " - ", g.pad_begin[i],
                " + k", i, " * ", g.dilations[i], ";\n");
  }
  std::string inside, offset = "base", flat;
  for (size_t i = 0; i < S; ++i) {
    inside += cat(i ? " && " : "", "p", i, " >= 0 && p", i, " < ", g.in_spatial[i]);
    offset += cat(" + p", i, " * ", xs[size_t(g.input_pos[2 + i])]);
  }
  if (column_major) {  // first spatial dim fastest
    flat = cat("p", S - 1);
    for (size_t i = S - 1; i-- > 0;) flat = cat("p", i, " + ", g.in_spatial[i], " * (", flat, ")");
  } else {
    flat = "p0";
    for (size_t i = 1; i < S; ++i) flat = cat("(", flat, ") * ", g.in_spatial[i], " + p", i);
  }
  const bool floats = is_float(t);
  body += cat(indent, "if (!nan_seen && ", inside, ") {\n");
  body += cat(indent, "  ", ct, " v = ", ct, "(src.data[", offset, "]);\n");
  body += cat(indent, "  if (best_index < 0 || v > best", floats ? " || isnan(v)" : "", ") {\n");
  body += cat(indent, "    best = v;\n", indent, "    best_index = plane + ", flat, ";\n");
  if (floats) body += cat(indent, "    nan_seen = isnan(v);\n");
  body += cat(indent, "  }\n", indent, "}\n");
  for (size_t i = 0; i < S; ++i) {
    indent.resize(indent.size() - 2);
    body += cat(indent, "}\n");
  }
  body += cat("  result.data[gid] = ", glsl_storage_type(t), "(best);\n");
  body += "  index_out.data[gid] = uvec2(uint(best_index), best_index < 0 ? 0xffffffffu : 0u);\n";

  EmittedKernel k;
  k.kernel = "max_pool_with_indices";
  k.strategy = "direct";
  k.bindings = {{ctx.tensor(in), false}, {ctx.tensor(values), true}, {ctx.tensor(indices), true}};
  plan_linear(k, uint64_t(total), 128, ctx.target, what);
  k.glsl = instantiate_shader(
      "pool_indices",
      {{"EXTENSIONS", glsl_extensions({t})},
       {"WG_SIZE", cat(k.workgroup_size[0])},
       {"BUFFERS", glsl_buffer(0, t, false, "src") + glsl_buffer(1, t, true, "result") +
                       "layout(std430, set = 0, binding = 2) restrict writeonly buffer Buffer2 { uvec2 data[]; } index_out;\n"},
       {"INDEX", folded_global_index(k.workgroup_size[0])},
       {"TOTAL", cat(total)},
       {"BODY", body}});
  int64_t window = shape_numel(g.kernel);
  k.flops = double(total) * double(window);
  k.bytes = double(in->type.size_bytes() + values->type.size_bytes() + indices->type.size_bytes());
  k.tiles["window"] = window;
  return {k};
}

}  // namespace vkc::codegen::kernels
