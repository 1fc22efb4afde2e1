// Seeded random resnet-like graphs for the channels-last pass (ir/passes/channels_last.cpp) and
// the plans that follow from it: a stem conv on the graph input, max pooling, residual blocks
// (3x3 conv, relu, per-channel bias, 1x1 conv, optional squeeze-excite and concat, add, relu,
// clip), global average pooling, a reshape to [N, C] and a gemm classifier; 1-D, 2-D or 3-D.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "support/tensor.h"

namespace vkc::test {

struct ResnetLikeShape {
  int spatial_rank = 2;
  int64_t batch = 1, in_channels = 3, channels = 16, size = 8;  // size: each spatial extent
  int blocks = 2;
  bool squeeze_excite = false, concat = false;
  bool block_output = false;  // also return the first block's result (a use outside the region)
  DType dtype = DType::f32;
};

// Four variants over a base shape (batch, channels, 2-D size): plain 2-D; 2-D with squeeze-excite
// and concat (and the first block's result as an output where `block_output`); 1-D of `size_1d`;
// 3-D of `size_3d` without concat.
inline std::vector<ResnetLikeShape> resnet_like_variants(ResnetLikeShape s, int64_t size_1d, int64_t size_3d,
                                                         bool block_output) {
  std::vector<ResnetLikeShape> shapes{s};
  s.squeeze_excite = s.concat = true;
  s.block_output = block_output;
  shapes.push_back(s);
  s.spatial_rank = 1;
  s.size = size_1d;
  shapes.push_back(s);
  s.spatial_rank = 3;
  s.size = size_3d;
  s.concat = false;
  shapes.push_back(s);
  return shapes;
}

inline ir::Value* resnet_like_constant(ir::Graph& g, DType t, const Shape& s, std::mt19937& rng, double scale,
                                       const std::string& name) {
  std::uniform_real_distribution<double> dist(-scale, scale);
  HostTensor h(t, s);
  for (int64_t i = 0; i < h.numel(); ++i) h.set_f64(i, dist(rng));
  return g.add_op(ir::OpKind::Constant, {}, {{"value", std::make_shared<const HostTensor>(std::move(h))}}, name)
      ->result();
}

inline ir::Graph resnet_like_graph(const ResnetLikeShape& c, std::mt19937& rng) {
  using ir::OpKind;
  ir::Graph g;
  const size_t r = size_t(c.spatial_rank);
  Shape in{c.batch, c.in_channels};
  in.insert(in.end(), r, c.size);
  ir::Value* x = g.add_input("x", {c.dtype, in});
  int n = 0;
  auto name = [&](const std::string& what) { return what + std::to_string(n++); };
  auto conv = [&](ir::Value* v, int64_t out, int64_t k) {
    const int64_t cin = v->type.shape[1];
    Shape ws{out, cin};
    ws.insert(ws.end(), r, k);
    ir::Value* w = resnet_like_constant(g, c.dtype, ws, rng, 1.0 / double(cin * k), name("w"));
    ir::Value* b = resnet_like_constant(g, c.dtype, {out}, rng, 0.1, name("b"));
    ir::AttrMap attrs{{"pads", std::vector<int64_t>(2 * r, k / 2)}};
    return g.add_op(OpKind::Conv, {v, w, b}, attrs, name("conv"))->result();
  };
  auto unary = [&](OpKind k, ir::Value* v, ir::AttrMap attrs = {}) {
    return g.add_op(k, {v}, std::move(attrs), name("unary"))->result();
  };
  auto binary = [&](OpKind k, ir::Value* a, ir::Value* b) { return g.add_op(k, {a, b}, {}, name("binary"))->result(); };
  std::vector<int64_t> spatial_axes;
  for (size_t i = 0; i < r; ++i) spatial_axes.push_back(int64_t(2 + i));

  x = unary(OpKind::Relu, conv(x, c.channels, 3));
  x = g.add_op(OpKind::MaxPool, {x},
               {{"kernel", std::vector<int64_t>(r, 2)}, {"strides", std::vector<int64_t>(r, 2)}}, name("pool"))
          ->result();
  for (int b = 0; b < c.blocks; ++b) {
    ir::Value* y = unary(OpKind::Relu, conv(x, c.channels, 3));
    Shape bias_shape{c.channels};
    bias_shape.insert(bias_shape.end(), r, 1);  // [C, 1..]: broadcast from the right
    y = binary(OpKind::Add, y, resnet_like_constant(g, c.dtype, bias_shape, rng, 0.5, name("bias")));
    y = conv(y, c.channels, 1);
    if (c.squeeze_excite) {
      ir::Value* s = g.add_op(OpKind::ReduceMean, {y}, {{"axes", spatial_axes}, {"keepdims", true}}, name("mean"))
                         ->result();
      s = unary(OpKind::Relu, conv(s, 8, 1));
      s = unary(OpKind::Sigmoid, conv(s, c.channels, 1));
      y = binary(OpKind::Mul, y, s);
    }
    if (c.concat) {
      y = g.add_op(OpKind::Concat, {y, x}, {{"axis", int64_t(1)}}, name("concat"))->result();
      y = conv(y, c.channels, 1);
    }
    x = unary(OpKind::Relu, binary(OpKind::Add, y, x));
    if (b == 0) x = unary(OpKind::Clip, x, {{"min", -0.5}, {"max", 4.0}});
    if (b == 0 && c.block_output) g.add_output(x, "block0");
  }
  x = g.add_op(OpKind::AvgPool, {x}, {{"global", true}}, name("gap"))->result();
  x = g.add_op(OpKind::Reshape, {x}, {{"shape", std::vector<int64_t>{c.batch, c.channels}}}, name("flatten"))
          ->result();
  ir::Value* fc = resnet_like_constant(g, c.dtype, {c.channels, 10}, rng, 0.3, "fc");
  g.add_output(g.add_op(OpKind::Gemm, {x, fc}, {}, "classifier")->result(), "logits");
  return g;
}

}  // namespace vkc::test
