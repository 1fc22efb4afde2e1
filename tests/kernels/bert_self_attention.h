// Test graph: BERT's self-attention as HF exports it. q, k and v are products of one activation
// x [b, sq, h * d] with constant weights (near the identity, so that float16 keeps them well) plus
// constant biases, split into h heads; out = softmax(q k^T / sqrt(d)) v, [b, h, sq, d]. The
// compiler joins the three products into one (ir::fuse_shared_input_matmuls_pass) and fuses the
// rest into one attention op that reads q, k and v through slices of the joined product.
#pragma once

#include <cmath>

#include "ir/graph.h"

namespace vkc::test {

inline ir::Graph bert_self_attention(int64_t b, int64_t sq, int64_t h, int64_t d) {
  using K = ir::OpKind;
  using Ints = std::vector<int64_t>;
  const int64_t e = h * d;
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {b, sq, e}});
  auto heads = [&](uint32_t seed) {
    HostTensor w(DType::f32, {e, e}), bias(DType::f32, {e});
    for (int64_t i = 0; i < w.numel(); ++i)
      w.set_f64(i, double(int64_t((i * 7919 + seed * 104729) % 41) - 20) / (4.0 * double(e)) + (i % (e + 1) == 0 ? 1.0 : 0.0));
    for (int64_t i = 0; i < e; ++i) bias.set_f64(i, double(int64_t((i * 31 + seed) % 9) - 4) / 8.0);
    ir::Value* y = g.add_op(K::MatMul, {x, g.add_constant(w)})->result();
    y = g.add_op(K::Add, {y, g.add_constant(bias)})->result();
    ir::Value* r = g.add_op(K::Reshape, {y}, {{"shape", Ints{b, sq, h, d}}})->result();
    return g.add_op(K::Transpose, {r}, {{"perm", Ints{0, 2, 1, 3}}})->result();
  };
  ir::Value* q = heads(1);
  ir::Value* k = heads(2);
  ir::Value* v = heads(3);
  ir::Value* kt = g.add_op(K::Transpose, {k}, {{"perm", Ints{0, 1, 3, 2}}})->result();
  HostTensor root_d(DType::f32, {1});
  root_d.set_f64(0, std::sqrt(double(d)));
  ir::Value* s = g.add_op(K::Div, {g.add_op(K::MatMul, {q, kt})->result(), g.add_constant(root_d)})->result();
  ir::Value* p = g.add_op(K::Softmax, {s}, {{"axis", int64_t(-1)}})->result();
  g.add_output(g.add_op(K::MatMul, {p, v})->result(), "out");
  return g;
}

}  // namespace vkc::test
