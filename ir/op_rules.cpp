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

// Issue 23, elementwise and logic group: comparisons and logic give 0/1 (stored as bool), NaN
// compares false except for "not equal" (ONNX and IEEE).
double sign(const Op&, double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : x); }  // NaN, -0.0 stay
int64_t sign_i64(int64_t x) { return x > 0 ? 1 : (x < 0 ? -1 : 0); }
double elu(const Op& op, double x) { return x < 0 ? op.attr_float("alpha") * std::expm1(x) : x; }
double selu(const Op& op, double x) {
  double g = op.attr_float("gamma");
  return x <= 0 ? g * op.attr_float("alpha") * std::expm1(x) : g * x;
}
// log(1 + e^x) without overflow for large x or loss of e^x for very negative x.
double softplus_of(double x) {
  if (std::isnan(x)) return x;
  return (x > 0 ? x : 0.0) + std::log1p(std::exp(-std::fabs(x)));
}
double softplus(const Op&, double x) { return softplus_of(x); }
double mish(const Op&, double x) { return x * std::tanh(softplus_of(x)); }
double sin(const Op&, double x) { return std::sin(x); }
double cos(const Op&, double x) { return std::cos(x); }
double floor(const Op&, double x) { return std::floor(x); }
double ceil(const Op&, double x) { return std::ceil(x); }
double round(const Op&, double x) { return std::nearbyint(x); }  // default mode: half to even
double logical_not(const Op&, double x) { return x == 0 ? 1.0 : 0.0; }
double is_nan(const Op&, double x) { return std::isnan(x) ? 1.0 : 0.0; }
double is_inf(const Op& op, double x) {
  if (!std::isinf(x)) return 0.0;
  return (x > 0 ? op.attr_bool("detect_positive") : op.attr_bool("detect_negative")) ? 1.0 : 0.0;
}

double equal(double a, double b) { return a == b ? 1.0 : 0.0; }
double less(double a, double b) { return a < b ? 1.0 : 0.0; }
double greater(double a, double b) { return a > b ? 1.0 : 0.0; }
double less_or_equal(double a, double b) { return a <= b ? 1.0 : 0.0; }
double greater_or_equal(double a, double b) { return a >= b ? 1.0 : 0.0; }
int64_t equal_i64(int64_t a, int64_t b) { return a == b; }
int64_t less_i64(int64_t a, int64_t b) { return a < b; }
int64_t greater_i64(int64_t a, int64_t b) { return a > b; }
int64_t less_or_equal_i64(int64_t a, int64_t b) { return a <= b; }
int64_t greater_or_equal_i64(int64_t a, int64_t b) { return a >= b; }
// Bool operands only (the shape rule), so both paths see 0 or 1.
double logical_and(double a, double b) { return a != 0 && b != 0 ? 1.0 : 0.0; }
double logical_or(double a, double b) { return a != 0 || b != 0 ? 1.0 : 0.0; }
double logical_xor(double a, double b) { return (a != 0) != (b != 0) ? 1.0 : 0.0; }
int64_t logical_and_i64(int64_t a, int64_t b) { return a != 0 && b != 0; }
int64_t logical_or_i64(int64_t a, int64_t b) { return a != 0 || b != 0; }
int64_t logical_xor_i64(int64_t a, int64_t b) { return (a != 0) != (b != 0); }
// mod takes the divisor's sign (Python, numpy), fmod the dividend's (C). Integer x mod 0 is 0, as
// integer division by zero is (div_i64); INT64_MIN mod -1 is 0 without overflowing.
double fmod(double a, double b) { return std::fmod(a, b); }
double mod(double a, double b) {
  double r = std::fmod(a, b);
  if (std::isnan(r)) return r;
  if (r == 0) return std::copysign(0.0, b);
  return (r < 0) != (b < 0) ? r + b : r;
}
int64_t fmod_i64(int64_t a, int64_t b) { return b == 0 || b == -1 ? 0 : a % b; }
int64_t mod_i64(int64_t a, int64_t b) {
  int64_t r = fmod_i64(a, b);
  return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}
