// Elementwise ops: unary activations, binary arithmetic (numpy broadcasting is the IR's own),
// Clip, Where and Cast.
#include <cfloat>

#include "onnx/import_context.h"
#include "onnx/tensor_proto.h"
#include "support/error.h"

namespace vkc::onnx {
namespace {

using K = ir::OpKind;

OpImporter unary(K kind) {
  return [kind](NodeContext& n) { n.set_output(0, n.emit(kind, {n.input(0)})); };
}

// Binary ops need equal operand dtypes in the IR; ONNX Pow allows another exponent type, which
// is cast to the base's type.
OpImporter binary(K kind) {
  return [kind](NodeContext& n) {
    ir::Value* a = n.input(0);
    ir::Value* b = n.input(1);
    if (kind == K::Pow && a->type.dtype != b->type.dtype)
      b = n.emit(K::Cast, {b}, {{"to", std::string(dtype_name(a->type.dtype))}});
    // Opset < 7 Add/Mul/... used an explicit `broadcast`/`axis` attribute pair.
    if (n.attrs.get_int("broadcast", 0) != 0) {
      if (n.attrs.has("axis")) n.unsupported("legacy broadcast with 'axis' is not supported");
    }
    n.set_output(0, n.emit(kind, {a, b}));
  };
}

// Max, Min, Sum take any number of inputs; folded left to right.
OpImporter variadic(K kind) {
  return [kind](NodeContext& n) {
    ir::Value* acc = n.input(0);
    for (int i = 1; i < n.num_inputs(); ++i) acc = n.emit(kind, {acc, n.input(i)});
    if (n.num_inputs() == 1) acc = n.reshape(acc, acc->type.shape);
    n.set_output(0, acc);
  };
}

void import_leaky_relu(NodeContext& n) {
  n.set_output(0, n.emit(K::LeakyRelu, {n.input(0)}, {{"alpha", n.attrs.get_float("alpha", 0.01)}}));
}

void import_gelu(NodeContext& n) {
  std::string approximate = n.attrs.get_string("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    n.unsupported(cat("approximate '", approximate, "' is not supported"));
  n.set_output(0, n.emit(K::Gelu, {n.input(0)}, {{"approximate", approximate}}));
}

// Opset < 11: min/max attributes; opset >= 11: optional constant inputs.
void import_clip(NodeContext& n) {
  ir::AttrMap attrs;
  if (n.opset() < 11) {
    if (n.attrs.has("min")) attrs["min"] = n.attrs.get_float("min", -FLT_MAX);
    if (n.attrs.has("max")) attrs["max"] = n.attrs.get_float("max", FLT_MAX);
  } else {
    if (n.has_input(1)) attrs["min"] = n.constant_floats(1, "min").at(0);
    if (n.has_input(2)) attrs["max"] = n.constant_floats(2, "max").at(0);
  }
  n.set_output(0, n.emit(K::Clip, {n.input(0)}, attrs));
}

void import_where(NodeContext& n) {
  n.set_output(0, n.emit(K::Select, {n.input(0), n.input(1), n.input(2)}));
}

void import_cast(NodeContext& n) {
  int64_t to = n.attrs.get_int("to", 0);
  n.attrs.ignore("saturate");  // only affects float8 targets, which are refused below
  std::optional<DType> d = dtype_from_onnx(int32_t(to));
  if (!d) n.unsupported(cat("cast to ", onnx_dtype_name(int32_t(to)), " is not supported"));
  ir::Value* x = n.input(0);
  if (x->type.dtype == *d) return n.set_output(0, n.reshape(x, x->type.shape));
  n.set_output(0, n.emit(K::Cast, {x}, {{"to", std::string(dtype_name(*d))}}));
}

void import_reciprocal(NodeContext& n) {
  ir::Value* x = n.input(0);
  HostTensor one(x->type.dtype, {});
  one.set_f64(0, 1.0);
  n.set_output(0, n.emit(K::Div, {n.constant(one), x}));
}

// HardSigmoid = clip(alpha * x + beta, 0, 1).
void import_hard_sigmoid(NodeContext& n) {
  ir::Value* x = n.input(0);
  HostTensor alpha(x->type.dtype, {}), beta(x->type.dtype, {});
  alpha.set_f64(0, n.attrs.get_float("alpha", 0.2));
  beta.set_f64(0, n.attrs.get_float("beta", 0.5));
  ir::Value* y = n.emit(K::Add, {n.emit(K::Mul, {x, n.constant(alpha)}), n.constant(beta)});
  n.set_output(0, n.emit(K::Clip, {y}, {{"min", 0.0}, {"max", 1.0}}));
}

}  // namespace

void register_elementwise_importers(std::map<std::string, OpImporter>& r) {
  r["Relu"] = unary(K::Relu);
  r["Sigmoid"] = unary(K::Sigmoid);
  r["Tanh"] = unary(K::Tanh);
  r["Exp"] = unary(K::Exp);
  r["Log"] = unary(K::Log);
  r["Sqrt"] = unary(K::Sqrt);
  r["Neg"] = unary(K::Neg);
  r["Abs"] = unary(K::Abs);
  r["Erf"] = unary(K::Erf);
  r["HardSwish"] = unary(K::HardSwish);
  r["LeakyRelu"] = import_leaky_relu;
  r["Gelu"] = import_gelu;
  r["Clip"] = import_clip;
  r["Add"] = binary(K::Add);
  r["Sub"] = binary(K::Sub);
  r["Mul"] = binary(K::Mul);
  r["Div"] = binary(K::Div);
  r["Pow"] = binary(K::Pow);
  r["Max"] = variadic(K::Max);
  r["Min"] = variadic(K::Min);
  r["Sum"] = variadic(K::Add);
  r["Where"] = import_where;
  r["Cast"] = import_cast;
  r["Reciprocal"] = import_reciprocal;
  r["HardSigmoid"] = import_hard_sigmoid;
}

}  // namespace vkc::onnx
