// Chains of index maps (transpose, slice, reverse, broadcast, with reshape views between) whose
// intermediates have one reader run as one gather through the composed strided view
// (codegen/dispatch_formation.cpp, codegen/kernels/data_movement.cpp index_map_chain): bit-exact
// against the reference for several element types, in 32-bit words on a target without 8- and
// 16-bit storage, and one dispatch where each op was one before. A chain that does not compose
// into one view (a transpose of a merged dim sliced) stays several gathers and still matches.
#include <gtest/gtest.h>

#include "fusion/fusion_test_support.h"
#include "kernels/op_test_helpers.h"

namespace vkc::test {
namespace {

struct Chain {
  std::string name;
  std::string body;  // IR between the input %x and the result %y, with TYPE for the element type
  Shape in;
  size_t dispatches;  // what the chain compiles to (1: one gather)
};

std::string with_type(std::string text, const std::string& type) {
  for (size_t at; (at = text.find("TYPE")) != std::string::npos;) text.replace(at, 4, type);
  return text;
}

ir::Graph chain_graph(const Chain& c, DType t) {
  std::string in = "tensor<";
  for (int64_t d : c.in) in += cat(d, "x");
  const std::string type(dtype_name(t));
  const std::string text = cat("graph @main(%x: ", in, "TYPE>) {\n", c.body, "  return %y as \"y\"\n}\n");
  return ir::parse_graph(with_type(text, type));
}

const Chain kChains[] = {
    // ShuffleNet's half after slice-before-transpose: a slice of the groups, moved inside, merged.
    {"shuffle_half",
     "  %r = reshape (%x) {shape = [3, 2, 6, 5, 7]} : tensor<3x2x6x5x7xTYPE>\n"
     "  %s = slice (%r) {starts = [3], ends = [6], axes = [2]} : tensor<3x2x3x5x7xTYPE>\n"
     "  %t = transpose (%s) {perm = [0, 2, 1, 3, 4]} : tensor<3x3x2x5x7xTYPE>\n"
     "  %y = reshape (%t) {shape = [3, 6, 5, 7]} : tensor<3x6x5x7xTYPE>\n",
     {3, 12, 5, 7}, 1},
    {"transpose_then_strided_slice",
     "  %t = transpose (%x) {perm = [2, 0, 1]} : tensor<9x4x6xTYPE>\n"
     "  %y = slice (%t) {starts = [7, 1], ends = [0, 6], axes = [0, 2], steps = [-2, 2]} : tensor<4x4x3xTYPE>\n",
     {4, 6, 9}, 1},
    {"reverse_transpose_broadcast",
     "  %v = reverse (%x) {axes = [1]} : tensor<5x1x3xTYPE>\n"
     "  %t = transpose (%v) {perm = [1, 2, 0]} : tensor<1x3x5xTYPE>\n"
     "  %y = broadcast (%t) {shape = [2, 4, 3, 5]} : tensor<2x4x3x5xTYPE>\n",
     {5, 1, 3}, 1},
    {"slice_reshape_transpose",
     "  %s = slice (%x) {starts = [1], ends = [7], axes = [0]} : tensor<6x10xTYPE>\n"
     "  %r = reshape (%s) {shape = [3, 2, 5, 2]} : tensor<3x2x5x2xTYPE>\n"
     "  %y = transpose (%r) {perm = [3, 1, 2, 0]} : tensor<2x2x5x3xTYPE>\n",
     {8, 10}, 1},
    // The transpose's two moved dims merged and then sliced: no single strided view, so the
    // slice reads a stored transpose.
    {"merged_then_sliced",
     "  %t = transpose (%x) {perm = [1, 0]} : tensor<5x6xTYPE>\n"
     "  %r = reshape (%t) {shape = [30]} : tensor<30xTYPE>\n"
     "  %y = slice (%r) {starts = [3], ends = [29], steps = [2]} : tensor<13xTYPE>\n",
     {6, 5}, 2},
};

TEST(IndexMapChain, OneGatherMatchesTheReferenceBitForBit) {
  for (const Chain& c : kChains) {
    SCOPED_TRACE(c.name);
    for (DType t : {DType::f32, DType::i64, DType::f16, DType::i8}) {
      SCOPED_TRACE(dtype_name(t));
      ir::Graph g = chain_graph(c, t);
      GpuRun run = run_on_gpu(g, random_inputs(g, 7));
      EXPECT_TRUE(same_bytes(run.outputs.at("y"), run.reference.at("y")));
      if (!split_testing()) {
        EXPECT_EQ(run.module.manifest.dispatches.size(), c.dispatches) << all_notes(run.module);
      }
    }
    // 8-bit elements moved inside 32-bit words (no 8-bit storage on vulkan-min).
    ir::Graph p = chain_graph(c, DType::u8);
    GpuRunOptions o;
    o.target = "vulkan-min";
    GpuRun run = run_on_gpu(p, random_inputs(p, 8), o);
    EXPECT_TRUE(same_bytes(run.outputs.at("y"), run.reference.at("y")));
    EXPECT_TRUE(within_limits(run.module));
  }
}

// A chain whose intermediate has a second reader is not one gather: the intermediate is stored
// for that reader, and the chain's rest reads it.
TEST(IndexMapChain, AnIntermediateWithAnotherReaderIsStored) {
  const std::string text = R"(graph @main(%x: tensor<4x6xf32>) {
  %t = transpose "t" (%x) {perm = [1, 0]} : tensor<6x4xf32>
  %s = slice "s" (%t) {starts = [1], ends = [5], axes = [0]} : tensor<4x4xf32>
  %n = neg "n" (%t) : tensor<6x4xf32>
  return %s as "s", %n as "n"
}
)";
  EXPECT_EQ(groups_of(text), "[t] [s] [n]");
  ir::Graph g = ir::parse_graph(text);
  EXPECT_TRUE(outputs_match(run_on_gpu(g, random_inputs(g, 9))));
}

}  // namespace
}  // namespace vkc::test
