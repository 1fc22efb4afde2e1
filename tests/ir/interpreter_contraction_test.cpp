// matmul, batch_matmul and gemm.
#include <gtest/gtest.h>

#include "ir/interpreter_test_helpers.h"

namespace vkc::test {
namespace {

using ir::OpKind;

TEST(InterpreterMatmul, TwoByThreeTimesThreeByTwo) {
  // [[1,2,3],[4,5,6]] x [[7,8],[9,10],[11,12]] = [[58, 64], [139, 154]]
  HostTensor a = make_f32({2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor b = make_f32({3, 2}, {7, 8, 9, 10, 11, 12});
  HostTensor y = run_op(OpKind::MatMul, {a, b});
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  expect_values(y, {58, 64, 139, 154});
}

TEST(InterpreterMatmul, Transposes) {
  // a^T with a = [[1,4],[2,5],[3,6]] is [[1,2,3],[4,5,6]]; b^T with b = [[7,9,11],[8,10,12]].
  HostTensor at = make_f32({3, 2}, {1, 4, 2, 5, 3, 6});
  HostTensor bt = make_f32({2, 3}, {7, 9, 11, 8, 10, 12});
  expect_values(run_op(OpKind::MatMul, {at, bt}, {{"transpose_a", true}, {"transpose_b", true}}),
                {58, 64, 139, 154});
}

TEST(InterpreterMatmul, BatchBroadcasting) {
  // a [2, 1, 2, 2] against b [3, 2, 2]: result [2, 3, 2, 2], block (i, j) = a[i] x b[j].
  // a[0] = I, a[1] = 2I; b[j] = [[j, 0], [0, 1]].
  HostTensor a = make_f32({2, 1, 2, 2}, {1, 0, 0, 1, 2, 0, 0, 2});
  HostTensor b = make_f32({3, 2, 2}, {0, 0, 0, 1, 1, 0, 0, 1, 2, 0, 0, 1});
  HostTensor y = run_op(OpKind::MatMul, {a, b});
  ASSERT_EQ(y.shape(), (Shape{2, 3, 2, 2}));
  expect_values(y, {0, 0, 0, 1, 1, 0, 0, 1, 2, 0, 0, 1,  //
                    0, 0, 0, 2, 2, 0, 0, 2, 4, 0, 0, 2});
}

TEST(InterpreterMatmul, OneDimensionalPromotion) {
  HostTensor v = make_f32({3}, {1, 2, 3});
  HostTensor m = make_f32({3, 2}, {1, 0, 0, 1, 1, 1});  // columns [1,0,1] and [0,1,1]
  HostTensor vm = run_op(OpKind::MatMul, {v, m});
  EXPECT_EQ(vm.shape(), (Shape{2}));
  expect_values(vm, {4, 5});
  HostTensor mt = make_f32({2, 3}, {1, 0, 1, 0, 1, 1});
  HostTensor mv = run_op(OpKind::MatMul, {mt, v});
  EXPECT_EQ(mv.shape(), (Shape{2}));
  expect_values(mv, {4, 5});
  HostTensor dot = run_op(OpKind::MatMul, {v, v});
  EXPECT_EQ(dot.shape(), (Shape{}));
  expect_values(dot, {14});
  // A batched lhs with a 1-D rhs: [2, 1, 3] x [3] -> [2, 1]
  HostTensor batched = run_op(OpKind::MatMul, {make_f32({2, 1, 3}, {1, 1, 1, 0, 0, 1}), v});
  EXPECT_EQ(batched.shape(), (Shape{2, 1}));
  expect_values(batched, {6, 3});
}

TEST(InterpreterMatmul, BatchMatmulWithTranspose) {
  // batch 2: [[1,2]] x [[3],[4]] = 11;  [[5,6]] x [[7],[8]] = 83; b given transposed as [2, 1, 2].
  HostTensor a = make_f32({2, 1, 2}, {1, 2, 5, 6});
  HostTensor bt = make_f32({2, 1, 2}, {3, 4, 7, 8});
  HostTensor y = run_op(OpKind::BatchMatMul, {a, bt}, {{"transpose_b", true}});
  EXPECT_EQ(y.shape(), (Shape{2, 1, 1}));
  expect_values(y, {11, 83});
}

TEST(InterpreterGemm, AlphaBetaAndBroadcastC) {
  // A^T B with A^T = [[1,2],[3,4]], B = I: [[1,2],[3,4]]; y = 2*that + 0.5*[10, 20] (row broadcast)
  //   = [[2+5, 4+10], [6+5, 8+10]] = [[7, 14], [11, 18]]
  HostTensor a = make_f32({2, 2}, {1, 3, 2, 4});
  HostTensor b = make_f32({2, 2}, {1, 0, 0, 1});
  HostTensor c = make_f32({2}, {10, 20});
  HostTensor y = run_op(OpKind::Gemm, {a, b, c}, {{"alpha", 2.0}, {"beta", 0.5}, {"transpose_a", true}});
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  expect_values(y, {7, 14, 11, 18});
  // No C; B is given as [3, 2] = [[1,4],[2,5],[3,6]], so B^T = [[1,2,3],[4,5,6]].
  HostTensor y2 = run_op(OpKind::Gemm, {make_f32({1, 2}, {1, 2}), make_f32({3, 2}, {1, 4, 2, 5, 3, 6})},
                         {{"transpose_b", true}});
  // [1,2] x [[1,2,3],[4,5,6]] = [9, 12, 15]
  expect_values(y2, {9, 12, 15});
}

}  // namespace
}  // namespace vkc::test
