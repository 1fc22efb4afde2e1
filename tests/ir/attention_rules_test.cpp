// attention: shape rule errors and a hand-computed reference case.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/interpreter_test_helpers.h"
#include "tests/ir/verifier_test_helpers.h"

namespace vkc::ir::test {
namespace {

TEST(VerifierAttention, ShapesAndErrors) {
  AttrMap s{{"scale", 0.5}};
  EXPECT_EQ(infer(OpKind::Attention, {f32({2, 3, 4}), f32({2, 5, 4}), f32({2, 5, 6})}, s), f32({2, 3, 6}));
  EXPECT_EQ(infer(OpKind::Attention, {f32({2, 3, 4}), f32({2, 4, 5}), f32({2, 5, 6}), f32({3, 1})},
                  {{"scale", 0.5}, {"k_transposed", true}}),
            f32({2, 3, 6}));
  EXPECT_EQ(error_of(OpKind::Attention, {f32({2, 3, 4}), f32({2, 5, 3}), f32({2, 5, 6})}, s),
            "attention 'n': k dim 2 (D) is 3, q dim 2 (D) is 4; they must match");
  EXPECT_EQ(error_of(OpKind::Attention, {f32({2, 3, 4}), f32({2, 5, 4}), f32({2, 7, 6})}, s),
            "attention 'n': v dim 1 (Sk) is 7, k has 5 keys; they must match");
  EXPECT_EQ(error_of(OpKind::Attention, {f32({2, 3, 4}), f32({1, 5, 4}), f32({2, 5, 6})}, s),
            "attention 'n': k dim 0 (batch) is 1, q has 2; batch dims must match");
  EXPECT_EQ(error_of(OpKind::Attention, {f32({2, 3, 4}), f32({2, 5, 4}), f32({2, 5, 6}), f32({3, 4})}, s),
            "attention 'n': mask dim 1 is 4, which does not broadcast to scores dim 2 (5)");
  EXPECT_EQ(error_of(OpKind::Attention, {f32({2, 3, 4}), f32({2, 5, 4}), typed(DType::f16, {2, 5, 6})}, s),
            "attention 'n': v has element type f16, q has f32; they must match");
  EXPECT_EQ(error_of(OpKind::Attention, {f32({2, 3, 4}), f32({2, 5, 4}), f32({2, 5, 6})},
                     {{"scale", 0.5}, {"causal_offset", int64_t(2)}}),
            "attention 'n': attribute 'causal_offset' is 2, but 'causal' is false (it moves the causal mask only)");
  EXPECT_NE(error_of(OpKind::Attention, {f32({2, 3, 4}), f32({2, 5, 4}), f32({2, 5, 6})}).find("scale"),
            std::string::npos);
  // mask_fill takes a bool mask; an added mask is float.
  EXPECT_EQ(infer(OpKind::Attention, {f32({2, 3, 4}), f32({2, 5, 4}), f32({2, 5, 6}), typed(DType::boolean, {5})},
                  {{"scale", 0.5}, {"mask_fill", true}, {"fill", -1e9}}),
            f32({2, 3, 6}));
  EXPECT_NE(error_of(OpKind::Attention, {f32({2, 3, 4}), f32({2, 5, 4}), f32({2, 5, 6}), f32({5})},
                     {{"scale", 0.5}, {"mask_fill", true}})
                .find("bool (mask_fill"),
            std::string::npos);
  EXPECT_NE(error_of(OpKind::Attention, {f32({2, 3, 4}), f32({2, 5, 4}), f32({2, 5, 6}), typed(DType::boolean, {5})}, s)
                .find("a float type (an additive mask)"),
            std::string::npos);
  // A fifth operand: a float mask added after mask_fill's fill, broadcast like the first.
  const AttrMap fill{{"scale", 0.5}, {"mask_fill", true}, {"fill", -1e9}};
  EXPECT_EQ(infer(OpKind::Attention,
                  {f32({2, 3, 4}), f32({2, 5, 4}), f32({2, 5, 6}), typed(DType::boolean, {3, 5}), f32({2, 1, 5})}, fill),
            f32({2, 3, 6}));
  EXPECT_EQ(error_of(OpKind::Attention, {f32({2, 3, 4}), f32({2, 5, 4}), f32({2, 5, 6}), f32({5}), f32({5})}, s),
            "attention 'n': has an added_mask (operand 4) but 'mask_fill' is false: a second mask is added after a "
            "fill only");
  EXPECT_EQ(error_of(OpKind::Attention,
                     {f32({2, 3, 4}), f32({2, 5, 4}), f32({2, 5, 6}), typed(DType::boolean, {5}), f32({3, 4})}, fill),
            "attention 'n': added_mask dim 1 is 4, which does not broadcast to scores dim 2 (5)");
  EXPECT_NE(error_of(OpKind::Attention,
                     {f32({2, 3, 4}), f32({2, 5, 4}), f32({2, 5, 6}), typed(DType::boolean, {5}), typed(DType::boolean, {5})},
                     fill)
                .find("a float type (an additive mask)"),
            std::string::npos);
}

// One query, two keys: scores 0.5 * [1, 3] = [0.5, 1.5] (+ mask [0, -1] = [0.5, 0.5]):
// weights [1/2, 1/2], out = (v0 + v1) / 2. Causal with Sq = Sk = 2 hides key 1 from query 0.
TEST(InterpreterAttention, HandComputed) {
  HostTensor q = make_f32({1, 1, 2}, {1, 0});
  HostTensor k = make_f32({1, 2, 2}, {1, 5, 3, 7});
  HostTensor v = make_f32({1, 2, 2}, {10, 20, 30, 40});
  HostTensor mask = make_f32({2}, {0, -1});
  vkc::test::expect_values(vkc::test::run_op(OpKind::Attention, {q, k, v, mask}, {{"scale", 0.5}}), {20, 30});
  // mask_fill: key 1 hidden puts the fill 0.5 in its score 1.5's place: scores [0.5, 0.5] again.
  HostTensor hide(DType::boolean, {2});
  hide.set_f64(0, 0);
  hide.set_f64(1, 1);
  vkc::test::expect_values(
      vkc::test::run_op(OpKind::Attention, {q, k, v, hide}, {{"scale", 0.5}, {"mask_fill", true}, {"fill", 0.5}}), {20, 30});
  // The fill first, then the added mask on every score: fill 1.5 for key 1, + [0, -1]: [0.5, 0.5].
  vkc::test::expect_values(vkc::test::run_op(OpKind::Attention, {q, k, v, hide, mask},
                                             {{"scale", 0.5}, {"mask_fill", true}, {"fill", 1.5}}),
                           {20, 30});
  HostTensor q2 = make_f32({1, 2, 2}, {1, 0, 0, 1});
  HostTensor y = vkc::test::run_op(OpKind::Attention, {q2, k, v}, {{"scale", 0.0}, {"causal", true}});
  vkc::test::expect_values(y, {10, 20, 20, 30});  // query 0 sees key 0 only; query 1 both, equally
  // causal_offset -1 moves the diagonal down: query 0 sees no key (0/0 = NaN), query 1 key 0 only.
  HostTensor z = vkc::test::run_op(OpKind::Attention, {q2, k, v},
                                   {{"scale", 0.0}, {"causal", true}, {"causal_offset", int64_t(-1)}});
  EXPECT_TRUE(std::isnan(z.get_f64(0)) && std::isnan(z.get_f64(1)));
  EXPECT_EQ(z.get_f64(2), 10);
  EXPECT_EQ(z.get_f64(3), 20);
  // with_lse: each row's log-sum-exp [.., Sq, 1] (scores 0: log of the keys it sees), and a row
  // that sees no key is 0 with lse -inf.
  std::vector<HostTensor> w = vkc::test::run_op_all(
      OpKind::Attention, {q2, k, v}, {{"scale", 0.0}, {"causal", true}, {"causal_offset", int64_t(-1)}, {"with_lse", true}});
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[1].shape(), (Shape{1, 2, 1}));
  vkc::test::expect_values(w[0], {0, 0, 10, 20});
  EXPECT_TRUE(std::isinf(w[1].get_f64(0)) && w[1].get_f64(0) < 0);
  EXPECT_EQ(w[1].get_f64(1), 0);
  w = vkc::test::run_op_all(OpKind::Attention, {q2, k, v}, {{"scale", 0.0}, {"with_lse", true}});
  EXPECT_NEAR(w[1].get_f64(1), std::log(2.0), 1e-7);
}

}  // namespace
}  // namespace vkc::ir::test
