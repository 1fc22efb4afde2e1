// The pass manager verifies after every pass and names the pass that broke the IR.
#include <gtest/gtest.h>

#include <sstream>

#include "ir/pass_manager.h"
#include "ir/passes.h"
#include "ir/text_format.h"
#include "support/error.h"

namespace vkc::ir {
namespace {

Graph small_graph() {
  Graph g;
  Value* x = g.add_input("x", {DType::f32, {2, 3}});
  Value* dead = g.add_op(OpKind::Exp, {x}, {}, "unused")->result();
  (void)dead;
  g.add_output(g.add_op(OpKind::Relu, {x}, {}, "r")->result(), "y");
  return g;
}

TEST(PassManager, NamesThePassThatBrokeTheIR) {
  Graph g = small_graph();
  PassManager pm;
  pm.add(dead_code_elimination_pass());
  // A buggy pass: changes a result's type without changing the op.
  pm.add({"break-types", "test pass", [](Graph& graph) {
            graph.ops().back()->result()->type.shape = {3, 2};
            return true;
          }});
  try {
    pm.run(g);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "pass 'break-types' produced invalid IR: relu 'r': result 0 type is "
              "tensor<3x2xf32>, inferred tensor<2x3xf32>");
  }
}

TEST(PassManager, VerificationCanBeTurnedOff) {
  Graph g = small_graph();
  PassManagerOptions o;
  o.verify_each = false;
  PassManager pm(o);
  pm.add({"break-types", "test pass", [](Graph& graph) {
            graph.ops().back()->result()->type.shape = {3, 2};
            return true;
          }});
  EXPECT_NO_THROW(pm.run(g));
}

TEST(PassManager, PrintsAfterTheNamedPassOnly) {
  Graph g = small_graph();
  std::ostringstream out;
  PassManagerOptions o;
  o.print_after = {"dce"};
  o.print_stream = &out;
  PassManager pm(o);
  pm.add({"noop", "does nothing", [](Graph&) { return false; }});
  pm.add(dead_code_elimination_pass());
  pm.run(g);
  std::string text = out.str();
  EXPECT_NE(text.find("IR after dce"), std::string::npos);
  EXPECT_EQ(text.find("IR after noop"), std::string::npos);
  EXPECT_EQ(text.find("exp"), std::string::npos);  // the dead exp is gone
  EXPECT_NE(text.find("relu"), std::string::npos);
}

TEST(PassManager, DeadCodeEliminationRemovesChainsAndKeepsMultiResultOpsWithAUse) {
  Graph g;
  Value* x = g.add_input("x", {DType::f32, {8}});
  Op* topk = g.add_op(OpKind::TopK, {x}, {{"k", int64_t(3)}});
  Value* a = g.add_op(OpKind::Exp, {x})->result();
  g.add_op(OpKind::Neg, {a});  // exp -> neg, both unused
  g.add_output(topk->result(1), "indices");  // values unused, indices used
  EXPECT_TRUE(dead_code_elimination_pass().run(g));
  ASSERT_EQ(g.num_ops(), 1);
  EXPECT_EQ(g.ops()[0]->kind, OpKind::TopK);
}

}  // namespace
}  // namespace vkc::ir
