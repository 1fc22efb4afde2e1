// sort and topk: stability, NaN placement, -0.0, payloads, index types.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/interpreter_test_helpers.h"

namespace vkc::test {
namespace {

using ir::OpKind;
using Ints = std::vector<int64_t>;

TEST(InterpreterSort, StableWithPayload) {
  // keys [3, 1, 2, 1, 3] with payload = input index: ties keep the lower index first.
  HostTensor keys = make_f32({5}, {3, 1, 2, 1, 3});
  HostTensor payload = make_i64({5}, {0, 1, 2, 3, 4});
  std::vector<HostTensor> asc = run_op_all(OpKind::Sort, {keys, payload});
  ASSERT_EQ(asc.size(), 2u);
  expect_values(asc[0], {1, 1, 2, 3, 3});
  EXPECT_EQ(ints_of(asc[1]), (Ints{1, 3, 2, 0, 4}));
  std::vector<HostTensor> desc = run_op_all(OpKind::Sort, {keys, payload}, {{"descending", true}});
  expect_values(desc[0], {3, 3, 2, 1, 1});
  EXPECT_EQ(ints_of(desc[1]), (Ints{0, 4, 2, 1, 3}));
}

TEST(InterpreterSort, NaNPlacement) {
  HostTensor keys = make_f32({5}, {NAN, 2, -INFINITY, NAN, 1});
  HostTensor payload = make_i64({5}, {0, 1, 2, 3, 4});
  std::vector<HostTensor> asc = run_op_all(OpKind::Sort, {keys, payload});
  expect_values(asc[0], {-INFINITY, 1, 2, NAN, NAN});
  EXPECT_EQ(ints_of(asc[1]), (Ints{2, 4, 1, 0, 3}));
  std::vector<HostTensor> desc = run_op_all(OpKind::Sort, {keys, payload}, {{"descending", true}});
  expect_values(desc[0], {NAN, NAN, 2, 1, -INFINITY});
  EXPECT_EQ(ints_of(desc[1]), (Ints{0, 3, 1, 4, 2}));
}

TEST(InterpreterSort, NegativeZeroEqualsZero) {
  // -0.0 and 0.0 tie, so they keep input order in both directions (checked via the sign bit).
  HostTensor keys = make_f32({4}, {0.0f, -1, -0.0f, 1});
  std::vector<HostTensor> asc = run_op_all(OpKind::Sort, {keys, make_i64({4}, {0, 1, 2, 3})});
  EXPECT_EQ(ints_of(asc[1]), (Ints{1, 0, 2, 3}));
  EXPECT_FALSE(std::signbit(asc[0].get_f64(1)));
  EXPECT_TRUE(std::signbit(asc[0].get_f64(2)));
  std::vector<HostTensor> desc = run_op_all(OpKind::Sort, {keys, make_i64({4}, {0, 1, 2, 3})},
                                            {{"descending", true}});
  EXPECT_EQ(ints_of(desc[1]), (Ints{3, 0, 2, 1}));
}

TEST(InterpreterSort, Axis0IntKeysAndFloatPayload) {
  // [[5, 1], [2, 1], [9, 0]] sorted along axis 0 per column; payload follows its key.
  HostTensor keys = ints(DType::i32, {3, 2}, {5, 1, 2, 1, 9, 0});
  HostTensor payload = make_f32({3, 2}, {0.5, 0.1, 0.2, 0.11, 0.9, 0.0});
  std::vector<HostTensor> r = run_op_all(OpKind::Sort, {keys, payload}, {{"axis", int64_t(0)}});
  EXPECT_EQ(ints_of(r[0]), (Ints{2, 0, 5, 1, 9, 1}));
  expect_values(r[1], {0.2, 0.0, 0.5, 0.1, 0.9, 0.11});
}

TEST(InterpreterTopK, TiesTakeLowerIndexFirst) {
  HostTensor x = make_f32({6}, {4, 7, 4, 7, 1, 4});
  std::vector<HostTensor> r = run_op_all(OpKind::TopK, {x}, {{"k", int64_t(3)}});
  expect_values(r[0], {7, 7, 4});
  EXPECT_EQ(r[1].dtype(), DType::i64);
  EXPECT_EQ(ints_of(r[1]), (Ints{1, 3, 0}));
  std::vector<HostTensor> s = run_op_all(OpKind::TopK, {x}, {{"k", int64_t(2)}, {"largest", false}});
  expect_values(s[0], {1, 4});
  EXPECT_EQ(ints_of(s[1]), (Ints{4, 0}));
}

TEST(InterpreterTopK, KEqualsNAndKOneAndI32Indices) {
  HostTensor x = make_f32({4}, {2, 9, 2, 5});
  std::vector<HostTensor> all = run_op_all(OpKind::TopK, {x}, {{"k", int64_t(4)}, {"index_type", std::string("i32")}});
  EXPECT_EQ(all[1].dtype(), DType::i32);
  expect_values(all[0], {9, 5, 2, 2});
  EXPECT_EQ(ints_of(all[1]), (Ints{1, 3, 0, 2}));
  std::vector<HostTensor> one = run_op_all(OpKind::TopK, {x}, {{"k", int64_t(1)}, {"largest", false}});
  expect_values(one[0], {2});
  EXPECT_EQ(ints_of(one[1]), (Ints{0}));
  // sorted = false returns the same elements in the same order
  std::vector<HostTensor> uns = run_op_all(OpKind::TopK, {x}, {{"k", int64_t(3)}, {"sorted", false}});
  expect_values(uns[0], {9, 5, 2});
  EXPECT_EQ(ints_of(uns[1]), (Ints{1, 3, 0}));
}

TEST(InterpreterTopK, NaNCountsAsLargest) {
  HostTensor x = make_f32({4}, {1, NAN, 3, 2});
  std::vector<HostTensor> big = run_op_all(OpKind::TopK, {x}, {{"k", int64_t(2)}});
  expect_values(big[0], {NAN, 3});
  EXPECT_EQ(ints_of(big[1]), (Ints{1, 2}));
  std::vector<HostTensor> small = run_op_all(OpKind::TopK, {x}, {{"k", int64_t(4)}, {"largest", false}});
  expect_values(small[0], {1, 2, 3, NAN});
  EXPECT_EQ(ints_of(small[1]), (Ints{0, 3, 2, 1}));
}

TEST(InterpreterTopK, Axis0OfMatrix) {
  // [[1, 8], [5, 2], [3, 9]], k = 2 along axis 0: column 0 -> 5 (1), 3 (2); column 1 -> 9 (2), 8 (0)
  std::vector<HostTensor> r = run_op_all(OpKind::TopK, {make_f32({3, 2}, {1, 8, 5, 2, 3, 9})},
                                         {{"k", int64_t(2)}, {"axis", int64_t(0)}});
  EXPECT_EQ(r[0].shape(), (Shape{2, 2}));
  expect_values(r[0], {5, 9, 3, 8});
  EXPECT_EQ(ints_of(r[1]), (Ints{1, 2, 2, 0}));
}

}  // namespace
}  // namespace vkc::test
