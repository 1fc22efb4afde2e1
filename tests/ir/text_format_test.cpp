// The textual IR: print -> parse -> print round trips, positioned parse errors, locations, and the
// example files under examples/.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "common/test_util.h"
#include "ir/text_format.h"
#include "ir/text_lexer.h"
#include "ir/verifier.h"
#include "support/error.h"
#include "support/file_io.h"
#include "support/half.h"

namespace vkc::ir {
namespace {

TensorType f32(Shape s) { return {DType::f32, std::move(s)}; }

bool same_attribute(const Attribute& a, const Attribute& b) {
  if (a.index() != b.index()) return false;
  if (const TensorPtr* ta = std::get_if<TensorPtr>(&a)) {
    const TensorPtr& tb = std::get<TensorPtr>(b);
    return *ta && tb && **ta == *tb;  // byte equality: exact, NaN payloads included
  }
  if (const double* da = std::get_if<double>(&a)) {
    double db = std::get<double>(b);
    return std::memcmp(da, &db, sizeof db) == 0 || (std::isnan(*da) && std::isnan(db));
  }
  return a == b;
}

// Structural comparison of two graphs (names, types, ops, attributes, outputs).
void expect_same_graph(const Graph& a, const Graph& b) {
  ASSERT_EQ(a.inputs().size(), b.inputs().size());
  for (size_t i = 0; i < a.inputs().size(); ++i) EXPECT_EQ(a.inputs()[i]->type, b.inputs()[i]->type);
  auto ops_a = a.ops(), ops_b = b.ops();
  ASSERT_EQ(ops_a.size(), ops_b.size());
  for (size_t i = 0; i < ops_a.size(); ++i) {
    const Op& x = *ops_a[i];
    const Op& y = *ops_b[i];
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.name, y.name);
    ASSERT_EQ(x.results.size(), y.results.size());
    for (size_t r = 0; r < x.results.size(); ++r) EXPECT_EQ(x.results[r]->type, y.results[r]->type);
    ASSERT_EQ(x.attrs.size(), y.attrs.size()) << op_name(x.kind);
    for (const auto& [name, value] : x.attrs) {
      ASSERT_TRUE(y.attrs.count(name)) << name;
      EXPECT_TRUE(same_attribute(value, y.attrs.at(name))) << op_name(x.kind) << " " << name;
    }
  }
  ASSERT_EQ(a.outputs().size(), b.outputs().size());
  for (size_t i = 0; i < a.outputs().size(); ++i) EXPECT_EQ(a.outputs()[i].name, b.outputs()[i].name);
}

// print -> parse -> print must give identical text and an equal graph. Returns the text.
std::string round_trip(const Graph& g) {
  std::string first = print_graph(g);
  Graph parsed = parse_graph(first, "rt.vkir");
  std::string second = print_graph(parsed);
  EXPECT_EQ(first, second);
  expect_same_graph(g, parsed);
  return first;
}

// The message vkc::Error carries for `text`, or "" when it parses.
std::string parse_error(const std::string& text) {
  try {
    parse_graph(text, "t.vkir");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// ---------------------------------------------------------------------------------------------
// One small graph per op kind, built through the Graph API (types inferred by the verifier).

using Builder = std::function<void(Graph&)>;

Builder unary(OpKind k, AttrMap attrs = {}) {
  return [k, attrs](Graph& g) {
    Value* x = g.add_input("x", f32({2, 3}));
    g.add_output(g.add_op(k, {x}, attrs)->result());
  };
}
Builder binary(OpKind k) {
  return [k](Graph& g) {
    Value* a = g.add_input("a", f32({2, 3}));
    Value* b = g.add_input("b", f32({1, 3}));
    g.add_output(g.add_op(k, {a, b})->result());
  };
}
Builder reduce(OpKind k) {
  return [k](Graph& g) {
    Value* x = g.add_input("x", f32({2, 3, 4}));
    g.add_output(g.add_op(k, {x}, {{"axes", std::vector<int64_t>{-1, 0}}, {"keepdims", false}})->result());
  };
}

std::map<OpKind, Builder> op_builders() {
  using V = std::vector<int64_t>;
  std::map<OpKind, Builder> b;
  b[OpKind::Constant] = [](Graph& g) {
    g.add_output(g.add_constant(make_f32({2, 2}, {1.0f, -2.5f, 0.1f, 1e-30f}), "c"));
  };
  b[OpKind::Conv] = [](Graph& g) {
    Value* x = g.add_input("x", f32({1, 2, 5, 5}));
    Value* w = g.add_input("w", f32({3, 2, 3, 3}));
    Value* bias = g.add_input("bias", f32({3}));
    g.add_output(g.add_op(OpKind::Conv, {x, w, bias},
                          {{"strides", V{2, 1}}, {"pads", V{1, 1, 1, 1}}, {"dilations", V{1, 1}},
                           {"groups", int64_t(1)}, {"input_layout", std::string("NCHW")}},
                          "conv1")
                     ->result());
  };
  b[OpKind::ConvTranspose] = [](Graph& g) {
    Value* x = g.add_input("x", f32({1, 2, 4, 4}));
    Value* w = g.add_input("w", f32({2, 3, 3, 3}));
    g.add_output(g.add_op(OpKind::ConvTranspose, {x, w},
                          {{"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}, {"output_padding", V{1, 1}}})
                     ->result());
  };
  b[OpKind::Im2Col] = [](Graph& g) {
    Value* x = g.add_input("x", f32({1, 2, 5, 5}));
    g.add_output(g.add_op(OpKind::Im2Col, {x}, {{"kernel", V{3, 3}}, {"pads", V{1, 1, 1, 1}}})->result());
  };
  b[OpKind::MatMul] = [](Graph& g) {
    Value* a = g.add_input("a", f32({2, 3}));
    Value* c = g.add_input("b", f32({4, 3}));
    g.add_output(g.add_op(OpKind::MatMul, {a, c}, {{"transpose_b", true}})->result());
  };
  b[OpKind::BatchMatMul] = [](Graph& g) {
    Value* a = g.add_input("a", f32({2, 2, 3}));
    Value* c = g.add_input("b", f32({2, 3, 4}));
    g.add_output(g.add_op(OpKind::BatchMatMul, {a, c})->result());
  };
  b[OpKind::Gemm] = [](Graph& g) {
    Value* a = g.add_input("a", f32({2, 3}));
    Value* c = g.add_input("b", f32({3, 4}));
    Value* bias = g.add_input("c", f32({4}));
    g.add_output(g.add_op(OpKind::Gemm, {a, c, bias}, {{"alpha", 0.5}, {"beta", 2.0}})->result());
  };
  b[OpKind::ExpandShape] = [](Graph& g) {
    Value* x = g.add_input("x", f32({6, 4}));
    g.add_output(g.add_op(OpKind::ExpandShape, {x},
                          {{"reassociation", IntsList{{0, 1}, {2}}}, {"shape", V{2, 3, 4}}})
                     ->result());
  };
  b[OpKind::CollapseShape] = [](Graph& g) {
    Value* x = g.add_input("x", f32({2, 3, 4}));
    g.add_output(g.add_op(OpKind::CollapseShape, {x}, {{"reassociation", IntsList{{0, 1}, {2}}}})->result());
  };
  b[OpKind::Reshape] = [](Graph& g) {
    Value* x = g.add_input("x", f32({2, 3, 4}));
    g.add_output(g.add_op(OpKind::Reshape, {x}, {{"shape", V{4, 6}}})->result());
  };
  b[OpKind::Transpose] = [](Graph& g) {
    Value* x = g.add_input("x", f32({2, 3, 4}));
    g.add_output(g.add_op(OpKind::Transpose, {x}, {{"perm", V{1, 0, 2}}})->result());
  };
  b[OpKind::Pad] = [](Graph& g) {
    Value* x = g.add_input("x", f32({2, 3}));
    g.add_output(g.add_op(OpKind::Pad, {x}, {{"pads", V{0, 1, 2, 0}}, {"value", -1.5}})->result());
  };
  b[OpKind::Reverse] = [](Graph& g) {
    Value* x = g.add_input("x", f32({2, 3}));
    g.add_output(g.add_op(OpKind::Reverse, {x}, {{"axes", V{0}}})->result());
  };
  b[OpKind::Slice] = [](Graph& g) {
    Value* x = g.add_input("x", f32({4, 6}));
    g.add_output(g.add_op(OpKind::Slice, {x},
                          {{"starts", V{1, 0}}, {"ends", V{3, 6}}, {"axes", V{0, 1}}, {"steps", V{1, 2}}})
                     ->result());
  };
  b[OpKind::Concat] = [](Graph& g) {
    Value* a = g.add_input("a", f32({2, 3}));
    Value* c = g.add_input("b", f32({2, 1}));
    g.add_output(g.add_op(OpKind::Concat, {a, c, a}, {{"axis", int64_t(-1)}})->result());
  };
  b[OpKind::Broadcast] = [](Graph& g) {
    Value* x = g.add_input("x", f32({3, 1}));
    g.add_output(g.add_op(OpKind::Broadcast, {x}, {{"shape", V{2, 3, 4}}})->result());
  };
  for (OpKind k : {OpKind::Neg, OpKind::Abs, OpKind::Relu, OpKind::Sigmoid, OpKind::Tanh, OpKind::Exp,
                   OpKind::Log, OpKind::Sqrt, OpKind::Erf, OpKind::HardSwish})
    b[k] = unary(k);
  b[OpKind::LeakyRelu] = unary(OpKind::LeakyRelu, {{"alpha", 0.1}});
  b[OpKind::Clip] = unary(OpKind::Clip, {{"min", -1e-30}, {"max", 6.0}});
  b[OpKind::Gelu] = unary(OpKind::Gelu, {{"approximate", std::string("tanh")}});
  b[OpKind::Cast] = unary(OpKind::Cast, {{"to", std::string("f16")}});
  for (OpKind k : {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Max, OpKind::Min,
                   OpKind::Pow})
    b[k] = binary(k);
  b[OpKind::Select] = [](Graph& g) {
    Value* c = g.add_input("cond", {DType::boolean, {2, 3}});
    Value* x = g.add_input("x", f32({2, 3}));
    Value* y = g.add_input("y", f32({3}));
    g.add_output(g.add_op(OpKind::Select, {c, x, y})->result());
  };
  b[OpKind::Quantize] = [](Graph& g) {
    Value* x = g.add_input("x", f32({1, 3, 2}));
    Value* s = g.add_input("scale", f32({3}));
    Value* z = g.add_input("zp", {DType::u8, {3}});
    g.add_output(g.add_op(OpKind::Quantize, {x, s, z}, {{"axis", int64_t(1)}})->result());
  };
  b[OpKind::Dequantize] = [](Graph& g) {
    Value* x = g.add_input("x", {DType::i8, {2, 3}});
    Value* s = g.add_input("scale", f32({}));
    Value* z = g.add_input("zp", {DType::i8, {}});
    g.add_output(g.add_op(OpKind::Dequantize, {x, s, z})->result());
  };
  b[OpKind::ConvInteger] = [](Graph& g) {
    Value* x = g.add_input("x", {DType::u8, {1, 2, 5, 5}});
    Value* w = g.add_input("w", {DType::i8, {4, 1, 3, 3}});
    Value* xz = g.add_input("xz", {DType::u8, {}});
    Value* wz = g.add_input("wz", {DType::i8, {4}});
    Value* bias = g.add_input("bias", {DType::i32, {4}});
    g.add_output(g.add_op(OpKind::ConvInteger, {x, w, xz, wz, bias},
                          {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"groups", int64_t(2)}})->result());
  };
  b[OpKind::MatMulInteger] = [](Graph& g) {
    Value* a = g.add_input("a", {DType::u8, {2, 3, 4}});
    Value* m = g.add_input("b", {DType::i8, {4, 5}});
    Value* az = g.add_input("az", {DType::u8, {1}});
    Value* bz = g.add_input("bz", {DType::i8, {5}});
    g.add_output(g.add_op(OpKind::MatMulInteger, {a, m, az, bz})->result());
  };
  for (OpKind k : {OpKind::ReduceSum, OpKind::ReduceMean, OpKind::ReduceMax, OpKind::ReduceMin})
    b[k] = reduce(k);
  for (OpKind k : {OpKind::ArgMax, OpKind::ArgMin})
    b[k] = [k](Graph& g) {
      Value* x = g.add_input("x", f32({2, 3}));
      g.add_output(g.add_op(k, {x}, {{"axis", int64_t(1)}, {"keepdims", false},
                                     {"select_last_index", true}})
                       ->result());
    };
  for (OpKind k : {OpKind::Softmax, OpKind::LogSoftmax}) b[k] = unary(k, {{"axis", int64_t(-1)}});
  for (OpKind k : {OpKind::MaxPool, OpKind::AvgPool})
    b[k] = [k](Graph& g) {
      Value* x = g.add_input("x", f32({1, 2, 7, 7}));
      g.add_output(g.add_op(k, {x}, {{"kernel", V{3, 3}}, {"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}},
                                     {"ceil_mode", true}, {"layout", std::string("NCHW")}})
                       ->result());
    };
  b[OpKind::MaxPoolWithIndices] = [](Graph& g) {
    Value* x = g.add_input("x", f32({1, 2, 7, 7}));
    Op* op = g.add_op(OpKind::MaxPoolWithIndices, {x},
                      {{"kernel", V{3, 3}}, {"strides", V{2, 2}}, {"storage_order", int64_t(1)}});
    g.add_output(op->result(0), "values");
    g.add_output(op->result(1), "indices");
  };
  b[OpKind::Resize] = [](Graph& g) {
    Value* x = g.add_input("x", f32({1, 2, 4, 5}));
    // Scales that are not exact decimals must survive printing (shortest round-trip form).
    g.add_output(g.add_op(OpKind::Resize, {x},
                          {{"sizes", V{1, 2, 2, 3}}, {"scales", std::vector<double>{1, 1, double(0.6f), 0.7}},
                           {"mode", std::string("linear")}, {"coordinate_mode", std::string("tf_crop_and_resize")},
                           {"roi", std::vector<double>{0, 0, 0.1, 0.2, 1, 1, 0.9, 1.0 / 3}},
                           {"extrapolation_value", -2.5}, {"exclude_outside", true}})
                     ->result());
  };
  b[OpKind::Sort] = [](Graph& g) {
    Value* keys = g.add_input("keys", f32({2, 5}));
    Value* vals = g.add_input("vals", {DType::i64, {2, 5}});
    Op* op = g.add_op(OpKind::Sort, {keys, vals}, {{"axis", int64_t(1)}, {"descending", true}});
    g.add_output(op->result(0), "sorted_keys");
    g.add_output(op->result(1), "sorted_vals");
  };
  b[OpKind::TopK] = [](Graph& g) {
    Value* x = g.add_input("x", f32({2, 5}));
    Op* op = g.add_op(OpKind::TopK, {x}, {{"k", int64_t(2)}, {"largest", false}});
    g.add_output(op->result(0), "values");
    g.add_output(op->result(1), "indices");
  };
  // attention
  b[OpKind::Attention] = [](Graph& g) {
    Value* q = g.add_input("q", f32({2, 3, 4}));
    Value* k = g.add_input("k", f32({2, 4, 5}));
    Value* v = g.add_input("v", f32({2, 5, 6}));
    Value* mask = g.add_input("mask", f32({3, 5}));
    g.add_output(g.add_op(OpKind::Attention, {q, k, v, mask},
                          {{"scale", 0.125}, {"causal", true}, {"k_transposed", true}})
                     ->result());
  };
  // Issue 23, elementwise and logic group.
  for (OpKind k : {OpKind::Equal, OpKind::Less, OpKind::Greater, OpKind::LessOrEqual, OpKind::GreaterOrEqual,
                   OpKind::Mod, OpKind::FMod, OpKind::PRelu})
    b[k] = binary(k);
  for (OpKind k : {OpKind::And, OpKind::Or, OpKind::Xor})
    b[k] = [k](Graph& g) {
      Value* x = g.add_input("x", {DType::boolean, {2, 3}});
      Value* y = g.add_input("y", {DType::boolean, {3}});
      g.add_output(g.add_op(k, {x, y})->result());
    };
  b[OpKind::Not] = [](Graph& g) {
    Value* x = g.add_input("x", {DType::boolean, {2, 3}});
    g.add_output(g.add_op(OpKind::Not, {x})->result());
  };
  for (OpKind k : {OpKind::IsNaN, OpKind::Sign, OpKind::Softplus, OpKind::Mish, OpKind::Sin, OpKind::Cos,
                   OpKind::Floor, OpKind::Ceil, OpKind::Round})
    b[k] = unary(k);
  b[OpKind::IsInf] = unary(OpKind::IsInf, {{"detect_negative", false}});
  b[OpKind::Elu] = unary(OpKind::Elu, {{"alpha", 0.5}});
  b[OpKind::Selu] = unary(OpKind::Selu, {{"alpha", 1.5}, {"gamma", 2.25}});
  // Indexing (issue 23, indexing and data movement group)
  b[OpKind::Gather] = [](Graph& g) {
    Value* x = g.add_input("x", f32({5, 3}));
    Value* i = g.add_input("i", {DType::i64, {2, 2}});
    g.add_output(g.add_op(OpKind::Gather, {x, i}, {{"axis", int64_t(-2)}})->result());
  };
  b[OpKind::GatherElements] = [](Graph& g) {
    Value* x = g.add_input("x", f32({5, 3}));
    Value* i = g.add_input("i", {DType::i32, {5, 2}});
    g.add_output(g.add_op(OpKind::GatherElements, {x, i}, {{"axis", int64_t(1)}})->result());
  };
  b[OpKind::GatherND] = [](Graph& g) {
    Value* x = g.add_input("x", f32({2, 5, 3}));
    Value* i = g.add_input("i", {DType::i64, {2, 4, 1}});
    g.add_output(g.add_op(OpKind::GatherND, {x, i}, {{"batch_dims", int64_t(1)}})->result());
  };
  b[OpKind::ScatterND] = [](Graph& g) {
    Value* x = g.add_input("x", f32({5, 3}));
    Value* i = g.add_input("i", {DType::i64, {2, 1}});
    Value* u = g.add_input("u", f32({2, 3}));
    g.add_output(g.add_op(OpKind::ScatterND, {x, i, u}, {{"reduction", std::string("add")}})->result());
  };
  b[OpKind::ScatterElements] = [](Graph& g) {
    Value* x = g.add_input("x", f32({5, 3}));
    Value* i = g.add_input("i", {DType::i64, {2, 3}});
    Value* u = g.add_input("u", f32({2, 3}));
    g.add_output(g.add_op(OpKind::ScatterElements, {x, i, u}, {{"axis", int64_t(0)}, {"reduction", std::string("max")}})
                     ->result());
  };
  // Normalizations and reductions (issue 23).
  for (OpKind k : {OpKind::ReduceProd, OpKind::ReduceL1, OpKind::ReduceL2, OpKind::ReduceLogSumExp}) b[k] = reduce(k);
  b[OpKind::LayerNorm] = [](Graph& g) {
    Value* x = g.add_input("x", f32({2, 3, 4}));
    Value* s = g.add_input("scale", f32({3, 4}));
    Value* c = g.add_input("bias", f32({3, 4}));
    g.add_output(g.add_op(OpKind::LayerNorm, {x, s, c}, {{"axis", int64_t(-2)}, {"epsilon", 1e-6}})->result());
  };
  b[OpKind::GroupNorm] = [](Graph& g) {
    Value* x = g.add_input("x", f32({2, 6, 5}));
    Value* s = g.add_input("scale", f32({6}));
    Value* c = g.add_input("bias", f32({6}));
    g.add_output(g.add_op(OpKind::GroupNorm, {x, s, c}, {{"num_groups", int64_t(3)}, {"epsilon", 0.01}})->result());
  };
  b[OpKind::CumSum] = unary(OpKind::CumSum, {{"axis", int64_t(1)}, {"exclusive", true}, {"reverse", true}});
  return b;
}

TEST(TextFormatRoundTrip, EveryOpKind) {
  std::map<OpKind, Builder> builders = op_builders();
  for (OpKind k : all_op_kinds()) {
    SCOPED_TRACE(std::string(op_name(k)));
    ASSERT_TRUE(builders.count(k)) << "no round-trip case for op " << op_name(k);
    Graph g;
    builders.at(k)(g);
    std::string text = round_trip(g);
    EXPECT_NE(text.find(" = " + std::string(op_name(k)) + " "), std::string::npos) << text;
  }
}

TEST(TextFormatRoundTrip, PrintsTheDocumentedSyntax) {
  Graph g;
  Value* x = g.add_input("x", f32({1, 5, 3}));
  Value* w = g.add_input("w", f32({3, 2, 4}));
  Op* conv = g.add_op(OpKind::Conv, {x, w},
                      {{"input_layout", std::string("NWC")}, {"filter_layout", std::string("CWF")},
                       {"output_layout", std::string("NWC")}},
                      "c1");
  conv->result()->name = "y";
  Op* topk = g.add_op(OpKind::TopK, {conv->result()}, {{"k", int64_t(1)}});
  topk->result(0)->name = "v";
  topk->result(1)->name = "i";
  g.add_output(conv->result(), "out");
  g.add_output(topk->result(1), "idx");
  EXPECT_EQ(round_trip(g),
            "graph @main(%x: tensor<1x5x3xf32>, %w: tensor<3x2x4xf32>) {\n"
            "  %y = conv \"c1\" (%x, %w) {filter_layout = \"CWF\", input_layout = \"NWC\", "
            "output_layout = \"NWC\"} : tensor<1x4x4xf32>\n"
            "  %v, %i = topk (%y) {k = 1} : tensor<1x4x1xf32>, tensor<1x4x1xi64>\n"
            "  return %y as \"out\", %i as \"idx\"\n"
            "}\n");
}

TEST(TextFormatRoundTrip, FloatAttributesUseShortestExactForm) {
  const std::vector<std::pair<double, std::string>> cases = {
      {0.1, "0.1"},       {1e-30, "1e-30"},     {1e-05, "1e-05"},
      {-2.5, "-2.5"},     {1.0, "1.0"},         {-0.0, "-0.0"},
      {1e300, "1e+300"},  {123456789.0, "123456789.0"},
      {std::numeric_limits<double>::infinity(), "inf"},
      {-std::numeric_limits<double>::infinity(), "-inf"},
      {std::numeric_limits<double>::quiet_NaN(), "nan"},
      {5e-324, "5e-324"}};
  for (const auto& [value, spelling] : cases) {
    SCOPED_TRACE(spelling);
    Graph g;
    Value* x = g.add_input("x", f32({2}));
    g.add_output(g.add_op(OpKind::Pad, {x}, {{"pads", std::vector<int64_t>{1, 0}}, {"value", value}})->result());
    std::string text = round_trip(g);
    EXPECT_NE(text.find("value = " + spelling + "}"), std::string::npos) << text;
  }
}

TEST(TextFormatRoundTrip, IntegerLiteralForFloatAttributeStaysInt) {
  Graph g = parse_graph(
      "graph @g(%x: tensor<2xf32>) {\n  %y = leaky_relu (%x) {alpha = 2} : tensor<2xf32>\n  return %y as \"y\"\n}\n");
  const Op& op = *g.ops()[0];
  EXPECT_EQ(attr_kind(op.attrs.at("alpha")), AttrKind::Int);
  EXPECT_EQ(op.attr_float("alpha"), 2.0);
  EXPECT_NE(round_trip(g).find("alpha = 2}"), std::string::npos);
}

TEST(TextFormatRoundTrip, NegativeIntsAndEmptyLists) {
  Graph g;
  Value* x = g.add_input("x", f32({2, 3}));
  Value* s = g.add_op(OpKind::Softmax, {x}, {{"axis", int64_t(-2)}})->result();
  Value* r = g.add_op(OpKind::ReduceSum, {s}, {{"axes", std::vector<int64_t>{}}})->result();
  Value* scalar = g.add_input("s", f32({}));
  Value* e = g.add_op(OpKind::ExpandShape, {scalar},
                      {{"reassociation", IntsList{}}, {"shape", std::vector<int64_t>{1, 1}}})
                 ->result();
  g.add_output(r, "r");
  g.add_output(e, "e");
  std::string text = round_trip(g);
  EXPECT_NE(text.find("{axis = -2}"), std::string::npos) << text;
  EXPECT_NE(text.find("{axes = []}"), std::string::npos) << text;
  EXPECT_NE(text.find("{reassociation = [], shape = [1, 1]}"), std::string::npos) << text;
  EXPECT_NE(text.find("%s: tensor<f32>"), std::string::npos) << text;
}

TEST(TextFormatRoundTrip, StringsWithEscapes) {
  Graph g;
  Value* x = g.add_input("x", f32({2}));
  std::string tricky = "a\"b\\c\nd\te\x01z\x7f\xc3\xa9";
  Op* op = g.add_op(OpKind::Relu, {x}, {}, tricky);
  g.add_output(op->result(), tricky);
  std::string text = round_trip(g);
  EXPECT_NE(text.find("relu \"a\\\"b\\\\c\\nd\\te\\x01z\\x7f\xc3\xa9\" (%x)"), std::string::npos) << text;
  Graph parsed = parse_graph(text);
  EXPECT_EQ(parsed.ops()[0]->name, tricky);
  EXPECT_EQ(parsed.outputs()[0].name, tricky);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4);  // escapes keep one op per line
}

TEST(TextFormatRoundTrip, StringAttributeEscapesReadBack) {
  // A layout string is checked by the verifier, so use one that is valid but escaped in the text.
  Graph g = parse_graph(
      "graph @g(%x: tensor<1x2x4xf32>) {\n"
      "  %y = max_pool (%x) {kernel = [2], layout = \"N\\x43W\"} : tensor<1x2x3xf32>\n"
      "  return %y as \"y\"\n}\n");
  EXPECT_EQ(g.ops()[0]->attr_string("layout"), "NCW");
  round_trip(g);
}

TEST(TextFormatRoundTrip, ConstantsOfEveryDType) {
  Graph g;
  auto add = [&](HostTensor t) { g.add_output(g.add_constant(std::move(t))); };
  add(make_f32({8}, {0.1f, -0.0f, 1e-30f, 3.4028235e38f, 1e-45f, std::numeric_limits<float>::infinity(),
                     -std::numeric_limits<float>::infinity(), 1.0f}));
  HostTensor nan_scalar(DType::f32, {});
  nan_scalar.as<float>()[0] = std::numeric_limits<float>::quiet_NaN();
  add(nan_scalar);
  HostTensor h(DType::f16, {3});
  h.as<uint16_t>()[0] = float_to_half(0.1f);
  h.as<uint16_t>()[1] = float_to_half(65504.0f);
  h.as<uint16_t>()[2] = float_to_half(-6e-8f);
  add(h);
  add(make_i64({3}, {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), 0}));
  HostTensor i32(DType::i32, {2});
  i32.set_i64(0, INT32_MIN);
  i32.set_i64(1, INT32_MAX);
  add(i32);
  HostTensor i8(DType::i8, {2});
  i8.set_i64(0, -128);
  i8.set_i64(1, 127);
  add(i8);
  HostTensor u8(DType::u8, {2});
  u8.set_i64(1, 255);
  add(u8);
  HostTensor b(DType::boolean, {2, 1});
  b.as<uint8_t>()[0] = 1;
  add(b);
  add(HostTensor(DType::f32, {0, 3}));
  std::string text = round_trip(g);
  for (const char* expected :
       {"dense<[0.1, -0.0, 1e-30, 3.4028235e+38, 1e-45, inf, -inf, 1.0]> : tensor<8xf32>",
        "dense<[nan]> : tensor<f32>", "dense<[0.099975586, 65504.0, -5.9604645e-08]> : tensor<3xf16>",
        "dense<[-9223372036854775808, 9223372036854775807, 0]> : tensor<3xi64>",
        "dense<[-2147483648, 2147483647]> : tensor<2xi32>", "dense<[-128, 127]> : tensor<2xi8>",
        "dense<[0, 255]> : tensor<2xu8>", "dense<[true, false]> : tensor<2x1xbool>",
        "dense<[]> : tensor<0x3xf32>"})
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
}

TEST(TextFormatRoundTrip, LargeConstantsUseDenseHexBitExactly) {
  Graph g;
  std::mt19937 rng(7);
  HostTensor big = test::random_tensor(DType::f32, {5, 20}, rng);
  big.as<float>()[3] = std::numeric_limits<float>::quiet_NaN();
  g.add_output(g.add_constant(big, "big"));
  HostTensor bools = test::random_tensor(DType::boolean, {65}, rng);
  g.add_output(g.add_constant(bools, "flags"));
  std::string text = round_trip(g);
  EXPECT_NE(text.find("dense_hex<\""), std::string::npos);
  Graph parsed = parse_graph(text);
  EXPECT_TRUE(*parsed.ops()[0]->attr_tensor("value") == big);
  EXPECT_TRUE(*parsed.ops()[1]->attr_tensor("value") == bools);
}

// Bytes kept beside the text, as a module keeps its source graph's weights (api/source_graph.h):
// appended in order, each placement recorded.
class AppendingConstants : public ExternalConstants {
 public:
  uint64_t place(const uint8_t* data, size_t size) override {
    const uint64_t at = bytes.size() + 3;  // not at 0, and unaligned: offsets are taken as given
    bytes.resize(at);
    bytes.insert(bytes.end(), data, data + size);
    ++placed;
    return at;
  }
  ExternalLookup lookup() const {
    return [this](uint64_t offset, uint64_t size) -> const uint8_t* {
      return offset <= bytes.size() && size <= bytes.size() - offset ? bytes.data() + offset : nullptr;
    };
  }
  std::vector<uint8_t> bytes;
  int placed = 0;
};

TEST(TextFormatRoundTrip, LargeConstantsKeptBesideTheTextComeBackBitExactly) {
  Graph g;
  std::mt19937 rng(11);
  HostTensor big = test::random_tensor(DType::f32, {5, 20}, rng);
  big.as<float>()[3] = std::numeric_limits<float>::quiet_NaN();
  Value* x = g.add_input("x", f32({5, 20}));
  g.add_output(g.add_op(OpKind::Add, {x, g.add_constant(big, "big")})->result(), "y");
  HostTensor bools = test::random_tensor(DType::boolean, {65}, rng);
  g.add_output(g.add_constant(bools, "flags"));
  HostTensor small = test::random_tensor(DType::i64, {3}, rng);
  g.add_output(g.add_constant(small, "small"));
  AppendingConstants external;
  const std::string text = print_graph(g, external);
  EXPECT_EQ(external.placed, 2);  // the two above 64 elements; the small one stays in the text
  EXPECT_EQ(text.find("dense_hex"), std::string::npos) << text;
  EXPECT_NE(text.find("dense_at<3> : tensor<5x20xf32>"), std::string::npos) << text;
  EXPECT_NE(text.find("dense<["), std::string::npos) << text;
  EXPECT_LT(text.size(), 1000u);
  Graph parsed = parse_graph(text, "at.vkir", external.lookup());
  expect_same_graph(g, parsed);
  EXPECT_EQ(print_graph(parsed), print_graph(g));  // and hex once more without the external bytes
  AppendingConstants again;
  EXPECT_EQ(print_graph(parsed, again), text);
  EXPECT_EQ(again.bytes, external.bytes);
}

TEST(TextFormatErrors, DenseAtNeedsItsBytesAndFindsThemBeforeAllocating) {
  const std::string h = "graph @g() {\n";
  std::vector<uint8_t> bytes(16, 0);
  bytes[9] = 2;
  ExternalLookup lookup = [&](uint64_t offset, uint64_t size) -> const uint8_t* {
    return offset <= bytes.size() && size <= bytes.size() - offset ? bytes.data() + offset : nullptr;
  };
  auto error = [&](const std::string& text, const ExternalLookup& l) {
    try {
      parse_graph(text, "t.vkir", l);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("parsed");
  };
  const std::string c4 = "  %c = constant {value = dense_at<8> : tensor<2xf32>} : tensor<2xf32>\n  return %c as \"c\"\n}\n";
  EXPECT_EQ(error(h + c4, lookup), "parsed");
  EXPECT_EQ(error(h + c4, nullptr),
            "t.vkir:2:26: dense_at refers to constant bytes kept beside the text (a module's constants.bin and "
            "source.bin), and this text was read without them");
  EXPECT_EQ(error(h + "  %c = constant {value = dense_at<12> : tensor<2xf32>} : tensor<2xf32>\n", lookup),
            "t.vkir:2:35: dense_at<12>: the 8 bytes of tensor<2xf32> lie outside the constant bytes kept beside "
            "the text");
  // A type far larger than memory is refused by the lookup, not by an allocation.
  EXPECT_EQ(error(h + "  %c = constant {value = dense_at<0> : tensor<4611686018427387904xf32>} : "
                      "tensor<4611686018427387904xf32>\n", lookup),
            "t.vkir:2:35: constant's byte count overflows 64 bits");
  EXPECT_EQ(error(h + "  %c = constant {value = dense_at<0> : tensor<1000000000000xf32>} : tensor<1000000000000xf32>\n",
                  lookup),
            "t.vkir:2:35: dense_at<0>: the 4000000000000 bytes of tensor<1000000000000xf32> lie outside the "
            "constant bytes kept beside the text");
  EXPECT_EQ(error(h + "  %c = constant {value = dense_at<8> : tensor<2xbool>} : tensor<2xbool>\n", lookup),
            "t.vkir:2:35: dense_at bool element 1 is 2, expected 0 or 1");
  EXPECT_EQ(error(h + "  %c = constant {value = dense_at<-1> : tensor<2xf32>} : tensor<2xf32>\n", lookup),
            "t.vkir:2:35: dense_at offset '-1' is not a byte offset");
}

TEST(TextFormatNames, UnnamedInvalidAndDuplicateNamesGetNumbers) {
  Graph g;
  Value* x = g.add_input("x", f32({2}));
  Value* bad = g.add_input("not valid!", f32({2}));
  Value* a = g.add_op(OpKind::Add, {x, bad})->result();  // unnamed
  Value* dup = g.add_op(OpKind::Neg, {a})->result();
  dup->name = "x";                                       // duplicate of the input's name
  Value* digits = g.add_op(OpKind::Abs, {dup})->result();
  digits->name = "0";                                    // looks like a generated name
  g.add_output(digits, "out");
  std::string text = round_trip(g);
  EXPECT_EQ(text,
            "graph @main(%x: tensor<2xf32>, %0: tensor<2xf32>) {\n"
            "  %1 = add (%x, %0) : tensor<2xf32>\n"
            "  %2 = neg (%1) : tensor<2xf32>\n"
            "  %3 = abs (%2) : tensor<2xf32>\n"
            "  return %3 as \"out\"\n"
            "}\n");
}

TEST(TextFormatNames, EmptyOutputNameRoundTrips) {
  Graph g;
  Value* x = g.add_input("x", f32({2}));
  g.add_output(g.add_op(OpKind::Relu, {x})->result());
  g.outputs()[0].name = "";
  EXPECT_NE(round_trip(g).find("return %0 as \"\"\n"), std::string::npos);
}

TEST(TextFormatNames, ParsedNamesAreKept) {
  Graph g = parse_graph(
      "graph @\"my graph\"(%in.0: tensor<2xf32>) {\n  %7 = relu (%in.0) : tensor<2xf32>\n"
      "  return %7\n}\n");
  EXPECT_EQ(g.name, "my graph");
  EXPECT_EQ(g.inputs()[0]->name, "in.0");
  EXPECT_EQ(g.ops()[0]->result()->name, "7");
  EXPECT_EQ(g.outputs()[0].name, "7");  // no 'as': Graph::add_output names it after the value
  EXPECT_NE(round_trip(g).find("graph @\"my graph\"(%in.0: "), std::string::npos);
}

TEST(TextFormatParse, CommentsWhitespaceAndOptionalParens) {
  Graph g = parse_graph(
      "// leading comment\r\n"
      "graph @g ( %x : tensor<2x2xf32> ) {   // trailing comment\n"
      "\t%c = constant {value = dense<[1, 2.5, -3, 4e0]> : tensor<2x2xf32>} : tensor<2x2xf32>\n"
      "  %y = add(%x,%c) {} : tensor<2x2xf32>\n"
      "  return %y as \"y\"\n"
      "}   // end\n");
  const HostTensor& c = *g.ops()[0]->attr_tensor("value");
  EXPECT_EQ(c.as<float>()[1], 2.5f);
  EXPECT_EQ(c.as<float>()[2], -3.0f);
  EXPECT_EQ(c.as<float>()[3], 4.0f);
  // "relu ()" is accepted syntax for no operands; the verifier then rejects the count.
  std::string msg = parse_error(std::string("graph @g(%x: tensor<2xf32>) {\n  %y = relu () : tensor<2xf32>\n"
                                            "  return %y\n}\n"));
  EXPECT_NE(msg.find("relu (t.vkir:2:8): expected 1 operands, found 0"), std::string::npos) << msg;
}

// ---------------------------------------------------------------------------------------------
// Errors: one line, file:line:col, what was expected and what was found.

const char* kHeader = "graph @g(%x: tensor<2x3xf32>) {\n";

TEST(TextFormatErrors, PositionedMessages) {
  std::string h = kHeader;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {h + "  %y = frobnicate (%x) : tensor<2x3xf32>\n", "t.vkir:2:8: unknown op 'frobnicate'"},
      {h + "  %y = relu (%q) : tensor<2x3xf32>\n", "t.vkir:2:14: use of undefined value %q"},
      {h + "  %x = relu (%x) : tensor<2x3xf32>\n", "t.vkir:2:3: value %x is already defined"},
      {h + "  %v, %i = topk (%x) {k = 1} : tensor<2x1xf32>\n",
       "t.vkir:2:30: topk names 2 result(s) but gives 1 result type(s)"},
      {h + "  %v = topk (%x) {k = 1} : tensor<2x1xf32>\n", "t.vkir:2:3: topk has 2 result(s), found 1"},
      {h + "  %v, %i = topk (%x) {k = 1.5} : tensor<2x1xf32>, tensor<2x1xi64>\n",
       "t.vkir:2:27: expected an integer for attribute 'k' of topk, found '1.5'"},
      {h + "  %y = relu (%x) {alpha = 1.0} : tensor<2x3xf32>\n", "t.vkir:2:19: relu has no attribute 'alpha'"},
      {h + "  %y = relu (%x : tensor<2x3xf32>\n",
       "t.vkir:2:17: expected ')' after operands, found ':'"},
      {h + "  %y = relu (%x) $ : tensor<2x3xf32>\n", "t.vkir:2:18: unexpected character '$'"},
      {h + "  %y = relu (%x) \x01\n", "t.vkir:2:18: unexpected character '\\x01'"},
      {h + "  %y = relu (%x) : tensor<2x3xf32>\n", "t.vkir:3:1: expected an op ('%result = ...') or 'return', found end of input"},
      {h + "  %y = relu (%x) : tensor<2x3xf33>\n", "t.vkir:2:31: unknown element type 'f33', expected f32, f16, i64, i32, i8, u8 or bool"},
      {h + "  %y = relu (%x) : tensor<2 x3xf32>\n", "t.vkir:2:28: expected 'x' after dimension in tensor type, found ' '"},
      {h + "  %y = relu (%x) : tensor<99999999999999999999x3xf32>\n", "t.vkir:2:27: dimension '99999999999999999999' is too large"},
      {h + "  %y = transpose (%x) {perm = [1, 99999999999999999999]} : tensor<3x2xf32>\n",
       "t.vkir:2:35: integer '99999999999999999999' does not fit in 64 bits"},
      {h + "  %y = collapse_shape (%x) {reassociation = [[[0]]]} : tensor<6xf32>\n",
       "t.vkir:2:47: expected an integer for attribute 'reassociation' of collapse_shape, found '['"},
      {h + "  %y = relu \"unterminated (%x) : tensor<2x3xf32>\n", "t.vkir:2:13: unterminated string"},
      {h + "  %y = relu \"a\\qb\" (%x) : tensor<2x3xf32>\n",
       "t.vkir:2:15: unknown escape '\\q' in string, expected \\\", \\\\, \\n, \\t or \\xHH"},
      {h + "  %y = relu (%x) {} : tensor<2x3xf32>\n  return %y as \"y\"\n}\n%z",
       "t.vkir:5:1: expected end of input after the graph, found '%z'"},
      {h + "  %c = constant {value = dense<[1.0, 2.0]> : tensor<3xf32>} : tensor<3xf32>\n",
       "t.vkir:2:46: constant has 2 elements but its type tensor<3xf32> needs 3"},
      {h + "  %c = constant {value = dense<[300]> : tensor<1xi8>} : tensor<1xi8>\n",
       "t.vkir:2:33: integer '300' is out of range for i8"},
      {h + "  %c = constant {value = dense<[1e39]> : tensor<1xf32>} : tensor<1xf32>\n",
       "t.vkir:2:33: number '1e39' is out of range for f32"},
      {h + "  %c = constant {value = dense_hex<\"0000\"> : tensor<1xf32>} : tensor<1xf32>\n",
       "t.vkir:2:36: dense_hex has 4 hex digits, type tensor<1xf32> needs 1 elements of 4 bytes (2 digits per byte)"},
      {h + "  %y = leaky_relu (%x) {alpha = 0.1, alpha = 0.2} : tensor<2x3xf32>\n",
       "t.vkir:2:38: attribute 'alpha' is given twice"},
      {"graph @g(%x: tensor<2x3xf32>", "t.vkir:1:29: expected ')' after graph inputs, found end of input"},
      {"", "t.vkir:1:1: expected 'graph' at the start of the file, found end of input"},
      {h + "  %y = transpose (%x) {perm = [1, -x]} : tensor<3x2xf32>\n",
       "t.vkir:2:35: expected a number after '-', found 'x'"},
      {h + "  %y = relu (%x) : tensor<2x3xf32>\n  return %y as y\n}\n",
       "t.vkir:3:16: expected a string for the output name after 'as', found 'y'"},
  };
  for (const auto& [text, message] : cases) EXPECT_EQ(parse_error(text), message) << text;
}

TEST(TextFormatErrors, VerifierMessagesCarryTheOpLocation) {
  std::string msg = parse_error(std::string(kHeader) + "\n  %y = relu \"r\" (%x) : tensor<3x3xf32>\n  return %y\n}\n");
  EXPECT_NE(msg.find("relu 'r' (t.vkir:3:8)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tensor<3x3xf32>"), std::string::npos) << msg;
}

TEST(TextFormatErrors, HostileInputGivesOneLineErrors) {
  std::mt19937 rng(1);
  std::string base = print_graph([] {
    Graph g;
    op_builders().at(OpKind::Conv)(g);
    return g;
  }());
  // Every truncation and many random byte flips must give a vkc::Error (or parse), never crash.
  for (size_t n = 0; n + 1 < base.size(); ++n) {  // all but the final newline matter
    std::string msg = parse_error(base.substr(0, n));
    EXPECT_FALSE(msg.empty()) << n;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
  for (int i = 0; i < 2000; ++i) {
    std::string t = base;
    t[rng() % t.size()] = char(rng() % 256);
    std::string msg = parse_error(t);
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
  EXPECT_FALSE(parse_error(std::string(kHeader) + "  %y = relu (" + std::string(100000, '(')).empty());
  EXPECT_FALSE(parse_error(std::string(kHeader) + "  %y = reshape (%x) {shape = " +
                           std::string(100000, '[')).empty());
}

TEST(TextFormatLexer, QuoteStringReadsBack) {
  std::string s = "q\"b\\n\n\t\x02";
  std::string quoted = text::quote_string(s);  // the lexer keeps a view of its text
  text::Lexer lex(quoted, "x");
  text::Token t = lex.next();
  EXPECT_EQ(t.kind, text::Tok::String);
  EXPECT_EQ(t.value, s);
  EXPECT_EQ(lex.next().kind, text::Tok::End);
}

TEST(TextFormatLocation, OpsCarryFileLineAndColumnOfTheOpName) {
  Graph g = parse_graph(
      "graph @g(%x: tensor<2xf32>) {\n"
      "  %a = relu (%x) : tensor<2xf32>\n"
      "\n"
      "  %b, %c = topk (%a) {k = 1} : tensor<1xf32>, tensor<1xi64>\n"
      "  return %b as \"b\"\n"
      "}\n",
      "model.vkir");
  ASSERT_EQ(g.num_ops(), 2);
  EXPECT_EQ(g.ops()[0]->loc.str(), "model.vkir:2:8");
  EXPECT_EQ(g.ops()[1]->loc.file, "model.vkir");
  EXPECT_EQ(g.ops()[1]->loc.line, 4);
  EXPECT_EQ(g.ops()[1]->loc.col, 12);
  EXPECT_EQ(g.source, "model.vkir");
}

// ---------------------------------------------------------------------------------------------
// examples/*.vkir: parse, verify, round trip, and are written in the printer's canonical form
// (apart from their comment lines), so the examples show exactly what the tools print.

TEST(TextFormatExamples, ParseVerifyAndRoundTrip) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(test::source_path("examples")))
    if (entry.path().extension() == ".vkir") files.push_back(entry.path());
  ASSERT_GE(files.size(), 4u);
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.string());
    Graph g = parse_graph_file(path.string());
    verify_graph(g);
    EXPECT_EQ(g.ops().front()->loc.file, path.string());
    std::string printed = round_trip(g);
    std::string without_comments;
    std::istringstream in(read_text_file(path.string()));
    for (std::string line; std::getline(in, line);)
      if (line.rfind("//", 0) != 0) without_comments += line + "\n";
    EXPECT_EQ(without_comments, printed);
  }
}

TEST(TextFormatExamples, MissingFileIsAnError) {
  EXPECT_THROW(parse_graph_file(test::source_path("examples/does_not_exist.vkir")), Error);
}

}  // namespace
}  // namespace vkc::ir
