// The fp16 precision pass (ir/passes/convert_to_fp16.cpp): which ops are stored in f16, which stay
// f32 behind casts, weights converted, inputs/outputs keeping their dtype; and the converted graph
// computing the same function as the original within the documented 5e-3 bound (both run by the
// float64 interpreter, which rounds every f16 value it stores).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ir/interpreter.h"
#include "ir/passes.h"
#include "ir/text_format.h"
#include "ir/verifier.h"

namespace vkc::ir {
namespace {

Graph converted(const std::string& text) {
  Graph g = parse_graph(text);
  PassManager pm;
  pm.add(convert_to_fp16_pass());
  pm.run(g);
  verify_graph(g);
  return g;
}

const Op* op_named(const Graph& g, const std::string& name) {
  for (const Op* op : g.ops())
    if (op->name == name) return op;
  ADD_FAILURE() << "no op named " << name;
  return nullptr;
}

int count_kind(const Graph& g, OpKind k) {
  int n = 0;
  for (const Op* op : g.ops()) n += op->kind == k;
  return n;
}

// max |a - b| / max |b| over every output, after interpreting both graphs on the same inputs.
double relative_max_error(const Graph& original, const Graph& fp16, uint32_t seed) {
  std::map<std::string, HostTensor> inputs;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (const Value* in : original.inputs()) {
    HostTensor t(in->type.dtype, in->type.shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, is_float(in->type.dtype) ? dist(rng) : double(rng() % 3));
    inputs[in->name] = t;
  }
  auto want = interpret(original, inputs), got = interpret(fp16, inputs);
  double err = 0, ref = 0;
  for (const auto& [name, r] : want) {
    const HostTensor& a = got.at(name);
    EXPECT_EQ(a.dtype(), r.dtype()) << name;
    for (int64_t i = 0; i < r.numel(); ++i) {
      err = std::max(err, std::abs(a.get_f64(i) - r.get_f64(i)));
      ref = std::max(ref, std::abs(r.get_f64(i)));
    }
  }
  return ref > 0 ? err / ref : err;
}

const char* kConvNet = R"(graph @net(%x: tensor<1x2x6x6xf32>) {
  %w = constant "w" {value = dense<[0.1, -0.2, 0.3, 0.4, 0.5, -0.6, 0.7, 0.8, -0.9, 0.25, 0.5, 0.75, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, -0.7, 0.8, 0.9, 0.125, 0.375, 0.625, 0.1, -0.2, 0.3, 0.4, 0.5, -0.6, 0.7, 0.8, -0.9, 0.25, 0.5, 0.75]> : tensor<2x2x3x3xf32>} : tensor<2x2x3x3xf32>
  %b = constant "b" {value = dense<[0.1, -0.3]> : tensor<2xf32>} : tensor<2xf32>
  %c = conv "conv" (%x, %w, %b) {pads = [1, 1, 1, 1]} : tensor<1x2x6x6xf32>
  %r = relu "relu" (%c) : tensor<1x2x6x6xf32>
  %p = max_pool "pool" (%r) {kernel = [2, 2], strides = [2, 2]} : tensor<1x2x3x3xf32>
  %y = collapse_shape "flat" (%p) {reassociation = [[0], [1, 2, 3]]} : tensor<1x18xf32>
  %s = softmax "softmax" (%y) {axis = 1} : tensor<1x18xf32>
  return %y as "features", %s as "probs"
}
)";

