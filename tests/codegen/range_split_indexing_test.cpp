// Tensors above 2^31 elements (issue 25 item 3): no kernel indexes one whole. The range split cuts
// every op that binds such a tensor into pieces below 2^31 elements (codegen/range_split.h), and
// each kernel checks the 32-bit range of what it indexes, which is then one piece. Planned only
// (no GPU, nothing allocated): the nvidia profile, whose bindings hold 4 GiB, so that elements,
// not bytes, are the limit for an i8 tensor of 3e9 elements.
#include <gtest/gtest.h>

#include "codegen/compiler.h"
#include "codegen/range_split.h"
#include "module/target_profiles.h"
#include "module/tensor_lookup.h"

namespace vkc::codegen {
namespace {

using K = ir::OpKind;
using Ints = std::vector<int64_t>;

constexpr int64_t kHuge = 3'000'000'000;  // elements: above 2^31 and 2^32 - 1 alike

// Every dispatch indexes fewer than 2^31 elements of each tensor it binds, within the range; the
// report's notes of the pieces say the cut was for 32-bit indexing. Returns the number of pieces.
int check_pieces(const ir::Graph& g, const std::string& op_name) {
  CompileOptions o;
  o.target = find_target("nvidia").limits;
  ModuleImage image = compile_graph(g, o);
  const TensorLookup tensors(image.manifest);
  int pieces = 0;
  for (const DispatchDesc& d : image.manifest.dispatches) {
    for (const BindingDesc& b : d.bindings) {
      const TensorDesc& t = tensors.tensor(b.tensor);
      EXPECT_LE(shape_numel(t.shape), kMaxPieceElements) << d.name << " binds " << t.name;
      EXPECT_LE(t.size_bytes(), o.target.max_storage_buffer_range) << d.name << " binds " << t.name;
    }
    if (d.ops.empty() || d.ops.front().find(op_name) == std::string::npos) continue;
    if (d.notes.find("above 32-bit indexing (2147483647)") != std::string::npos) ++pieces;
  }
  return pieces;
}

TEST(RangeSplitIndexing, ElementwiseAbove2To31ElementsIsCutBelowIt) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::i8, {kHuge}});
  g.add_output(g.add_op(K::Relu, {x}, {}, "big_relu")->result(), "y");
  EXPECT_GE(check_pieces(g, "big_relu"), 2);
}

TEST(RangeSplitIndexing, BroadcastAddOfRowsAbove2To31ElementsIsCutBelowIt) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::i8, {3, kHuge / 3}});
  ir::Value* b = g.add_input("b", {DType::i8, {kHuge / 3}});
  g.add_output(g.add_op(K::Add, {x, b}, {}, "big_add")->result(), "y");
  EXPECT_GE(check_pieces(g, "big_add"), 2);
}

TEST(RangeSplitIndexing, ReductionToScalarAbove2To31ElementsIsCutBelowIt) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::i8, {kHuge}});
  g.add_output(g.add_op(K::ReduceMax, {x}, {{"keepdims", false}}, "big_max")->result(), "y");
  EXPECT_GE(check_pieces(g, "big_max"), 2);
}

}  // namespace
}  // namespace vkc::codegen
