#include "codegen/fusion_expr.h"

#include "codegen/shader_library.h"

#include "codegen/glsl_types.h"
#include "support/error.h"

namespace vkc::codegen {

std::string unary_expr(const ir::Op& op, const std::string& x, DType t) {
  switch (op.kind) {
    case ir::OpKind::Neg: return "(-" + x + ")";
    case ir::OpKind::Abs: return "abs(" + x + ")";
    case ir::OpKind::Relu: {
      std::string zero = glsl_literal(t, 0.0);
      return "(" + x + " > " + zero + " ? " + x + " : " + zero + ")";
    }
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

std::string elementwise_expr(const ir::Op& op, const std::vector<std::string>& args) {
  DType t = op.result()->type.dtype;
  switch (ir::op_schema(op.kind).category) {
    case ir::OpCategory::Unary:
      return op.kind == ir::OpKind::Cast ? cast_expr(args.at(0), op.operand(0)->type.dtype, t)
                                          : unary_expr(op, args.at(0), t);
    case ir::OpCategory::Binary: return binary_expr(op, args.at(0), args.at(1), t);
    case ir::OpCategory::Ternary: return "(" + args.at(0) + " ? " + args.at(1) + " : " + args.at(2) + ")";
    default: break;
  }
  throw Error(cat("internal: ", op.describe(), " is not an elementwise op"));
}

std::string broadcast_index(const Shape& in, const Shape& out, const std::string& prefix) {
  std::string e;
  int64_t stride = 1;
  size_t offset = out.size() - in.size();
  for (size_t d = in.size(); d-- > 0;) {
    if (in[d] != 1) {
      if (!e.empty()) e += " + ";
      e += stride == 1 ? cat(prefix, d + offset) : cat(prefix, d + offset, " * ", stride, "u");
    }
    stride *= in[d];
  }
  return e.empty() ? "0u" : e;
}

bool inlined_as_literal(const ir::Value* v) {
  return v->producer != nullptr && v->producer->kind == ir::OpKind::Constant && v->type.numel() == 1 &&
         v->type.dtype != DType::boolean && v->type.dtype != DType::i64;
}

std::string literal_of(const ir::Value* v) {
  const HostTensor& t = *v->producer->attr_tensor("value");
  return glsl_literal(v->type.dtype, t.get_f64(0));
}

std::string elementwise_math(const std::set<DType>& types) {
  std::string math = shader_source("elementwise_math.glsl");
  if (types.count(DType::i64)) math += "\n" + shader_source("elementwise_math_i64.glsl");
  return math;
}

}  // namespace vkc::codegen