TEST(ConvertToFp16, WeightsActivationsAndIoCasts) {
  Graph g = converted(kConvNet);
  // Weights converted at compile time: constants of f16, no cast of a constant at run time.
  EXPECT_EQ(op_named(g, "w")->result()->type.dtype, DType::f16);
  EXPECT_EQ(op_named(g, "b")->result()->type.dtype, DType::f16);
  EXPECT_EQ(op_named(g, "w")->attr_tensor("value")->dtype(), DType::f16);
  // Activations stored as f16.
  for (const char* name : {"conv", "relu", "pool"})
    EXPECT_EQ(op_named(g, name)->result()->type.dtype, DType::f16) << name;
  // "features" is an output and the softmax's operand: kept f32, so that it is stored once (a
  // cast to f32 of a value with two users would be a dispatch of its own). The pool's result
  // reaches it through a cast, which fuses into the pool kernel as its epilogue.
  const Op* flat = op_named(g, "flat");
  EXPECT_EQ(flat->result()->type.dtype, DType::f32);
  EXPECT_EQ(flat->operand(0)->producer->kind, OpKind::Cast);
  EXPECT_EQ(flat->operand(0)->producer->operand(0), op_named(g, "pool")->result());
  // The input keeps its dtype; the conv reads it through a cast.
  EXPECT_EQ(g.inputs()[0]->type.dtype, DType::f32);
  const Op* conv = op_named(g, "conv");
  ASSERT_NE(conv->operand(0)->producer, nullptr);
  EXPECT_EQ(conv->operand(0)->producer->kind, OpKind::Cast);
  EXPECT_EQ(conv->operand(0)->producer->operand(0), g.inputs()[0]);
  // Softmax stays f32; outputs keep f32.
  const Op* softmax = op_named(g, "softmax");
  EXPECT_EQ(softmax->result()->type.dtype, DType::f32);
  EXPECT_EQ(softmax->operand(0), flat->result());
  for (const GraphOutput& out : g.outputs()) EXPECT_EQ(out.value->type.dtype, DType::f32) << out.name;
  // One cast of the input, one of the pool's result back to f32.
  EXPECT_EQ(count_kind(g, OpKind::Cast), 2);
  EXPECT_LE(relative_max_error(parse_graph(kConvNet), g, 1), 5e-3);
}

TEST(ConvertToFp16, RangeAndPrecisionSensitiveOpsStayF32) {
  const char* text = R"(graph @main(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) {
  %a = add "add" (%x, %x) : tensor<4x8xf32>
  %e = exp "exp" (%a) : tensor<4x8xf32>
  %l = log "log" (%e) : tensor<4x8xf32>
  %m = reduce_mean "mean" (%a) {axes = [1], keepdims = true} : tensor<4x1xf32>
  %s = reduce_sum "sum" (%a) {axes = [1], keepdims = true} : tensor<4x1xf32>
  %n = layer_norm "ln" (%a, %g, %b) {axis = -1} : tensor<4x8xf32>
  %sm = softmax "sm" (%a) {axis = 1} : tensor<4x8xf32>
  %v, %i = topk "topk" (%a) {k = 3, axis = 1} : tensor<4x3xf32>, tensor<4x3xi64>
  %am = argmax "argmax" (%a) {axis = 1} : tensor<4x1xi64>
  %lt = less "less" (%a, %x) : tensor<4x8xbool>
  %fl = floor "floor" (%a) : tensor<4x8xf32>
  %t = tanh "tanh" (%a) : tensor<4x8xf32>
  return %l as "l", %m as "m", %s as "s", %n as "n", %sm as "sm", %v as "v", %i as "i", %am as "am", %lt as "lt", %fl as "fl", %t as "t"
}
)";
  Graph g = converted(text);
  EXPECT_EQ(op_named(g, "add")->result()->type.dtype, DType::f16);
  EXPECT_EQ(op_named(g, "tanh")->result()->type.dtype, DType::f16);
  for (const char* name : {"exp", "log", "mean", "sum", "ln", "sm", "topk", "argmax", "less", "floor"}) {
    const Op* op = op_named(g, name);
    for (const Value* v : op->operands) {
      EXPECT_NE(v->type.dtype, DType::f16) << name << " reads " << v->type.str();
    }
    for (const Value* r : op->results) {
      EXPECT_NE(r->type.dtype, DType::f16) << name;
    }
  }
  // Integer and bool results are untouched.
  EXPECT_EQ(op_named(g, "topk")->result(1)->type.dtype, DType::i64);
  EXPECT_EQ(op_named(g, "less")->result()->type.dtype, DType::boolean);
  // One cast back to f32 of the f16 sum, shared by every f32 op reading it.
  int casts_of_add = 0;
  for (const Op* op : g.ops())
    if (op->kind == OpKind::Cast && op->operand(0) == op_named(g, "add")->result()) ++casts_of_add;
  EXPECT_EQ(casts_of_add, 1);
}