// x < 0 (not x >= 0) so NaN passes through.
double prelu(double x, double slope) { return x < 0 ? slope * x : x; }
int64_t prelu_i64(int64_t x, int64_t slope) { return x < 0 ? mul_i64(slope, x) : x; }

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

// Issue 23, elementwise and logic group: elementwise math under another shape rule (bool
// results or operands, the input-shaped prelu).
constexpr OpRules unary_as(ShapeRule shape, double (*f)(const Op&, double), int64_t (*exact)(int64_t) = nullptr) {
  return {shape, eval_unary, {f, exact, false, nullptr, nullptr}};
}
constexpr OpRules binary_as(ShapeRule shape, double (*f)(double, double), int64_t (*exact)(int64_t, int64_t)) {
  return {shape, eval_binary, {nullptr, nullptr, false, f, exact}};
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
  t.set(K::ConvInteger, {infer_conv_integer, eval_conv_integer});
  t.set(K::MatMulInteger, {infer_matmul_integer, eval_matmul_integer});
  t.set({K::ReduceSum, K::ReduceMean, K::ReduceMax, K::ReduceMin}, {infer_reduce, eval_reduce});
  t.set({K::ArgMax, K::ArgMin}, {infer_arg_reduce, eval_arg_reduce});
  t.set({K::Softmax, K::LogSoftmax}, {infer_softmax, eval_softmax});
  t.set({K::MaxPool, K::AvgPool}, {infer_pool, eval_pool});
  t.set(K::MaxPoolWithIndices, {infer_pool, eval_max_pool_with_indices});
  t.set(K::Resize, {infer_resize, eval_resize});
  t.set(K::Sort, {infer_sort, eval_sort});
  t.set(K::TopK, {infer_topk, eval_topk});
  // attention (formed by ir/passes/fuse_attention.cpp)
  t.set(K::Attention, {infer_attention, eval_attention});
  // Issue 23, elementwise and logic group.
  t.set(K::Equal, binary_as(infer_compare, math::equal, math::equal_i64));
  t.set(K::Less, binary_as(infer_compare, math::less, math::less_i64));
  t.set(K::Greater, binary_as(infer_compare, math::greater, math::greater_i64));
  t.set(K::LessOrEqual, binary_as(infer_compare, math::less_or_equal, math::less_or_equal_i64));
  t.set(K::GreaterOrEqual, binary_as(infer_compare, math::greater_or_equal, math::greater_or_equal_i64));
  t.set(K::And, binary_as(infer_logic, math::logical_and, math::logical_and_i64));
  t.set(K::Or, binary_as(infer_logic, math::logical_or, math::logical_or_i64));
  t.set(K::Xor, binary_as(infer_logic, math::logical_xor, math::logical_xor_i64));
  t.set(K::Not, unary_as(infer_logic, math::logical_not));
  t.set(K::IsNaN, unary_as(infer_float_test, math::is_nan));
  t.set(K::IsInf, unary_as(infer_float_test, math::is_inf));
  t.set(K::Mod, binary(math::mod, math::mod_i64));
  t.set(K::FMod, binary(math::fmod, math::fmod_i64));
  t.set(K::Sign, {infer_sign, eval_unary, {math::sign, math::sign_i64, kSignedInts, nullptr, nullptr}});  // u8 too
  t.set(K::Elu, unary(math::elu));
  t.set(K::Selu, unary(math::selu));
  t.set(K::Softplus, unary(math::softplus));
  t.set(K::Mish, unary(math::mish));
  t.set(K::Sin, unary(math::sin));
  t.set(K::Cos, unary(math::cos));
  t.set(K::Floor, unary(math::floor));
  t.set(K::Ceil, unary(math::ceil));
  t.set(K::Round, unary(math::round));
  t.set(K::PRelu, binary_as(infer_prelu, math::prelu, math::prelu_i64));
  // Indexing (issue 23, indexing and data movement group)
  t.set(K::Gather, {infer_gather, eval_gather});
  t.set(K::GatherElements, {infer_gather_elements, eval_gather_elements});
  t.set(K::GatherND, {infer_gather_nd, eval_gather_nd});
  t.set(K::ScatterND, {infer_scatter_nd, eval_scatter_nd});
  t.set(K::ScatterElements, {infer_scatter_elements, eval_scatter_elements});
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
