// Reshapes and data movement: expand/collapse/reshape, transpose, pad, reverse, slice, concat,
// broadcast.
#include <gtest/gtest.h>

#include <limits>

#include "ir/interpreter_test_helpers.h"

namespace vkc::test {
namespace {

using ir::OpKind;
using Ints = std::vector<int64_t>;

HostTensor iota23() { return make_f32({2, 3}, {0, 1, 2, 3, 4, 5}); }

TEST(InterpreterShape, ReshapesKeepBytes) {
  HostTensor r = run_op(OpKind::Reshape, {iota23()}, {{"shape", Ints{3, -1}}});
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  expect_values(r, {0, 1, 2, 3, 4, 5});
  HostTensor c = run_op(OpKind::CollapseShape, {iota23()}, {{"reassociation", ir::IntsList{{0, 1}}}});
  EXPECT_EQ(c.shape(), (Shape{6}));
  expect_values(c, {0, 1, 2, 3, 4, 5});
  HostTensor e = run_op(OpKind::ExpandShape, {iota23()},
                        {{"reassociation", ir::IntsList{{0, 1}, {2}}}, {"shape", Ints{1, 2, 3}}});
  EXPECT_EQ(e.shape(), (Shape{1, 2, 3}));
  expect_values(e, {0, 1, 2, 3, 4, 5});
}

TEST(InterpreterShape, Transpose) {
  // [[0,1,2],[3,4,5]]^T = [[0,3],[1,4],[2,5]]
  HostTensor t = run_op(OpKind::Transpose, {iota23()}, {{"perm", Ints{1, 0}}});
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  expect_values(t, {0, 3, 1, 4, 2, 5});
  // rank 3 [1,2,3] with perm [2,0,1] -> [3,1,2]: out[k][0][i] = in[0][i][k]
  HostTensor t3 = run_op(OpKind::Transpose, {iota23().reshaped({1, 2, 3})}, {{"perm", Ints{2, 0, 1}}});
  EXPECT_EQ(t3.shape(), (Shape{3, 1, 2}));
  expect_values(t3, {0, 3, 1, 4, 2, 5});
}

TEST(InterpreterShape, PadConstant) {
  // pads [begin0, begin1, end0, end1] = [1, 0, 0, 2] with value 9
  HostTensor p = run_op(OpKind::Pad, {iota23()}, {{"pads", Ints{1, 0, 0, 2}}, {"value", 9.0}});
  EXPECT_EQ(p.shape(), (Shape{3, 5}));
  expect_values(p, {9, 9, 9, 9, 9,  //
                    0, 1, 2, 9, 9,  //
                    3, 4, 5, 9, 9});
}

TEST(InterpreterShape, ReverseAxes) {
  expect_values(run_op(OpKind::Reverse, {iota23()}, {{"axes", Ints{1}}}), {2, 1, 0, 5, 4, 3});
  expect_values(run_op(OpKind::Reverse, {iota23()}, {{"axes", Ints{0, -1}}}), {5, 4, 3, 2, 1, 0});
}

TEST(InterpreterShape, SliceBasicAndClamped) {
  HostTensor x = make_f32({6}, {0, 1, 2, 3, 4, 5});
  expect_values(run_op(OpKind::Slice, {x}, {{"starts", Ints{1}}, {"ends", Ints{5}}, {"steps", Ints{2}}}),
                {1, 3});
  // Negative start counts from the end; an end beyond the dim clamps to it.
  expect_values(run_op(OpKind::Slice, {x}, {{"starts", Ints{-2}}, {"ends", Ints{1000}}}), {4, 5});
}

TEST(InterpreterShape, SliceNegativeStep) {
  HostTensor x = make_f32({6}, {0, 1, 2, 3, 4, 5});
  // Whole reversal: start INT64_MAX clamps to 5, end INT64_MIN clamps to -1 (exclusive).
  int64_t big = std::numeric_limits<int64_t>::max(), small = std::numeric_limits<int64_t>::min();
  expect_values(run_op(OpKind::Slice, {x}, {{"starts", Ints{big}}, {"ends", Ints{small}}, {"steps", Ints{-1}}}),
                {5, 4, 3, 2, 1, 0});
  // start 4, end 0 exclusive, step -2: 4, 2
  expect_values(run_op(OpKind::Slice, {x}, {{"starts", Ints{4}}, {"ends", Ints{0}}, {"steps", Ints{-2}}}),
                {4, 2});
  // start -1 (= 5), end -4 (= 2), step -1: 5, 4, 3
  expect_values(run_op(OpKind::Slice, {x}, {{"starts", Ints{-1}}, {"ends", Ints{-4}}, {"steps", Ints{-1}}}),
                {5, 4, 3});
  // On axis 1 of [2, 3] only: columns 2, 0 via step -2
  HostTensor s = run_op(OpKind::Slice, {iota23()},
                        {{"starts", Ints{2}}, {"ends", Ints{-10}}, {"axes", Ints{1}}, {"steps", Ints{-2}}});
  EXPECT_EQ(s.shape(), (Shape{2, 2}));
  expect_values(s, {2, 0, 5, 3});
}

TEST(InterpreterShape, ConcatAxis1) {
  HostTensor b = make_f32({2, 1}, {10, 11});
  HostTensor c = run_op(OpKind::Concat, {iota23(), b, iota23()}, {{"axis", int64_t(-1)}});
  EXPECT_EQ(c.shape(), (Shape{2, 7}));
  expect_values(c, {0, 1, 2, 10, 0, 1, 2,  //
                    3, 4, 5, 11, 3, 4, 5});
}

TEST(InterpreterShape, BroadcastToShape) {
  HostTensor b = run_op(OpKind::Broadcast, {make_f32({2, 1}, {7, 8})}, {{"shape", Ints{2, 2, 3}}});
  EXPECT_EQ(b.shape(), (Shape{2, 2, 3}));
  expect_values(b, {7, 7, 7, 8, 8, 8, 7, 7, 7, 8, 8, 8});
}

TEST(InterpreterShape, DataMovementIsBitExactForI64) {
  // 2^62 + 1 is not representable in double; a path through double would change it.
  int64_t v = (int64_t(1) << 62) + 1;
  HostTensor x = make_i64({2}, {v, -v});
  EXPECT_EQ(ints_of(run_op(OpKind::Reverse, {x}, {{"axes", Ints{0}}})), (Ints{-v, v}));
  EXPECT_EQ(ints_of(run_op(OpKind::Pad, {x}, {{"pads", Ints{1, 0}}})), (Ints{0, v, -v}));
}

}  // namespace
}  // namespace vkc::test
