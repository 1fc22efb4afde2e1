// interpret() itself: input checking, the graph walk, constants, evaluate_op.
#include "ir/interpreter.h"

#include <gtest/gtest.h>

#include "ir/interpreter_test_helpers.h"
#include "support/error.h"

namespace vkc::test {
namespace {

using ir::OpKind;

// y = relu(x + c), c a constant [1, -5]; also outputs x + c as "sum".
struct SmallGraph {
  ir::Graph g;
  SmallGraph() {
    ir::Value* x = g.add_input("x", ir::TensorType{DType::f32, {2}});
    ir::Value* c = g.add_constant(make_f32({2}, {1, -5}), "c");
    ir::Value* sum = g.add_op(OpKind::Add, {x, c})->result();
    ir::Value* y = g.add_op(OpKind::Relu, {sum})->result();
    g.add_output(y, "y");
    g.add_output(sum, "sum");
  }
};

std::string error_of(const ir::Graph& g, const std::map<std::string, HostTensor>& inputs) {
  try {
    ir::interpret(g, inputs);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Interpreter, WalksGraphWithConstant) {
  SmallGraph s;
  std::map<std::string, HostTensor> out = ir::interpret(s.g, {{"x", make_f32({2}, {2, 3})}});
  ASSERT_EQ(out.size(), 2u);
  expect_values(out.at("y"), {3, 0});
  expect_values(out.at("sum"), {3, -2});
}

TEST(Interpreter, MissingInputNamesIt) {
  SmallGraph s;
  std::string msg = error_of(s.g, {});
  EXPECT_NE(msg.find("missing input 'x'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tensor<2xf32>"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos);
}

TEST(Interpreter, ExtraInputNamesIt) {
  SmallGraph s;
  std::string msg = error_of(s.g, {{"x", make_f32({2}, {0, 0})}, {"bogus", make_f32({1}, {0})}});
  EXPECT_NE(msg.find("'bogus'"), std::string::npos) << msg;
}

TEST(Interpreter, WrongDtypeOrShapeNamesExpectedAndFound) {
  SmallGraph s;
  std::string dtype = error_of(s.g, {{"x", make_i64({2}, {0, 0})}});
  EXPECT_NE(dtype.find("input 'x' is tensor<2xi64>, expected tensor<2xf32>"), std::string::npos) << dtype;
  std::string shape = error_of(s.g, {{"x", make_f32({3}, {0, 0, 0})}});
  EXPECT_NE(shape.find("input 'x' is tensor<3xf32>, expected tensor<2xf32>"), std::string::npos) << shape;
}

TEST(Interpreter, EvaluateOpChecksOperandValues) {
  SmallGraph s;
  const ir::Op* add = s.g.ops().at(1);
  ASSERT_EQ(add->kind, OpKind::Add);
  HostTensor a = make_f32({2}, {1, 2}), b = make_f32({2}, {10, 20});
  std::vector<HostTensor> r = ir::evaluate_op(*add, {&a, &b});
  expect_values(r.at(0), {11, 22});
  HostTensor wrong = make_f32({3}, {1, 2, 3});
  try {
    ir::evaluate_op(*add, {&wrong, &b});
    FAIL() << "expected vkc::Error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("add"), std::string::npos) << msg;
    EXPECT_NE(msg.find("tensor<3xf32>"), std::string::npos) << msg;
  }
  EXPECT_THROW(ir::evaluate_op(*add, {&a}), Error);
}

TEST(Interpreter, WrongStoredResultTypeIsAnErrorNotACrash) {
  // The parser builds ops with given result types; a wrong one must not drive the indexing.
  ir::Graph g;
  ir::Value* x = g.add_input("x", ir::TensorType{DType::f32, {2}});
  ir::Op* op = g.add_op_typed(OpKind::Add, {x, x}, {}, {ir::TensorType{DType::f32, {5}}}, "bad");
  g.add_output(op->result(), "y");
  std::string msg = error_of(g, {{"x", make_f32({2}, {1, 2})}});
  EXPECT_NE(msg.find("add 'bad'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tensor<5xf32>"), std::string::npos) << msg;
  // Invalid attributes are reported too (slice with a zero step).
  ir::Graph g2;
  ir::Value* x2 = g2.add_input("x", ir::TensorType{DType::f32, {4}});
  ir::AttrMap attrs{{"starts", std::vector<int64_t>{0}}, {"ends", std::vector<int64_t>{4}},
                    {"steps", std::vector<int64_t>{0}}};
  ir::Op* s = g2.add_op_typed(OpKind::Slice, {x2}, attrs, {ir::TensorType{DType::f32, {4}}}, "s0");
  g2.add_output(s->result(), "y");
  EXPECT_NE(error_of(g2, {{"x", make_f32({4}, {1, 2, 3, 4})}}).find("slice 's0'"), std::string::npos);
}

TEST(Interpreter, ResultsAreRoundedToF16) {
  // 1 + 2^-12 is exact in double but not in f16 (11-bit significand): the stored sum is 1.
  HostTensor one = typed(DType::f16, {1}, {1.0}), tiny = typed(DType::f16, {1}, {1.0 / 4096});
  ASSERT_EQ(tiny.get_f64(0), 1.0 / 4096);
  HostTensor out = run_op(OpKind::Add, {one, tiny});
  EXPECT_EQ(out.dtype(), DType::f16);
  EXPECT_EQ(out.get_f64(0), 1.0);
}

}  // namespace
}  // namespace vkc::test
