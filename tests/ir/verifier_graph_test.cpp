// Generic schema checks (operand count, attributes, rank limit), constants, verify_op and
// verify_graph's SSA checks.
#include <gtest/gtest.h>

#include "tests/ir/verifier_test_helpers.h"

namespace vkc::ir::test {
namespace {

TEST(VerifierSchema, OperandCount) {
  EXPECT_EQ(error_of(OpKind::Add, {f32({2})}), "add 'n': expected 2 operands, found 1");
  EXPECT_EQ(error_of(OpKind::Conv, {f32({1, 1, 4})}), "conv 'n': expected 2 to 3 operands, found 1");
  EXPECT_EQ(error_of(OpKind::Concat, {}, {{"axis", int64_t(0)}}),
            "concat 'n': expected at least 1 operands, found 0");
}

TEST(VerifierSchema, Attributes) {
  EXPECT_EQ(error_of(OpKind::Relu, {f32({2})}, {{"alpha", 1.0}}), "relu 'n': unknown attribute 'alpha'");
  EXPECT_EQ(error_of(OpKind::Transpose, {f32({2})}), "transpose 'n': missing required attribute 'perm'");
  EXPECT_EQ(error_of(OpKind::Transpose, {f32({2})}, {{"perm", std::string("x")}}),
            "transpose 'n': attribute 'perm' must be a int list, found a string");
  EXPECT_EQ(error_of(OpKind::LeakyRelu, {f32({2})}, {{"alpha", true}}),
            "leaky_relu 'n': attribute 'alpha' must be a float, found a bool");
  // An int where a float is expected is accepted.
  EXPECT_EQ(infer(OpKind::LeakyRelu, {f32({2})}, {{"alpha", int64_t(1)}}), f32({2}));
  EXPECT_EQ(error_of(OpKind::Constant, {}, {{"value", TensorPtr()}}),
            "constant 'n': attribute 'value' holds no tensor");
}

TEST(VerifierSchema, RankLimit) {
  EXPECT_EQ(infer(OpKind::Relu, {f32({1, 1, 1, 1, 1, 2})}), f32({1, 1, 1, 1, 1, 2}));
  EXPECT_EQ(error_of(OpKind::Relu, {f32({1, 1, 1, 1, 1, 1, 2})}),
            "relu 'n': operand 0 has rank 7, at most 6 is supported");
  EXPECT_EQ(error_of(OpKind::Broadcast, {f32({2})}, {{"shape", Ints{1, 1, 1, 1, 1, 1, 2}}}),
            "broadcast 'n': result 0 has rank 7, at most 6 is supported");
}

TEST(VerifierConstant, TypeFromTensor) {
  auto data = std::make_shared<const HostTensor>(DType::i32, Shape{2, 3});
  EXPECT_EQ(infer(OpKind::Constant, {}, {{"value", TensorPtr(data)}}), typed(DType::i32, {2, 3}));
  EXPECT_EQ(error_of(OpKind::Constant, {}), "constant 'n': missing required attribute 'value'");
}

TEST(VerifierOp, ResultTypeMismatchMessage) {
  Graph g;
  Value* a = g.add_input("a", f32({1, 3}));
  Op* op = g.add_op_typed(OpKind::Relu, {a}, {}, {f32({1, 2})}, "c1", Location{"f.vkir", 3, 5});
  try {
    verify_op(*op);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "relu 'c1' (f.vkir:3:5): result 0 type is tensor<1x2xf32>, inferred tensor<1x3xf32>");
  }
  Op* good = g.add_op_typed(OpKind::Relu, {a}, {}, {f32({1, 3})}, "c2");
  EXPECT_NO_THROW(verify_op(*good));
  Op* two = g.add_op_typed(OpKind::Relu, {a}, {}, {f32({1, 3}), f32({1, 3})}, "c3");
  EXPECT_THROW(verify_op(*two), Error);
}

TEST(VerifierGraph, AcceptsValidGraph) {
  Graph g;
  Value* a = g.add_input("a", f32({2, 3}));
  Value* b = g.add_input("b", f32({3}));
  Value* s = g.add_op(OpKind::Add, {a, b})->result();
  Value* r = g.add_op(OpKind::Relu, {s})->result();
  g.add_output(r, "out");
  EXPECT_NO_THROW(verify_graph(g));
}

TEST(VerifierGraph, CatchesUseBeforeDef) {
  Graph g;
  Value* a = g.add_input("a", f32({2}));
  Op* first = g.add_op(OpKind::Relu, {a}, {}, "first");
  Op* second = g.add_op(OpKind::Neg, {first->result()}, {}, "second");
  second->result()->name = "t";
  // Make `first` consume `second`'s result, which is defined later.
  first->operands[0] = second->result();
  g.add_output(second->result());
  try {
    verify_graph(g);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "relu 'first': operand 0 %t is used before it is defined (or is not a value of this graph)");
  }
}

