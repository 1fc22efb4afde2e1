// Seeded random mobilenet-like and efficientnet-like graphs (inverted residual blocks) for the
// channels-last pass (ir/passes/channels_last.cpp) and the plans that follow from it: a stride-2
// stem conv on the graph input, blocks of 1x1 expand conv, depthwise conv (3x3 or 5x5, stride 1
// or 2), optional squeeze-excite (global average pool, 1x1 conv, relu, 1x1 conv, hardsigmoid or
// sigmoid, mul) and 1x1 project conv with a residual add where shapes allow, then a 1x1 head conv,
// global average pooling, a reshape to [N, C] and a gemm classifier. Mobilenet-like: relu6 and
// hardswish, hardsigmoid in squeeze-excite; efficientnet-like: silu (x * sigmoid(x)) and sigmoid.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "common/resnet_like_graph.h"
#include "ir/graph.h"

namespace vkc::test {

struct InvertedResidual {
  int64_t expand = 1, kernel = 3, stride = 1, out = 16;
  bool squeeze_excite = false;
};

struct MobilenetLikeShape {
  int64_t batch = 1, in_channels = 3, size = 32, stem = 16, head = 64;
  bool efficientnet = false;  // silu and sigmoid instead of relu6 / hardswish and hardsigmoid
  std::vector<InvertedResidual> blocks{{1, 3, 1, 16, true},  {4, 3, 2, 24, false}, {3, 3, 1, 24, false},
                                       {3, 5, 2, 40, true},  {3, 5, 1, 40, true},  {6, 3, 1, 48, true}};
};

inline ir::Graph mobilenet_like_graph(const MobilenetLikeShape& c, std::mt19937& rng, DType dtype = DType::f32) {
  using ir::OpKind;
  ir::Graph g;
  ir::Value* x = g.add_input("x", {dtype, {c.batch, c.in_channels, c.size, c.size}});
  int n = 0;
  auto name = [&](const std::string& what) { return what + std::to_string(n++); };
  auto scalar = [&](double v) {
    HostTensor h(dtype, Shape{});
    h.set_f64(0, v);
    return g.add_op(OpKind::Constant, {}, {{"value", std::make_shared<const HostTensor>(std::move(h))}}, name("k"))
        ->result();
  };
  auto conv = [&](ir::Value* v, int64_t out, int64_t k, int64_t stride, int64_t groups) {
    const int64_t cin = v->type.shape[1];
    ir::Value* w = resnet_like_constant(g, dtype, {out, cin / groups, k, k}, rng, 1.5 / double(cin / groups * k), name("w"));
    ir::Value* b = resnet_like_constant(g, dtype, {out}, rng, 0.1, name("b"));
    ir::AttrMap attrs{{"pads", std::vector<int64_t>(4, k / 2)},
                      {"strides", std::vector<int64_t>{stride, stride}},
                      {"groups", groups}};
    return g.add_op(OpKind::Conv, {v, w, b}, attrs, name("conv"))->result();
  };
  auto op = [&](OpKind k, std::vector<ir::Value*> v, ir::AttrMap attrs = {}) {
    return g.add_op(k, std::move(v), std::move(attrs), name("op"))->result();
  };
  // relu6 / silu in the blocks, hardswish / silu at the stem and head.
  auto act = [&](ir::Value* v, bool hard) {
    if (c.efficientnet) return op(OpKind::Mul, {v, op(OpKind::Sigmoid, {v})});
    if (hard) return op(OpKind::HardSwish, {v});
    return op(OpKind::Clip, {v}, {{"min", 0.0}, {"max", 6.0}});
  };
  auto gate = [&](ir::Value* v) {
    if (c.efficientnet) return op(OpKind::Sigmoid, {v});
    // hardsigmoid as the ONNX importer writes it: clip(x / 6 + 0.5, 0, 1)
    ir::Value* y = op(OpKind::Add, {op(OpKind::Mul, {v, scalar(1.0 / 6)}), scalar(0.5)});
    return op(OpKind::Clip, {y}, {{"min", 0.0}, {"max", 1.0}});
  };

  x = act(conv(x, c.stem, 3, 2, 1), true);
  for (const InvertedResidual& b : c.blocks) {
    const int64_t cin = x->type.shape[1], hidden = cin * b.expand;
    ir::Value* y = x;
    if (b.expand != 1) y = act(conv(y, hidden, 1, 1, 1), false);
    y = act(conv(y, hidden, b.kernel, b.stride, hidden), false);
    if (b.squeeze_excite) {
      ir::Value* s = g.add_op(OpKind::AvgPool, {y}, {{"global", true}}, name("gap"))->result();
      s = op(OpKind::Relu, {conv(s, std::max<int64_t>(8, hidden / 4 / 8 * 8), 1, 1, 1)});
      y = op(OpKind::Mul, {y, gate(conv(s, hidden, 1, 1, 1))});
    }
    y = conv(y, b.out, 1, 1, 1);
    if (b.stride == 1 && b.out == cin) y = op(OpKind::Add, {y, x});
    x = y;
  }
  x = act(conv(x, c.head, 1, 1, 1), true);
  x = g.add_op(OpKind::AvgPool, {x}, {{"global", true}}, name("gap"))->result();
  x = g.add_op(OpKind::Reshape, {x}, {{"shape", std::vector<int64_t>{c.batch, c.head}}}, name("flatten"))->result();
  ir::Value* fc = resnet_like_constant(g, dtype, {c.head, 10}, rng, 0.3, "fc");
  g.add_output(g.add_op(OpKind::Gemm, {x, fc}, {}, "classifier")->result(), "logits");
  return g;
}

}  // namespace vkc::test
