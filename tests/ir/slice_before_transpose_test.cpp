// ir::slice_before_transpose_pass: slices of a transpose that only slices read (through a squeeze,
// a merge of neighbouring dims or neither), each reaching a product or attention through index
// maps, or none of them a contiguous run of the transposed tensor, become slices of the
// transpose's operand, each transposed on its own; the rewritten graph computes the same values
// (reference interpreter, both graphs), and other transposes stay.
#include "ir/pass_test_support.h"
#include "support/error.h"

namespace vkc::ir {
namespace {

Graph rewritten_and_checked(const std::string& text) {
  return pass_keeping_values(text, slice_before_transpose_pass(), 0.0);
}

// torchvision's ViT self-attention split as exported (2 tokens x batch 3, 2 heads of 4): the
// joined projection [S, B, 3E] reshaped, the 3 moved to the front, squeezed and sliced into q, k
// and v, each reshaped into heads and transposed for attention.
const char* kVitSplit = R"(graph @main(%p: tensor<2x3x24xf32>) {
  %r = reshape (%p) {shape = [1, 2, 3, 3, 8]} : tensor<1x2x3x3x8xf32>
  %t = transpose (%r) {perm = [3, 1, 2, 0, 4]} : tensor<3x2x3x1x8xf32>
  %s = reshape (%t) {shape = [3, 2, 3, 8]} : tensor<3x2x3x8xf32>
  %q0 = slice (%s) {starts = [0], ends = [1], axes = [0]} : tensor<1x2x3x8xf32>
  %k0 = slice (%s) {starts = [1], ends = [2], axes = [0]} : tensor<1x2x3x8xf32>
  %v0 = slice (%s) {starts = [-1], ends = [3], axes = [-4]} : tensor<1x2x3x8xf32>
  %q1 = reshape (%q0) {shape = [2, 6, 4]} : tensor<2x6x4xf32>
  %k1 = reshape (%k0) {shape = [2, 6, 4]} : tensor<2x6x4xf32>
  %v1 = reshape (%v0) {shape = [2, 6, 4]} : tensor<2x6x4xf32>
  %q2 = transpose (%q1) {perm = [1, 0, 2]} : tensor<6x2x4xf32>
  %k2 = transpose (%k1) {perm = [1, 0, 2]} : tensor<6x2x4xf32>
  %v2 = transpose (%v1) {perm = [1, 0, 2]} : tensor<6x2x4xf32>
  %q = reshape (%q2) {shape = [3, 2, 2, 4]} : tensor<3x2x2x4xf32>
  %k = reshape (%k2) {shape = [3, 2, 2, 4]} : tensor<3x2x2x4xf32>
  %v = reshape (%v2) {shape = [3, 2, 2, 4]} : tensor<3x2x2x4xf32>
  %a = attention (%q, %k, %v) {scale = 0.5} : tensor<3x2x2x4xf32>
  return %a as "a"
}
)";

// The slices of x the rewritten graph reads, as "axes starts" text.
std::vector<std::string> slices_of(const Graph& g, const std::string& x) {
  std::vector<std::string> s;
  for (const Op* op : g.ops())
    if (op->kind == OpKind::Slice && op->operand(0)->name == x)
      s.push_back(cat(op->attr_ints("axes")[0], " ", op->attr_ints("starts")[0]));
  return s;
}

TEST(SliceBeforeTranspose, ViTsQkvSplitBecomesThreeTransposedSlices) {
  Graph g = rewritten_and_checked(kVitSplit);
  // One transpose of each part (perm as before) plus the three head transposes; the slices now
  // cut axis 3 of the reshaped projection (the 3), so no transpose of the whole remains.
  EXPECT_EQ(count_ops(g, OpKind::Transpose), 6);
  EXPECT_EQ(count_ops(g, OpKind::Slice), 3);
  EXPECT_EQ(slices_of(g, "r"), (std::vector<std::string>{"3 0", "3 1", "3 2"}));  // starts normalized
  for (const Op* op : g.ops())
    if (op->kind == OpKind::Transpose) {
      EXPECT_LT(op->result()->type.numel(), 3 * 2 * 3 * 8) << op->describe();
    }
}

TEST(SliceBeforeTranspose, NoSqueezeInBetween) {
  const char* text = R"(graph @main(%x: tensor<4x6x5xf32>, %w: tensor<4x3xf32>) {
  %t = transpose (%x) {perm = [1, 2, 0]} : tensor<6x5x4xf32>
  %a = slice (%t) {starts = [0], ends = [3], axes = [0]} : tensor<3x5x4xf32>
  %b = slice (%t) {starts = [3, 1], ends = [6, 5], axes = [0, 1], steps = [1, 2]} : tensor<3x2x4xf32>
  %ya = matmul (%a, %w) : tensor<3x5x3xf32>
  %yb = matmul (%b, %w) : tensor<3x2x3xf32>
  return %ya as "ya", %yb as "yb"
}
)";
  Graph g = rewritten_and_checked(text);
  EXPECT_EQ(slices_of(g, "x"), (std::vector<std::string>{"1 0", "1 3"}));
  EXPECT_EQ(count_ops(g, OpKind::Transpose), 2);
}