TEST(ConvertToFp16, IntegerIndicesAndModelF16Untouched) {
  const char* text = R"(graph @main(%x: tensor<5x4xf32>, %idx: tensor<3xi64>, %h: tensor<3x4xf16>) {
  %g = gather "gather" (%x, %idx) {axis = 0} : tensor<3x4xf32>
  %hc = cast "up" (%h) {to = "f32"} : tensor<3x4xf32>
  %y = add "add" (%g, %hc) : tensor<3x4xf32>
  return %y as "y", %h as "h"
}
)";
  Graph g = converted(text);
  const Op* gather = op_named(g, "gather");
  EXPECT_EQ(gather->operand(1)->type.dtype, DType::i64);
  EXPECT_EQ(gather->operand(1), g.inputs()[1]);
  // Data movement of an f32 input keeps f32: the cast goes to the add, which computes.
  EXPECT_EQ(gather->result()->type.dtype, DType::f32);
  EXPECT_EQ(op_named(g, "add")->result()->type.dtype, DType::f16);
  EXPECT_EQ(g.inputs()[2]->type.dtype, DType::f16);
  EXPECT_EQ(g.outputs()[1].value, g.inputs()[2]);
  EXPECT_EQ(g.outputs()[0].value->type.dtype, DType::f32);
}

TEST(ConvertToFp16, DataMovementAtInputsAndOutputsKeepsF32SoCastsFuse) {
  // An input padded by slices and a concat (a replicate pad), a conv, a transpose to the output:
  // the data movement stays f32, the casts sit right before and after the conv.
  const char* text = R"(graph @main(%x: tensor<1x1x4x4xf32>) {
  %edge = slice "edge" (%x) {starts = [0], ends = [1], axes = [2]} : tensor<1x1x1x4xf32>
  %padded = concat "pad" (%edge, %x) {axis = 2} : tensor<1x1x5x4xf32>
  %w = constant "w" {value = dense<[0.5, -0.25]> : tensor<2x1x1x1xf32>} : tensor<2x1x1x1xf32>
  %c = conv "conv" (%padded, %w) : tensor<1x2x5x4xf32>
  %t = transpose "t" (%c) {perm = [0, 2, 3, 1]} : tensor<1x5x4x2xf32>
  return %t as "y"
}
)";
  Graph g = converted(text);
  for (const char* name : {"edge", "pad", "t"})
    EXPECT_EQ(op_named(g, name)->result()->type.dtype, DType::f32) << name;
  const Op* conv = op_named(g, "conv");
  EXPECT_EQ(conv->result()->type.dtype, DType::f16);
  EXPECT_EQ(conv->operand(1)->type.dtype, DType::f16);  // the weights
  EXPECT_EQ(conv->operand(0)->producer->kind, OpKind::Cast);
  EXPECT_EQ(conv->operand(0)->producer->operand(0), op_named(g, "pad")->result());
  EXPECT_EQ(op_named(g, "t")->operand(0)->producer->kind, OpKind::Cast);
  EXPECT_EQ(count_kind(g, OpKind::Cast), 2);
  EXPECT_LE(relative_max_error(parse_graph(text), g, 2), 5e-3);
}

TEST(ConvertToFp16, ConstantBeyondF16RangeKeepsItsUserF32) {
  // 1e5 would read as infinity in f16: the mul keeps its f32 weights and computes in f32.
  const char* text = R"(graph @main(%x: tensor<2xf32>) {
  %big = constant {value = dense<[100000.0, 1.0]> : tensor<2xf32>} : tensor<2xf32>
  %y = mul "scale" (%x, %big) : tensor<2xf32>
  return %y as "y"
}
)";
  Graph g = converted(text);
  EXPECT_EQ(op_named(g, "scale")->result()->type.dtype, DType::f32);
  EXPECT_EQ(op_named(g, "scale")->operand(1)->type.dtype, DType::f32);
  EXPECT_EQ(count_kind(g, OpKind::Cast), 0);
}

TEST(ConvertToFp16, NothingToConvertLeavesTheGraphAlone) {
  const char* text = R"(graph @main(%x: tensor<2x3xf32>) {
  %s = softmax (%x) {axis = 1} : tensor<2x3xf32>
  return %s as "s"
}
)";
  Graph g = converted(text);
  EXPECT_EQ(print_graph(g), print_graph(parse_graph(text)));
}

}  // namespace
}  // namespace vkc::ir
