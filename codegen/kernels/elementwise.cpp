// Fused elementwise kernels: one invocation per output element.
//
// Shapes are static, so coordinates and broadcast strides are baked into the GLSL as constants:
// the driver sees plain integer arithmetic with literal divisors.
#include <map>
#include <set>

#include "codegen/glsl_types.h"
#include "codegen/grid.h"
#include "codegen/kernels/kernels.h"
#include "codegen/shader_library.h"
#include "support/error.h"

namespace vkc::codegen::kernels {
namespace {

std::string unary_expr(const ir::Op& op, const std::string& x, DType t) {
  bool f = is_float(t);
  switch (op.kind) {
    case ir::OpKind::Neg: return "(-" + x + ")";
    case ir::OpKind::Abs: return "abs(" + x + ")";
    case ir::OpKind::Relu: return f ? "(" + x + " > 0.0 ? " + x + " : 0.0)" : "max(" + x + ", 0)";
    case ir::OpKind::LeakyRelu:
      return "(" + x + " >= 0.0 ? " + x + " : " + glsl_literal(t, op.attr_float("alpha")) + " * " + x + ")";
    case ir::OpKind::Clip: {
      std::string e = x;
      if (op.has_attr("min")) e = "vkc_max(" + e + ", " + glsl_literal(t, op.attr_float("min")) + ")";
      if (op.has_attr("max")) e = "vkc_min(" + e + ", " + glsl_literal(t, op.attr_float("max")) + ")";
      return e;
    }
    case ir::OpKind::Sigmoid: return "vkc_sigmoid(" + x + ")";
    case ir::OpKind::Tanh: return "vkc_tanh(" + x + ")";
    case ir::OpKind::Exp: return "exp(" + x + ")";
    case ir::OpKind::Log: return "log(" + x + ")";
    case ir::OpKind::Sqrt: return "sqrt(" + x + ")";
    case ir::OpKind::Erf: return "vkc_erf(" + x + ")";
    case ir::OpKind::Gelu:
      return (op.attr_string("approximate") == "tanh" ? "vkc_gelu_tanh(" : "vkc_gelu(") + x + ")";
    case ir::OpKind::HardSwish: return "vkc_hardswish(" + x + ")";
    default: break;
  }
  throw Error(cat("internal: ", op.describe(), " is not a unary elementwise op"));
}

std::string binary_expr(const ir::Op& op, const std::string& a, const std::string& b, DType t) {
  bool f = is_float(t);
  switch (op.kind) {
    case ir::OpKind::Add: return "(" + a + " + " + b + ")";
    case ir::OpKind::Sub: return "(" + a + " - " + b + ")";
    case ir::OpKind::Mul: return "(" + a + " * " + b + ")";
    case ir::OpKind::Div: return f ? "(" + a + " / " + b + ")" : "vkc_div(" + a + ", " + b + ")";
    case ir::OpKind::Max: return "vkc_max(" + a + ", " + b + ")";
    case ir::OpKind::Min: return "vkc_min(" + a + ", " + b + ")";
    case ir::OpKind::Pow: return "vkc_pow(" + a + ", " + b + ")";
    default: break;
  }
  throw Error(cat("internal: ", op.describe(), " is not a binary elementwise op"));
}

std::string cast_expr(const std::string& x, DType from, DType to) {
  if (is_float(from) == is_float(to)) return x;
  if (is_float(to)) return "float(" + x + ")";
  // Float -> int: saturate, truncate toward zero, NaN -> 0 (docs/ops.md, cast).
  return "(isnan(" + x + ") ? 0 : int(clamp(" + x + ", -2147483648.0, 2147483520.0)))";
}

// Index of an operand of shape `in` when iterating the output shape `out` with coordinates c0..:
// numpy broadcasting aligns trailing dims; size-1 dims contribute nothing.
std::string broadcast_index(const Shape& in, const Shape& out) {
  if (in == out) return "gid";
  std::string e;
  int64_t stride = 1;
  size_t offset = out.size() - in.size();
  for (size_t d = in.size(); d-- > 0;) {
    if (in[d] != 1) {
      if (!e.empty()) e += " + ";
      e += stride == 1 ? cat("c", d + offset) : cat("c", d + offset, " * ", stride, "u");
    }
    stride *= in[d];
  }
  return e.empty() ? "0u" : e;
}

}  // namespace

std::vector<EmittedKernel> emit_elementwise(const DispatchGroup& group, const KernelContext& ctx,
                                            std::vector<ScratchTensor>&) {
  const ir::Value* result = group.ops.empty() ? group.inputs.at(0) : group.ops.back()->result();
  const std::string out_tensor = group.ops.empty() ? group.copy_to : ctx.tensor(result);
  const Shape& out_shape = result->type.shape;
  const DType out_type = result->type.dtype;
  std::string what = group.ops.empty() ? "copy to '" + out_tensor + "'" : group.ops.back()->describe();
  int64_t total = shape_numel(out_shape);
  check(total <= int64_t(UINT32_MAX), what, ": ", total,
        " elements exceed 32-bit indexing (at most 4294967295)");

  EmittedKernel k;
  k.kernel = group.ops.empty() ? "copy" : "elementwise";
  k.strategy = "one invocation per element";
  std::set<DType> types{out_type};
  std::string buffers, body;

  // Coordinates of the output element, only if some operand broadcasts.
  bool need_coords = false;
  for (const ir::Value* v : group.inputs) need_coords |= v->type.shape != out_shape;
  if (need_coords) {
    body += "  uint rem = gid;\n";
    for (size_t d = out_shape.size(); d-- > 0;) {
      if (d == 0) body += "  uint c0 = rem;\n";
      else body += cat("  uint c", d, " = rem % ", out_shape[d], "u; rem /= ", out_shape[d], "u;\n");
    }
  }

  std::map<const ir::Value*, std::string> names;
  for (size_t i = 0; i < group.inputs.size(); ++i) {
    const ir::Value* v = group.inputs[i];
    require_storable(v->type.dtype, ctx.target, what);
    types.insert(v->type.dtype);
    std::string inst = cat("in", i);
    buffers += glsl_buffer(uint32_t(i), v->type.dtype, false, inst);
    k.bindings.push_back({ctx.tensor(v), false});
    names[v] = cat("x", i);
    std::string load = cat(inst, ".data[", broadcast_index(v->type.shape, out_shape), "]");
    if (v->type.dtype == DType::boolean) load = "(" + load + " != uint8_t(0))";
    else load = glsl_compute_type(v->type.dtype) + "(" + load + ")";
    std::string type = v->type.dtype == DType::boolean ? "bool" : glsl_compute_type(v->type.dtype);
    body += cat("  ", type, " x", i, " = ", load, ";\n");
  }
  require_storable(out_type, ctx.target, what);

  for (const ir::Op* op : group.ops) {
    const ir::Value* r = op->result();
    DType t = r->type.dtype;
    std::string e;
    auto arg = [&](int i) { return names.at(op->operand(i)); };
    switch (ir::op_schema(op->kind).category) {
      case ir::OpCategory::Unary:
        e = op->kind == ir::OpKind::Cast ? cast_expr(arg(0), op->operand(0)->type.dtype, t)
                                          : unary_expr(*op, arg(0), t);
        break;
      case ir::OpCategory::Binary: e = binary_expr(*op, arg(0), arg(1), t); break;
      case ir::OpCategory::Ternary: e = "(" + arg(0) + " ? " + arg(1) + " : " + arg(2) + ")"; break;
      default: throw Error(cat("internal: ", op->describe(), " in an elementwise group"));
    }
    check(t != DType::boolean, op->describe(), ": bool results are not supported on the GPU yet");
    names[r] = cat("v", r->id);
    body += cat("  ", glsl_compute_type(t), " v", r->id, " = ", e, ";\n");
    k.flops += double(total);
  }

  uint32_t out_binding = uint32_t(group.inputs.size());
  buffers += glsl_buffer(out_binding, out_type, true, "result");
  k.bindings.push_back({out_tensor, true});
  std::string value = names.at(result);
  body += cat("  result.data[gid] = ", glsl_storage_type(out_type), "(", value, ");\n");

  uint32_t wg = fit_workgroup_size_x(256, ctx.target);
  k.workgroup_size = {wg, 1, 1};
  k.workgroup_count = linear_grid(uint64_t(total), wg, ctx.target, what);
  k.push_constants = {uint32_t(total)};
  k.glsl = instantiate_shader("elementwise", {{"EXTENSIONS", glsl_extensions(types)},
                                              {"WG_SIZE", std::to_string(wg)},
                                              {"BUFFERS", buffers},
                                              {"MATH", shader_source("elementwise_math.glsl")},
                                              {"BODY", body}});
  for (const ir::Value* v : group.inputs) k.bytes += double(v->type.size_bytes());
  k.bytes += double(result->type.size_bytes());
  k.tiles["elements"] = total;
  return {k};
}

}  // namespace vkc::codegen::kernels