TEST(VerifierGraph, CatchesForeignValueAndDeadOutput) {
  Graph other;
  Value* foreign = other.add_input("f", f32({2}));
  Graph g;
  g.source = "m.vkir";
  Value* a = g.add_input("a", f32({2}));
  Op* op = g.add_op(OpKind::Relu, {a}, {}, "r");
  g.add_output(op->result(), "y");
  EXPECT_NO_THROW(verify_graph(g));
  g.add_output(foreign, "z");
  EXPECT_EQ([&] {
    try { verify_graph(g); } catch (const Error& e) { return std::string(e.what()); }
    return std::string("<no error>");
  }(), "m.vkir: output 'z' refers to %f, which is not defined in this graph");
}

TEST(VerifierGraph, CatchesDuplicateIds) {
  Graph g;
  Value* a = g.add_input("a", f32({2}));
  Value* b = g.add_input("b", f32({2}));
  b->id = a->id;
  EXPECT_EQ([&] {
    try { verify_graph(g); } catch (const Error& e) { return std::string(e.what()); }
    return std::string("<no error>");
  }(), "graph 'main': value id 0 of input %b is already used by %a");
}

TEST(VerifierGraph, ChecksResultTypesOfTypedOps) {
  Graph g;
  Value* a = g.add_input("a", f32({2, 2}));
  g.add_op_typed(OpKind::Transpose, {a}, {{"perm", Ints{1, 0}}}, {f32({2, 3})}, "t");
  EXPECT_THROW(verify_graph(g), Error);
}

}  // namespace
}  // namespace vkc::ir::test

namespace vkc::ir::test {
namespace {

// Malformed ops must be reported as vkc::Error (one line), never as a crash or another exception.
TEST(VerifierHostile, MalformedOpsGiveOneLineErrors) {
  struct Case {
    OpKind kind;
    std::vector<TensorType> operands;
    AttrMap attrs;
  };
  const int64_t big = INT64_MAX / 2;
  std::vector<Case> cases = {
      {OpKind::Softmax, {f32({})}, {}},
      {OpKind::TopK, {f32({})}, {{"k", int64_t(1)}}},
      {OpKind::Concat, {f32({}), f32({})}, {{"axis", int64_t(0)}}},
      {OpKind::Reshape, {f32({2})}, {{"shape", Ints{big, big, -1}}}},
      {OpKind::ExpandShape, {f32({4})}, {{"reassociation", IntsList{{0, 1}}}, {"shape", Ints{big, 4}}}},
      {OpKind::ExpandShape, {f32({4})}, {{"reassociation", IntsList{{5}}}, {"shape", Ints{4}}}},
      {OpKind::CollapseShape, {f32({4})}, {{"reassociation", IntsList{{-1}}}}},
      {OpKind::Broadcast, {f32({1})}, {{"shape", Ints{big, big}}}},
      {OpKind::Conv, {f32({1, 1, 4}), f32({1, 1, 3, 3})}, {}},
      {OpKind::Conv, {f32({1, 1, 4}), f32({1, 1, 3})}, {{"filter_layout", std::string("")}}},
      {OpKind::MaxPool, {f32({1, 1})}, {{"global", true}}},
      {OpKind::Transpose, {f32({2, 3})}, {{"perm", Ints{-1, 0}}}},
      {OpKind::Quantize, {f32({}), f32({3})}, {}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string msg = error_of(cases[i].kind, cases[i].operands, cases[i].attrs);
    EXPECT_NE(msg, "<no error>") << "case " << i;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "case " << i;
    EXPECT_EQ(msg.rfind(cat(op_name(cases[i].kind), " 'n'"), 0), 0u) << "case " << i << ": " << msg;
  }
  // The slice of an empty dim is valid (and empty).
  EXPECT_EQ(infer(OpKind::Slice, {f32({0})}, {{"starts", Ints{0}}, {"ends", Ints{-1}}, {"steps", Ints{-1}}}),
            f32({0}));
}

}  // namespace
}  // namespace vkc::ir::test
