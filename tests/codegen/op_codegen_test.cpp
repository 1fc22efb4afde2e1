// Walks every op kind of ir/ops.def and checks the codegen layer's facts for it: a kernel emitter
// or a place on the short list of host-only ops, a GLSL expression for every elementwise op, and
// fusion facts only where the op can take part. The table is complete by static_assert; this
// catches null entries and contradictory rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "codegen/fusion_expr.h"
#include "codegen/op_codegen.h"
#include "ir/graph.h"

namespace vkc::codegen {
namespace {

using K = ir::OpKind;

// No kernel of their own: constants are uploaded, reshape views alias their operand's storage.
const std::set<K> kHostOnly = {K::Constant, K::ExpandShape, K::CollapseShape, K::Reshape};

bool elementwise_category(K k) {
  ir::OpCategory c = ir::op_schema(k).category;
  return c == ir::OpCategory::Unary || c == ir::OpCategory::Binary || c == ir::OpCategory::Ternary;
}

TEST(OpCodegen, EveryOpHasAnEmitterOrIsHostOnly) {
  for (K k : ir::all_op_kinds()) {
    SCOPED_TRACE(ir::op_name(k));
    EXPECT_EQ(op_codegen(k).emitter == nullptr, kHostOnly.count(k) == 1);
  }
}

TEST(OpCodegen, FusionFactsAreConsistent) {
  for (K k : ir::all_op_kinds()) {
    SCOPED_TRACE(ir::op_name(k));
    const OpCodegen& c = op_codegen(k);
    EXPECT_EQ(c.glsl != nullptr, elementwise_category(k));
    const bool anchor = c.anchor != FusionAnchor::None;
    EXPECT_TRUE(!c.prologue_math || c.glsl != nullptr);
    // An anchor has a kernel that can take prologues and epilogues.
    EXPECT_TRUE(!anchor || c.emitter != nullptr);
    EXPECT_TRUE(c.reads == OperandReads::Once || anchor);
    // A fused op is not itself an anchor.
    EXPECT_TRUE((c.prologue == Prologue::None && c.epilogue == Epilogue::None) || !anchor);
  }
}

// Each unary and binary math op's expression, on f32 operands named a and b, uses its operands.
TEST(OpCodegen, ElementwiseMathHasAnExpression) {
  for (K k : ir::all_op_kinds()) {
    if (!op_codegen(k).prologue_math) continue;
    SCOPED_TRACE(ir::op_name(k));
    bool binary = ir::op_schema(k).category == ir::OpCategory::Binary;
    ir::Graph g;
    std::vector<ir::Value*> operands = {g.add_input("a", {DType::f32, {4}})};
    if (binary) operands.push_back(g.add_input("b", {DType::f32, {4}}));
    ir::Op* op = g.add_op(k, operands, {}, "n");
    std::vector<std::string> args = {"va"};
    if (binary) args.push_back("vb");
    std::string e = elementwise_expr(*op, args);
    for (const std::string& a : args) EXPECT_NE(e.find(a), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace vkc::codegen
