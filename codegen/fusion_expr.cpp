#include "codegen/fusion_expr.h"

#include "codegen/shader_library.h"

#include "codegen/glsl_types.h"
#include "codegen/op_codegen.h"
#include "support/error.h"

namespace vkc::codegen {

std::string cast_expr(const std::string& x, DType from, DType to) {
  if (from == to) return x;
  // From bool: x is a GLSL bool (elementwise kernels) or the int 0/1 (fused prologues); the
  // constructor takes either.
  if (from == DType::boolean) return glsl_compute_type(to) + "(" + x + ")";
  // To bool: nonzero is true, NaN included (docs/ops.md, cast).
  if (to == DType::boolean)
    return is_float(from) ? "(isnan(" + x + ") || " + x + " != 0.0)" : "(" + x + " != " + glsl_literal(from, 0.0) + ")";
  if (is_float(from) == is_float(to))
    return glsl_compute_type(from) == glsl_compute_type(to) ? x : glsl_compute_type(to) + "(" + x + ")";
  if (is_float(to)) return "float(" + x + ")";
  // Float -> int: saturate, truncate toward zero, NaN -> 0 (docs/ops.md, cast).
  return "(isnan(" + x + ") ? 0 : int(clamp(" + x + ", -2147483648.0, 2147483520.0)))";
}

std::string elementwise_expr(const ir::Op& op, const std::vector<std::string>& args) {
  GlslExpr expr = op_codegen(op.kind).glsl;
  if (expr == nullptr) throw Error(cat("internal: ", op.describe(), " is not an elementwise op"));
  return expr(op, args, op.result()->type.dtype);
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
