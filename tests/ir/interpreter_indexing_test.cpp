// Reference semantics of the indexing ops on the ONNX specification's examples, plus vkc's
// defined results: negative indices wrap once, out-of-range indices gather zeros and skip scatter
// updates, duplicates apply in index order with per-step rounding.
#include <gtest/gtest.h>

#include <limits>

#include "ir/interpreter_test_helpers.h"

namespace vkc::test {
namespace {

using K = ir::OpKind;

HostTensor i64s(Shape s, std::vector<int64_t> v) { return make_i64(std::move(s), v); }

TEST(InterpreterGather, OnnxExamplesAndOutOfRange) {
  HostTensor data = make_f32({3, 2}, {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f});
  HostTensor r = run_op(K::Gather, {data, i64s({2, 2}, {0, 1, 1, 2})});
  EXPECT_EQ(r.shape(), (Shape{2, 2, 2}));
  expect_values(r, {1.0, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7}, 1e-6);
  HostTensor d3 = make_f32({3, 3}, {1, 1.2f, 1.9f, 2.3f, 3.4f, 3.9f, 4.5f, 5.7f, 5.9f});
  r = run_op(K::Gather, {d3, i64s({1, 2}, {0, 2})}, {{"axis", int64_t(1)}});
  EXPECT_EQ(r.shape(), (Shape{3, 1, 2}));
  expect_values(r, {1, 1.9, 2.3, 3.9, 4.5, 5.9}, 1e-6);
  // -1 wraps to 2; 3 and -4 are out of range for a dim of 3 and read zeros.
  r = run_op(K::Gather, {make_f32({3}, {10, 20, 30}), i64s({5}, {-1, 3, -4, 0, INT64_MIN})});
  expect_values(r, {30, 0, 0, 10, 0});
  HostTensor i32idx(DType::i32, {2});
  i32idx.set_i64(0, -3);
  i32idx.set_i64(1, 1);
  expect_values(run_op(K::Gather, {make_f32({3}, {10, 20, 30}), i32idx}), {10, 20});
}

TEST(InterpreterGatherElements, OnnxExamplesAndOutOfRange) {
  HostTensor data = make_f32({2, 2}, {1, 2, 3, 4});
  expect_values(run_op(K::GatherElements, {data, i64s({2, 2}, {0, 0, 1, 0})}, {{"axis", int64_t(1)}}), {1, 1, 4, 3});
  HostTensor d = make_f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  expect_values(run_op(K::GatherElements, {d, i64s({2, 3}, {1, 2, 0, 2, 0, 0})}), {4, 8, 3, 7, 2, 3});
  expect_values(run_op(K::GatherElements, {d, i64s({2, 3}, {-1, -2, 0, -3, 3, -4})}), {7, 5, 3, 1, 0, 0});
}

TEST(InterpreterGatherNd, OnnxExamplesAndOutOfRange) {
  HostTensor d = make_f32({2, 2}, {0, 1, 2, 3});
  expect_values(run_op(K::GatherND, {d, i64s({2, 2}, {0, 0, 1, 1})}), {0, 3});
  HostTensor rows = run_op(K::GatherND, {d, i64s({2, 1}, {1, 0})});
  EXPECT_EQ(rows.shape(), (Shape{2, 2}));
  expect_values(rows, {2, 3, 0, 1});
  HostTensor d3 = make_f32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  HostTensor b = run_op(K::GatherND, {d3, i64s({2, 1}, {1, 0})}, {{"batch_dims", int64_t(1)}});
  EXPECT_EQ(b.shape(), (Shape{2, 2}));
  expect_values(b, {2, 3, 4, 5});
  // A tuple with one component out of range gathers a zero slice; -1 wraps.
  expect_values(run_op(K::GatherND, {d, i64s({3, 1}, {2, -1, -3})}), {0, 0, 2, 3, 0, 0});
}

TEST(InterpreterScatterNd, OnnxExamplesReductionsAndDuplicates) {
  HostTensor data = make_f32({8}, {1, 2, 3, 4, 5, 6, 7, 8});
  HostTensor idx = i64s({4, 1}, {4, 3, 1, 7});
  HostTensor upd = make_f32({4}, {9, 10, 11, 12});
  expect_values(run_op(K::ScatterND, {data, idx, upd}), {1, 11, 3, 10, 9, 6, 7, 12});
  // Duplicates: 'none' keeps the last update; 'add' sums; out of range (5 for a dim of 4) is skipped.
  HostTensor d4 = make_f32({4}, {1, 2, 3, 4});
  HostTensor dup = i64s({4, 1}, {0, 0, 5, -4});
  HostTensor u4 = make_f32({4}, {10, 20, 100, 7});
  expect_values(run_op(K::ScatterND, {d4, dup, u4}), {7, 2, 3, 4});
  expect_values(run_op(K::ScatterND, {d4, dup, u4}, {{"reduction", std::string("add")}}), {38, 2, 3, 4});
  expect_values(run_op(K::ScatterND, {d4, dup, u4}, {{"reduction", std::string("mul")}}), {1400, 2, 3, 4});
  expect_values(run_op(K::ScatterND, {d4, dup, u4}, {{"reduction", std::string("max")}}), {20, 2, 3, 4});
  expect_values(run_op(K::ScatterND, {d4, dup, u4}, {{"reduction", std::string("min")}}), {1, 2, 3, 4});
  // Slices: k = 1 on a [4, 2] data scatters rows.
  HostTensor rows = run_op(K::ScatterND, {make_f32({4, 2}, {0, 0, 0, 0, 0, 0, 0, 0}), i64s({2, 1}, {-1, 1}),
                                          make_f32({2, 2}, {1, 2, 3, 4})});
  expect_values(rows, {0, 0, 3, 4, 0, 0, 1, 2});
}

TEST(InterpreterScatterElements, OnnxExamplesAndRounding) {
  HostTensor data = make_f32({1, 5}, {1, 2, 3, 4, 5});
  HostTensor r = run_op(K::ScatterElements, {data, i64s({1, 2}, {1, 3}), make_f32({1, 2}, {1.1f, 2.1f})},
                        {{"axis", int64_t(1)}});
  expect_values(r, {1, 1.1, 3, 2.1, 5}, 1e-6);
  // Negative index wraps; out of range skipped; 'max' propagates NaN.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  r = run_op(K::ScatterElements, {data, i64s({1, 3}, {-1, 7, 0}), make_f32({1, 3}, {9, 9, nan})},
             {{"axis", int64_t(1)}, {"reduction", std::string("max")}});
  expect_values(r, {nan, 2, 3, 4, 9});
  // Each reduction step rounds to the element type: 2048 + 1 rounds back to 2048 in f16, twice;
  // one rounding of the exact sum would give 2050.
  HostTensor h(DType::f16, {1});
  h.set_f64(0, 2048);
  HostTensor ones(DType::f16, {2});
  ones.set_f64(0, 1);
  ones.set_f64(1, 1);
  HostTensor sum = run_op(K::ScatterElements, {h, i64s({2}, {0, 0}), ones}, {{"reduction", std::string("add")}});
  expect_values(sum, {2048});
  // Integer reductions wrap at the element width.
  HostTensor b(DType::i8, {1});
  b.set_i64(0, 100);
  HostTensor u(DType::i8, {1});
  u.set_i64(0, 100);
  EXPECT_EQ(ints_of(run_op(K::ScatterElements, {b, i64s({1}, {0}), u}, {{"reduction", std::string("add")}})),
            (std::vector<int64_t>{-56}));
}

}  // namespace
}  // namespace vkc::test
