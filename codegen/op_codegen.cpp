// One row per op: its kernel, its fusion behaviour and, for elementwise ops, its GLSL expression.
// The expressions are shared by the elementwise kernel and by fused prologues and epilogues, so an
// op means the same thing wherever it is fused (its helpers are in shaders/elementwise_math.glsl).
#include "codegen/op_codegen.h"

#include "codegen/fusion_expr.h"
#include "codegen/glsl_types.h"
#include "codegen/kernels/kernels.h"
#include "ir/op_table.h"

namespace vkc::codegen {
namespace {

using K = ir::OpKind;
using Args = std::vector<std::string>;

std::string call(const char* fn, const Args& x) { return std::string(fn) + "(" + x[0] + ")"; }
std::string call2(const char* fn, const Args& x) { return std::string(fn) + "(" + x[0] + ", " + x[1] + ")"; }
std::string infix(const char* op, const Args& x) { return "(" + x[0] + " " + op + " " + x[1] + ")"; }

std::string neg(const ir::Op&, const Args& x, DType) { return "(-" + x[0] + ")"; }
std::string abs(const ir::Op&, const Args& x, DType) { return call("abs", x); }
std::string relu(const ir::Op&, const Args& x, DType t) {
  std::string zero = glsl_literal(t, 0.0);
  return "(" + x[0] + " > " + zero + " ? " + x[0] + " : " + zero + ")";
}
std::string leaky_relu(const ir::Op& op, const Args& x, DType t) {
  return "(" + x[0] + " >= 0.0 ? " + x[0] + " : " + glsl_literal(t, op.attr_float("alpha")) + " * " + x[0] + ")";
}
std::string clip(const ir::Op& op, const Args& x, DType t) {
  std::string e = x[0];
  if (op.has_attr("min")) e = "vkc_max(" + e + ", " + glsl_literal(t, op.attr_float("min")) + ")";
  if (op.has_attr("max")) e = "vkc_min(" + e + ", " + glsl_literal(t, op.attr_float("max")) + ")";
  return e;
}
std::string sigmoid(const ir::Op&, const Args& x, DType) { return call("vkc_sigmoid", x); }
std::string tanh(const ir::Op&, const Args& x, DType) { return call("vkc_tanh", x); }
std::string exp(const ir::Op&, const Args& x, DType) { return call("exp", x); }
std::string log(const ir::Op&, const Args& x, DType) { return call("log", x); }
std::string sqrt(const ir::Op&, const Args& x, DType) { return call("sqrt", x); }
std::string erf(const ir::Op&, const Args& x, DType) { return call("vkc_erf", x); }
std::string gelu(const ir::Op& op, const Args& x, DType) {
  return call(op.attr_string("approximate") == "tanh" ? "vkc_gelu_tanh" : "vkc_gelu", x);
}
std::string hardswish(const ir::Op&, const Args& x, DType) { return call("vkc_hardswish", x); }
std::string cast(const ir::Op& op, const Args& x, DType t) { return cast_expr(x[0], op.operand(0)->type.dtype, t); }

std::string add(const ir::Op&, const Args& x, DType) { return infix("+", x); }
std::string sub(const ir::Op&, const Args& x, DType) { return infix("-", x); }
std::string mul(const ir::Op&, const Args& x, DType) { return infix("*", x); }
std::string div(const ir::Op&, const Args& x, DType t) { return is_float(t) ? infix("/", x) : call2("vkc_div", x); }
std::string max(const ir::Op&, const Args& x, DType) { return call2("vkc_max", x); }
std::string min(const ir::Op&, const Args& x, DType) { return call2("vkc_min", x); }
std::string pow(const ir::Op&, const Args& x, DType) { return call2("vkc_pow", x); }
std::string select(const ir::Op&, const Args& x, DType) { return "(" + x[0] + " ? " + x[1] + " : " + x[2] + ")"; }

// Issue 23, elementwise and logic group. Comparisons and logic compute GLSL bools (stored as
// uint8_t 0/1 by the elementwise kernel); ordered comparisons are false on NaN, != is true.
std::string equal(const ir::Op&, const Args& x, DType) { return infix("==", x); }
std::string less(const ir::Op&, const Args& x, DType) { return infix("<", x); }
std::string greater(const ir::Op&, const Args& x, DType) { return infix(">", x); }
std::string less_or_equal(const ir::Op&, const Args& x, DType) { return infix("<=", x); }
std::string greater_or_equal(const ir::Op&, const Args& x, DType) { return infix(">=", x); }
std::string logical_and(const ir::Op&, const Args& x, DType) { return infix("&&", x); }
std::string logical_or(const ir::Op&, const Args& x, DType) { return infix("||", x); }
std::string logical_xor(const ir::Op&, const Args& x, DType) { return infix("!=", x); }
std::string logical_not(const ir::Op&, const Args& x, DType) { return "(!" + x[0] + ")"; }
std::string is_nan(const ir::Op&, const Args& x, DType) { return call("isnan", x); }
std::string is_inf(const ir::Op& op, const Args& x, DType) {
  bool pos = op.attr_bool("detect_positive"), neg = op.attr_bool("detect_negative");
  if (pos && neg) return call("isinf", x);
  if (!pos && !neg) return "false";
  return "(isinf(" + x[0] + ") && " + x[0] + (pos ? " > 0.0)" : " < 0.0)");
}
std::string mod(const ir::Op&, const Args& x, DType) { return call2("vkc_mod", x); }
std::string fmod(const ir::Op&, const Args& x, DType) { return call2("vkc_fmod", x); }
// NaN and -0.0 fall through both tests and stay (docs/ops.md, sign).
std::string sign(const ir::Op&, const Args& x, DType t) {
  std::string zero = glsl_literal(t, 0.0);
  return "(" + x[0] + " > " + zero + " ? " + glsl_literal(t, 1.0) + " : (" + x[0] + " < " + zero + " ? " +
         glsl_literal(t, -1.0) + " : " + x[0] + "))";
}
std::string elu(const ir::Op& op, const Args& x, DType t) {
  return "vkc_elu(" + x[0] + ", " + glsl_literal(t, op.attr_float("alpha")) + ")";
}
std::string selu(const ir::Op& op, const Args& x, DType t) {
  return "vkc_selu(" + x[0] + ", " + glsl_literal(t, op.attr_float("alpha")) + ", " +
         glsl_literal(t, op.attr_float("gamma")) + ")";
}
std::string softplus(const ir::Op&, const Args& x, DType) { return call("vkc_softplus", x); }
std::string mish(const ir::Op&, const Args& x, DType) { return call("vkc_mish", x); }
std::string sin(const ir::Op&, const Args& x, DType) { return call("sin", x); }
std::string cos(const ir::Op&, const Args& x, DType) { return call("cos", x); }
std::string floor(const ir::Op&, const Args& x, DType) { return call("floor", x); }
std::string ceil(const ir::Op&, const Args& x, DType) { return call("ceil", x); }
std::string round(const ir::Op&, const Args& x, DType) { return call("roundEven", x); }
std::string prelu(const ir::Op&, const Args& x, DType t) {
  return "(" + x[0] + " < " + glsl_literal(t, 0.0) + " ? " + x[1] + " * " + x[0] + " : " + x[0] + ")";
}

// Elementwise math: one kernel for a chain, fused into anchors' epilogues on float results and into
// their prologues while the rereads stay cheap.
constexpr OpCodegen math(GlslExpr e) {
  return {.emitter = kernels::emit_elementwise, .glsl = e, .prologue_math = true, .epilogue = Epilogue::FloatResult};
}

constexpr ir::OpTable<OpCodegen> build() {
  ir::OpTable<OpCodegen> t;
  t.set(K::Constant, {});
  t.set({K::Conv, K::ConvTranspose},
        {.emitter = kernels::emit_conv, .anchor = FusionAnchor::Conv, .reads = OperandReads::ConvInput});
  t.set(K::Im2Col, {.emitter = kernels::emit_im2col});
  t.set({K::MatMul, K::BatchMatMul, K::Gemm},
        {.emitter = kernels::emit_contraction,
         .anchor = FusionAnchor::Contraction,
         .reads = OperandReads::Contraction});
  t.set({K::ExpandShape, K::CollapseShape, K::Reshape}, {.prologue = Prologue::View, .epilogue = Epilogue::Always});
  t.set(K::Transpose, {.emitter = kernels::emit_data_movement, .prologue = Prologue::Transpose});
  t.set(K::Pad, {.emitter = kernels::emit_data_movement, .prologue = Prologue::Pad});
  t.set(K::Reverse, {.emitter = kernels::emit_data_movement, .prologue = Prologue::Reverse});
  // A slice read through an index map: a transformer's q, k and v taken from one fused projection
  // (ir::fuse_shared_input_matmuls_pass) feed attention and matmuls with no copy of their own.
  t.set(K::Slice, {.emitter = kernels::emit_data_movement, .prologue = Prologue::Slice});
  // A broadcast read through an index map (stride 0 on the repeated dims): grouped-query
  // attention's repeat_kv (Expand of [b, kv, 1, s, d] to [b, kv, h / kv, s, d]) feeds attention
  // with no copy of the keys and values per query head.
  t.set(K::Broadcast, {.emitter = kernels::emit_data_movement, .prologue = Prologue::Broadcast});
  t.set(K::Concat, {.emitter = kernels::emit_data_movement});
  t.set(K::Neg, math(neg));
  t.set(K::Abs, math(abs));
  t.set(K::Relu, math(relu));
  t.set(K::LeakyRelu, math(leaky_relu));
  t.set(K::Clip, math(clip));
  t.set(K::Sigmoid, math(sigmoid));
  t.set(K::Tanh, math(tanh));
  t.set(K::Exp, math(exp));
  t.set(K::Log, math(log));
  t.set(K::Sqrt, math(sqrt));
  t.set(K::Erf, math(erf));
  t.set(K::Gelu, math(gelu));
  t.set(K::HardSwish, math(hardswish));
  // Only a cast to float fuses into a prologue or an epilogue (docs/fusion.md): the casts the fp16
  // precision mode puts after graph inputs and before outputs then cost no dispatch.
  t.set(K::Cast, {.emitter = kernels::emit_elementwise, .glsl = cast, .prologue = Prologue::FloatCast,
                  .epilogue = Epilogue::FloatResult});
  t.set(K::Add, math(add));
  t.set(K::Sub, math(sub));
  t.set(K::Mul, math(mul));
  t.set(K::Div, math(div));
  t.set(K::Max, math(max));
  t.set(K::Min, math(min));
  t.set(K::Pow, math(pow));
  t.set(K::Select, {.emitter = kernels::emit_elementwise, .glsl = select});
  // Quantize/dequantize change element types and need byte-packed storage: they fuse into conv
  // and matmul kernels, not into elementwise chains. A quantize ends an epilogue.
  t.set(K::Quantize, {.emitter = kernels::emit_quant, .epilogue = Epilogue::Always});
  t.set(K::Dequantize, {.emitter = kernels::emit_quant, .prologue = Prologue::Dequantize});
  // Integer products: their own kernel, no prologues or epilogues yet (docs/int8.md).
  t.set({K::ConvInteger, K::MatMulInteger}, {.emitter = kernels::emit_integer_product});
  t.set({K::ReduceSum, K::ReduceMean, K::ReduceMax, K::ReduceMin},
        {.emitter = kernels::emit_reduce, .anchor = FusionAnchor::Reduction});
  t.set({K::ArgMax, K::ArgMin}, {.emitter = kernels::emit_arg_reduce, .anchor = FusionAnchor::ArgReduction});
  t.set({K::Softmax, K::LogSoftmax},
        {.emitter = kernels::emit_softmax,
         .anchor = FusionAnchor::Reduction,
         .reads = OperandReads::SoftmaxPasses});
  t.set({K::MaxPool, K::AvgPool},
        {.emitter = kernels::emit_pool, .anchor = FusionAnchor::Pool, .reads = OperandReads::PoolWindow});
  t.set(K::MaxPoolWithIndices, {.emitter = kernels::emit_pool_indices});
  t.set(K::Resize, {.emitter = kernels::emit_resize});
  t.set({K::Sort, K::TopK}, {.emitter = kernels::emit_sort});
  // attention: q, k and v take prologues (the head-split transposes), the result an epilogue.
  t.set(K::Attention,
        {.emitter = kernels::emit_attention, .anchor = FusionAnchor::Attention, .reads = OperandReads::AttentionTiles});
  // Issue 23, elementwise and logic group. Bool results and operands chain only in elementwise
  // kernels (prologues and epilogues carry float values).
  constexpr auto logic = [](GlslExpr e) { return OpCodegen{.emitter = kernels::emit_elementwise, .glsl = e}; };
  t.set(K::Equal, logic(equal));
  t.set(K::Less, logic(less));
  t.set(K::Greater, logic(greater));
  t.set(K::LessOrEqual, logic(less_or_equal));
  t.set(K::GreaterOrEqual, logic(greater_or_equal));
  t.set(K::And, logic(logical_and));
  t.set(K::Or, logic(logical_or));
  t.set(K::Xor, logic(logical_xor));
  t.set(K::Not, logic(logical_not));
  t.set(K::IsNaN, logic(is_nan));
  t.set(K::IsInf, logic(is_inf));
  t.set(K::Mod, math(mod));
  t.set(K::FMod, math(fmod));
  t.set(K::Sign, math(sign));
  t.set(K::Elu, math(elu));
  t.set(K::Selu, math(selu));
  t.set(K::Softplus, math(softplus));
  t.set(K::Mish, math(mish));
  t.set(K::Sin, math(sin));
  t.set(K::Cos, math(cos));
  t.set(K::Floor, math(floor));
  t.set(K::Ceil, math(ceil));
  t.set(K::Round, math(round));
  t.set(K::PRelu, math(prelu));
  // Indexing (issue 23, indexing and data movement group): one kernel each, no fusion.
  t.set({K::Gather, K::GatherElements, K::GatherND, K::ScatterND, K::ScatterElements},
        {.emitter = kernels::emit_indexing});
  // Normalizations and reductions (issue 23). The normalizations read their input up to three
  // times (loop and streamed strategies), like softmax; a residual add in front fuses into the load.
  t.set({K::ReduceProd, K::ReduceL1, K::ReduceL2}, {.emitter = kernels::emit_reduce, .anchor = FusionAnchor::Reduction});
  t.set(K::ReduceLogSumExp,
        {.emitter = kernels::emit_reduce_log_sum_exp,
         .anchor = FusionAnchor::Reduction,
         .reads = OperandReads::SoftmaxPasses});
  t.set({K::LayerNorm, K::GroupNorm},
        {.emitter = kernels::emit_normalization,
         .anchor = FusionAnchor::Reduction,
         .reads = OperandReads::SoftmaxPasses});
  t.set(K::CumSum, {.emitter = kernels::emit_cumsum});
  return t;
}

constexpr ir::OpTable<OpCodegen> kOpCodegen = build();
static_assert(kOpCodegen.complete(), "every op in ir/ops.def needs exactly one row in codegen/op_codegen.cpp");

}  // namespace

const OpCodegen& op_codegen(ir::OpKind kind) { return kOpCodegen[kind]; }

}  // namespace vkc::codegen