TEST(SliceBeforeTranspose, OtherTransposesStay) {
  auto transposes_after = [](std::string text, const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
    return count_ops(rewritten_and_checked(text), OpKind::Transpose);
  };
  // Rewritten, as a reference: three parts' transposes and three head transposes.
  EXPECT_EQ(transposes_after(kVitSplit, "  return %a", "  return %a"), 6);
  // Kept: the whole transpose and the three head transposes.
  // The transposed tensor is also a graph output.
  EXPECT_EQ(transposes_after(kVitSplit, "return %a as \"a\"", "return %a as \"a\", %t as \"t\""), 4);
  // A slice that does not reach a product (v also returned as it is); the parts are contiguous
  // runs of the transposed tensor, views of it that cost nothing.
  EXPECT_EQ(transposes_after(kVitSplit, "return %a as \"a\"", "return %a as \"a\", %v0 as \"v0\""), 4);
  // A slice that reaches something other than a product or attention.
  EXPECT_EQ(transposes_after(kVitSplit, "%v1 = reshape (%v0)", "%v0n = neg (%v0) : tensor<1x2x3x8xf32>\n  %v1 = reshape (%v0n)"), 4);
}

// ShuffleNet-V2's channel shuffle of 2 groups of 4 channels, as exported: the concat of the two
// branches seen as [N, 2, 4, H, W], the groups moved inside ([N, 4, 2, H, W]), merged back into 8
// channels and split in halves; one half reaches the next block's 1x1 conv, the other (here
// negated) the next concat. BATCH and the slices' bounds are filled in per case.
const char* kChannelShuffle = R"(graph @main(%a: tensor<BATCHx4x3x3xf32>, %b: tensor<BATCHx4x3x3xf32>, %w: tensor<5x4x1x1xf32>) {
  %c = concat (%a, %b) {axis = 1} : tensor<BATCHx8x3x3xf32>
  %r = reshape (%c) {shape = [BATCH, 2, 4, 3, 3]} : tensor<BATCHx2x4x3x3xf32>
  %t = transpose (%r) {perm = [0, 2, 1, 3, 4]} : tensor<BATCHx4x2x3x3xf32>
  %m = reshape (%t) {shape = [BATCH, 8, 3, 3]} : tensor<BATCHx8x3x3xf32>
  %x1 = slice (%m) {starts = [X1_START], ends = [X1_END], axes = [1]} : tensor<BATCHxX1_Nx3x3xf32>
  %x2 = slice (%m) {starts = [4], ends = [8], axes = [1]} : tensor<BATCHx4x3x3xf32>
  %y = conv (%x2, %w) : tensor<BATCHx5x3x3xf32>
  %n = neg (%x1) : tensor<BATCHxX1_Nx3x3xf32>
  return %y as "y", %n as "n"
}
)";

Graph shuffle(int64_t batch, int64_t x1_start, int64_t x1_end) {
  std::string text = kChannelShuffle;
  for (const auto& [from, to] : {std::pair<std::string, int64_t>{"BATCH", batch}, {"X1_START", x1_start},
                                 {"X1_END", x1_end}, {"X1_N", x1_end - x1_start}})
    for (size_t at; (at = text.find(from)) != std::string::npos;) text.replace(at, from.size(), cat(to));
  return rewritten_and_checked(text);
}

TEST(SliceBeforeTranspose, ChannelShuffleHalvesBecomeTransposedSlicesOfTheGroups) {
  // Batch 2: each half is gathered (not a contiguous run); now a slice of axis 2 (the 4 channels
  // inside each group) of the reshaped concat, transposed: no transpose of the whole.
  Graph g = shuffle(2, 0, 4);
  EXPECT_EQ(count_ops(g, OpKind::Transpose), 2);
  EXPECT_EQ(slices_of(g, "r"), (std::vector<std::string>{"2 0", "2 2"}));
  // Kept: at batch 1 each half is a contiguous run (a view of the stored transpose).
  EXPECT_EQ(count_ops(shuffle(1, 0, 4), OpKind::Transpose), 1);
  // Kept: halves of 3 channels take no whole pairs of the merged [4, 2].
  EXPECT_EQ(count_ops(shuffle(2, 1, 4), OpKind::Transpose), 1);
  // Kept: the slices together take more than the transpose holds (x1 6 of the 8 channels).
  EXPECT_EQ(count_ops(shuffle(2, 0, 6), OpKind::Transpose), 1);
}

}  // namespace
}  // namespace vkc::ir
