// One row per op: its shape rule and its reference semantics. Ops of one family share functions
// (the rule reads op.kind where they differ); elementwise math is named per op.
#include "ir/op_rules.h"

#include "ir/elementwise_math.h"
#include "ir/interpreter_ops.h"
#include "ir/op_table.h"
#include "ir/shape_rules.h"

namespace vkc::ir {
namespace {

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
  return t;
}

constexpr OpTable<OpRules> kOpRules = build();
static_assert(kOpRules.complete(),
              "every op in ir/ops.def needs exactly one row in ir/op_rules.cpp (shape rule, reference)");

}  // namespace

const OpRules& op_rules(OpKind kind) { return kOpRules[kind]; }

}  // namespace vkc::ir
