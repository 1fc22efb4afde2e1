// One row per op: its shape rule and its reference semantics. Ops of one family share functions
// (the rule reads op.kind where they differ); the scalar math of each unary and binary op is
// defined here, beside its row.
#include "ir/op_rules.h"

#include <cmath>
#include <limits>

#include "ir/interpreter_ops.h"
#include "ir/op_table.h"
#include "ir/shape_rules.h"

namespace vkc::ir {
namespace {

// Floats are computed in double and rounded once to the result type by the interpreter. Integers
// take an exact int64 path (wrapped to the element width on store) so that i64 values beyond 2^53
// and the truncating division are right; unary ops without one go through double (their results
// are not integers in general, and the shape rule decides which dtypes they accept).
namespace math {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

int64_t wrap_neg(int64_t x) { return int64_t(0ULL - uint64_t(x)); }

double neg(const Op&, double x) { return -x; }
double abs(const Op&, double x) { return std::fabs(x); }
// x < 0 (not x > 0) so NaN propagates instead of becoming 0.
double relu(const Op&, double x) { return x < 0 ? 0.0 : x; }
double leaky_relu(const Op& op, double x) { return x < 0 ? op.attr_float("alpha") * x : x; }
double clip(const Op& op, double x) {
  if (op.has_attr("min") && x < op.attr_float("min")) return op.attr_float("min");
  if (op.has_attr("max") && x > op.attr_float("max")) return op.attr_float("max");
  return x;
}
double sigmoid(const Op&, double x) { return 1.0 / (1.0 + std::exp(-x)); }
double tanh(const Op&, double x) { return std::tanh(x); }
double exp(const Op&, double x) { return std::exp(x); }
double log(const Op&, double x) { return std::log(x); }
double sqrt(const Op&, double x) { return std::sqrt(x); }
double erf(const Op&, double x) { return std::erf(x); }
double gelu(const Op& op, double x) {
  const std::string& mode = op.attr_string("approximate");
  if (mode == "none") return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  if (mode == "tanh") {
    const double k = std::sqrt(2.0 / M_PI);
    return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
  }
  throw Error(cat(op.describe(), ": attribute 'approximate' is '", mode, "', expected 'none' or 'tanh'"));
}
double hardswish(const Op&, double x) {
  double r6 = x + 3.0;
  r6 = r6 < 0 ? 0.0 : (r6 > 6 ? 6.0 : r6);
  return x * r6 / 6.0;
}

int64_t neg_i64(int64_t x) { return wrap_neg(x); }
int64_t abs_i64(int64_t x) { return x < 0 ? wrap_neg(x) : x; }
int64_t relu_i64(int64_t x) { return x < 0 ? 0 : x; }

double add(double a, double b) { return a + b; }
double sub(double a, double b) { return a - b; }
double mul(double a, double b) { return a * b; }
double div(double a, double b) { return a / b; }
double max(double a, double b) { return std::isnan(a) || std::isnan(b) ? kNaN : (a > b ? a : b); }
double min(double a, double b) { return std::isnan(a) || std::isnan(b) ? kNaN : (a < b ? a : b); }
double pow(double a, double b) { return std::pow(a, b); }

int64_t add_i64(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
int64_t sub_i64(int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); }
int64_t mul_i64(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }
int64_t div_i64(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return wrap_neg(a);  // INT64_MIN / -1 wraps
  return a / b;                     // C++ truncates toward zero
}
int64_t max_i64(int64_t a, int64_t b) { return a > b ? a : b; }
int64_t min_i64(int64_t a, int64_t b) { return a < b ? a : b; }

// a^b with wrapping multiplication; negative exponents truncate 1/a^|b| toward zero (so only
// |a| == 1 gives a nonzero result; 0^negative is 0 like integer division by zero).
int64_t pow_i64(int64_t a, int64_t b) {
  if (b < 0) {
    if (a == 1) return 1;
    if (a == -1) return (b % 2 == 0) ? 1 : -1;
    return 0;
  }
  uint64_t result = 1, base = uint64_t(a);
  while (b > 0) {
    if (b & 1) result *= base;
    base *= base;
    b >>= 1;
  }
  return int64_t(result);
}

}  // namespace math

using namespace rules;
using namespace interp;
using K = OpKind;

constexpr bool kSignedInts = true;

constexpr OpRules unary(double (*f)(const Op&, double), bool signed_ints = false,
                        int64_t (*exact)(int64_t) = nullptr) {
  return {infer_unary, eval_unary, {f, exact, signed_ints, nullptr, nullptr}};
}

constexpr OpRules binary(double (*f)(double, double), int64_t (*exact)(int64_t, int64_t)) {
  return {infer_binary, eval_binary, {nullptr, nullptr, false, f, exact}};
}

Results eval_constant_op(const Op& op, const Operands&, const ResultTypes& types) {
  return eval_constant(op, types);
}

constexpr OpTable<OpRules> build() {
  OpTable<OpRules> t;
  t.set(K::Constant, {infer_constant, eval_constant_op});
  t.set(K::Conv, {infer_conv, eval_conv});
  t.set(K::ConvTranspose, {infer_conv, eval_conv_transpose});
  t.set(K::Im2Col, {infer_conv, eval_im2col});
  t.set(K::MatMul, {infer_matmul, eval_matmul});
  t.set(K::BatchMatMul, {infer_batch_matmul, eval_matmul});
  t.set(K::Gemm, {infer_gemm, eval_gemm});
  t.set(K::ExpandShape, {infer_expand_shape, eval_same_bytes});
  t.set(K::CollapseShape, {infer_collapse_shape, eval_same_bytes});
  t.set(K::Reshape, {infer_reshape, eval_same_bytes});
  t.set(K::Transpose, {infer_transpose, eval_transpose});
  t.set(K::Pad, {infer_pad, eval_pad});
  t.set(K::Reverse, {infer_reverse, eval_reverse});
  t.set(K::Slice, {infer_slice, eval_slice});
  t.set(K::Concat, {infer_concat, eval_concat});
  t.set(K::Broadcast, {infer_broadcast, eval_broadcast});
  t.set(K::Neg, unary(math::neg, kSignedInts, math::neg_i64));
  t.set(K::Abs, unary(math::abs, kSignedInts, math::abs_i64));
  t.set(K::Relu, unary(math::relu, kSignedInts, math::relu_i64));
  t.set(K::LeakyRelu, unary(math::leaky_relu, kSignedInts));
  t.set(K::Clip, unary(math::clip, kSignedInts));
  t.set(K::Sigmoid, unary(math::sigmoid));
  t.set(K::Tanh, unary(math::tanh));
  t.set(K::Exp, unary(math::exp));
  t.set(K::Log, unary(math::log));
  t.set(K::Sqrt, unary(math::sqrt));
  t.set(K::Erf, unary(math::erf));
  t.set(K::Gelu, unary(math::gelu));
  t.set(K::HardSwish, unary(math::hardswish));
  t.set(K::Cast, {infer_cast, eval_cast});
  t.set(K::Add, binary(math::add, math::add_i64));
  t.set(K::Sub, binary(math::sub, math::sub_i64));
  t.set(K::Mul, binary(math::mul, math::mul_i64));
  t.set(K::Div, binary(math::div, math::div_i64));
  t.set(K::Max, binary(math::max, math::max_i64));
  t.set(K::Min, binary(math::min, math::min_i64));
  t.set(K::Pow, binary(math::pow, math::pow_i64));
  t.set(K::Select, {infer_select, eval_select});
  t.set(K::Quantize, {infer_quantize, eval_quantize});
  t.set(K::Dequantize, {infer_dequantize, eval_dequantize});
  t.set({K::ReduceSum, K::ReduceMean, K::ReduceMax, K::ReduceMin}, {infer_reduce, eval_reduce});
  t.set({K::ArgMax, K::ArgMin}, {infer_arg_reduce, eval_arg_reduce});
  t.set({K::Softmax, K::LogSoftmax}, {infer_softmax, eval_softmax});
  t.set({K::MaxPool, K::AvgPool}, {infer_pool, eval_pool});
  t.set(K::MaxPoolWithIndices, {infer_pool, eval_max_pool_with_indices});
  t.set(K::Resize, {infer_resize, eval_resize});
  t.set(K::Sort, {infer_sort, eval_sort});
  t.set(K::TopK, {infer_topk, eval_topk});
  // Normalizations and reductions (issue 23).
  t.set({K::ReduceProd, K::ReduceL1}, {infer_reduce, eval_reduce_more});
  t.set({K::ReduceL2, K::ReduceLogSumExp}, {infer_reduce_float, eval_reduce_more});
  t.set(K::LayerNorm, {infer_layer_norm, eval_layer_norm});
  t.set(K::GroupNorm, {infer_group_norm, eval_group_norm});
  t.set(K::CumSum, {infer_cumsum, eval_cumsum});
  return t;
}

constexpr OpTable<OpRules> kOpRules = build();
static_assert(kOpRules.complete(),
              "every op in ir/ops.def needs exactly one row in ir/op_rules.cpp (shape rule, reference)");

}  // namespace

const OpRules& op_rules(OpKind kind) { return kOpRules[kind]; }

}  // namespace vkc::ir
