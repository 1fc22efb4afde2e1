#include "bench/bench_cases.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "ir/conv_geometry.h"
#include "support/error.h"
#include "ir/pass_manager.h"
#include "ir/passes.h"
#include "support/int_math.h"

namespace vkc::bench {
namespace {

using ir::AttrMap;
using ir::OpKind;
using Ints = std::vector<int64_t>;

// A conv or conv_transpose "x" * "w" (+ "b") -> "y". FLOPs come from the verified geometry so they
// count exactly the multiply-adds the op's semantics define (zero padding included, as PyTorch's
// FLOP counters do).
// `channels_last`: a 2-D conv with its input and output NHWC and its filter FHWC (x, w and y stored
// as PyTorch's channels_last tensors are), PyTorch's side run on those tensors as channels_last.
BenchCase conv_case(std::string name, OpKind kind, Shape x, Shape w, bool bias, int64_t groups,
                    Ints pads, Ints strides = {}, DType dtype = DType::f32, bool channels_last = false) {
  AttrMap attrs{{"pads", pads}, {"groups", groups}};
  if (!strides.empty()) attrs["strides"] = strides;
  if (channels_last) {
    check(x.size() == 4 && kind == OpKind::Conv, "bench: channels_last cases are 2-D forward convs");
    attrs["input_layout"] = std::string("NHWC");
    attrs["output_layout"] = std::string("NHWC");
    attrs["filter_layout"] = std::string("FHWC");
    x = {x[0], x[2], x[3], x[1]};
    w = {w[0], w[2], w[3], w[1]};
  }
  const size_t spatial = x.size() - 2;
  ir::Graph probe;
  ir::Op* op = probe.add_op(kind, {probe.add_input("x", {DType::f32, x}), probe.add_input("w", {DType::f32, w})}, attrs);
  ir::ConvGeometry geo = ir::conv_geometry(*op);
  const bool transposed = kind == OpKind::ConvTranspose;
  // Each input (transposed) or output (forward) position meets Cg (or Fg) * kernel taps.
  double taps = double(product(geo.kernel)) *
                double(transposed ? geo.out_channels_per_group() : geo.in_channels_per_group());
  double points = transposed ? double(geo.batch * geo.in_channels * product(geo.in_spatial))
                             : double(geo.batch * geo.out_channels * product(geo.out_spatial));
  BenchCase c;
  c.name = std::move(name);
  c.group = dtype == DType::f16 ? "conv_fp16" : "conv";
  if (dtype == DType::f16) c.forced = {{"conv", "implicit_gemm_coopmat"}};
  c.flops = 2.0 * taps * points;
  const int64_t channels = geo.out_channels;
  c.build = [=](ir::Graph& g) {
    std::vector<ir::Value*> operands{g.add_input("x", {dtype, x}), g.add_input("w", {dtype, w})};
    if (bias) operands.push_back(g.add_input("b", {dtype, {channels}}));
    g.add_output(g.add_op(kind, operands, attrs, "conv")->result(), "y");
  };
  // PyTorch takes one symmetric pad per spatial dim; every case here is symmetric.
  Ints torch_pad(pads.begin(), pads.begin() + long(spatial));
  c.torch = {{"op", transposed ? "conv_transpose" : "conv"}, {"dims", spatial}, {"padding", torch_pad},
             {"stride", strides.empty() ? Ints(spatial, 1) : strides}, {"groups", groups}, {"bias", bias},
             {"dtype", std::string(dtype_name(dtype))}};
  if (channels_last) c.torch["layout"] = "channels_last";
  return c;
}

BenchCase im2col_case(Shape x, Ints kernel, Ints pads) {
  BenchCase c;
  c.name = "im2col_" + shape_str(x) + "_k3";
  c.group = "im2col";
  c.build = [=](ir::Graph& g) {
    ir::Value* in = g.add_input("x", {DType::f32, x});
    g.add_output(g.add_op(OpKind::Im2Col, {in}, {{"kernel", kernel}, {"pads", pads}}, "im2col")->result(), "y");
  };
  c.torch = {{"op", "im2col"}, {"kernel", kernel}, {"padding", Ints(pads.begin(), pads.begin() + 2)}};
  return c;
}

// n^3; float16 on tensor cores, `coop_tile` ("TMxTNxTK/WMxWN[/sSTAGES]") forcing one tile of that loop
// to measure tiles against each other in one run (named ..._c<tile> with '/' as '-').
BenchCase matmul_case(int64_t n, DType dtype = DType::f32, const std::string& coop_tile = "") {
  BenchCase c;
  std::string suffix = coop_tile;
  std::replace(suffix.begin(), suffix.end(), '/', '-');
  c.name = "matmul_" + std::to_string(n) + "^3" + (dtype == DType::f16 ? "_fp16" : "") +
           (coop_tile.empty() ? "" : "_c" + suffix);
  c.group = dtype == DType::f16 ? "matmul_fp16" : "matmul";
  if (dtype == DType::f16) c.forced = {{"matmul", coop_tile.empty() ? "coopmat" : "coopmat=" + coop_tile}};
  c.flops = 2.0 * double(n) * double(n) * double(n);
  c.build = [=](ir::Graph& g) {
    ir::Value* a = g.add_input("a", {dtype, {n, n}});
    ir::Value* b = g.add_input("b", {dtype, {n, n}});
    g.add_output(g.add_op(OpKind::MatMul, {a, b}, {}, "matmul")->result(), "y");
  };
  c.torch = {{"op", "matmul"}, {"dtype", std::string(dtype_name(dtype))}};
  return c;
}

// An M x K by K x N product; `tile` ("TMxTNxTK/RMxRN/STAGES") forces one FMA tile, to measure the
// planner's candidates against each other in one run (named ..._t<tile> with '/' as '-').
}  // namespace

BenchCase conv_shape_case(const Shape& x, const Shape& w, DType dtype) {
  check(x.size() == 4 && w.size() == 4 && x[1] == w[1], "bench: conv_shape_case takes NxCxHxW and FxCxKHxKW, not ",
        shape_str(x), " and ", shape_str(w));
  const Ints pads{w[2] / 2, w[3] / 2, w[2] / 2, w[3] / 2};
  return conv_case(cat("conv_", shape_str(x), "_", shape_str(w), dtype == DType::f16 ? "_fp16" : ""), OpKind::Conv, x,
                   w, false, 1, pads, {}, dtype);
}

BenchCase matmul_mnk_case(int64_t m, int64_t n, int64_t k, const std::string& tile, MatmulExtras extras) {
  BenchCase c;
  std::string suffix = tile;
  std::replace(suffix.begin(), suffix.end(), '/', '-');
  c.name = cat("matmul_", m, "x", n, "x", k, extras.layer_norm ? "_ln" : "", extras.gelu ? "_gelu" : "",
               tile.empty() ? "" : "_t" + suffix);
  c.group = "matmul_tiles";
  if (!tile.empty()) c.forced = {{"matmul", "tiled=" + tile}};
  c.flops = 2.0 * double(m) * double(n) * double(k);
  c.build = [=](ir::Graph& g) {
    ir::Value* a = g.add_input("a", {DType::f32, {m, k}});
    if (extras.layer_norm)  // its own dispatch in front, as in a pre-LN transformer block
      a = g.add_op(OpKind::LayerNorm, {a, g.add_input("ln_scale", {DType::f32, {k}}), g.add_input("ln_bias", {DType::f32, {k}})})
              ->result();
    ir::Value* b = g.add_input("b", {DType::f32, {k, n}});
    ir::Value* y = g.add_op(OpKind::MatMul, {a, b}, {}, "matmul")->result();
    if (extras.gelu) {
      // A transformer's first MLP product as PyTorch exports it: bias, then GELU's erf form
      // x * (1 + erf(x / sqrt(2))) * 0.5, all fused into the product's epilogue.
      auto scalar = [&](double v) {
        HostTensor t(DType::f32, {1});
        t.set_f64(0, v);
        return g.add_constant(std::move(t));
      };
      ir::Value* h = g.add_op(OpKind::Add, {y, g.add_input("bias", {DType::f32, {n}})})->result();
      ir::Value* e = g.add_op(OpKind::Erf, {g.add_op(OpKind::Div, {h, scalar(std::sqrt(2.0))})->result()})->result();
      ir::Value* one_plus = g.add_op(OpKind::Add, {e, scalar(1.0)})->result();
      y = g.add_op(OpKind::Mul, {g.add_op(OpKind::Mul, {h, one_plus})->result(), scalar(0.5)})->result();
    }
    g.add_output(y, "y");
  };
  c.torch = {{"op", "matmul"}, {"dtype", "f32"}, {"layer_norm", extras.layer_norm}, {"gelu", extras.gelu}};
  return c;
}

// A float16 matmul whose lhs comes through a fused prologue: GELU in front (a transformer's second
// MLP product as the fp16 precision mode leaves it) and, with `transposed`, the lhs read through a
// transpose of its two leading dims (ViT's sequence-first projections). `strategy` forces the
// contraction's ("tiled": the FMA loop) to compare with the planner's tensor-core choice.
BenchCase prologue_matmul_case(int64_t b, int64_t s, int64_t n, int64_t k, bool transposed, const std::string& strategy) {
  BenchCase c;
  c.name = cat("matmul_", b, "x", s, "x", n, "x", k, transposed ? "_transposed" : "", "_gelu_fp16",
               strategy.empty() ? "" : "_" + strategy);
  c.group = "matmul_fp16";
  if (!strategy.empty()) c.forced = {{"matmul", strategy}};
  c.flops = 2.0 * double(b * s) * double(n) * double(k);
  c.build = [=](ir::Graph& g) {
    ir::Value* a = g.add_input("a", {DType::f16, transposed ? Shape{s, b, k} : Shape{b, s, k}});
    ir::Value* w = g.add_input("b", {DType::f16, {k, n}});
    if (transposed) a = g.add_op(OpKind::Transpose, {a}, {{"perm", Ints{1, 0, 2}}})->result();
    ir::Value* x = g.add_op(OpKind::Gelu, {a})->result();
    g.add_output(g.add_op(OpKind::MatMul, {x, w}, {}, "matmul")->result(), "y");
  };
  c.torch = {{"op", "gelu_matmul"}, {"dtype", "f16"}, {"transposed", transposed}};
  return c;
}

namespace {

// Indices are i64 because torch.topk returns int64: both sides write the same bytes.
BenchCase topk_case(Shape x, int64_t k) {
  BenchCase c;
  c.name = "topk_" + shape_str(x) + "_k" + std::to_string(k);
  c.group = "topk";
  c.build = [=](ir::Graph& g) {
    ir::Value* in = g.add_input("x", {DType::f32, x});
    ir::Op* op = g.add_op(OpKind::TopK, {in}, {{"k", k}, {"axis", int64_t(-1)}, {"index_type", std::string("i64")}}, "topk");
    g.add_output(op->result(0), "values");
    g.add_output(op->result(1), "indices");
  };
  c.torch = {{"op", "topk"}, {"k", k}};
  return c;
}

// torch.sort returns values and indices; vkc's sort gets the indices as an i32 payload that starts
// as 0..n-1 (the iota input) and is permuted with the keys.
BenchCase sort_case(Shape x) {
  BenchCase c;
  c.name = "sort_" + shape_str(x);
  c.group = "sort";
  c.iota_inputs = {"pos"};
  c.build = [=](ir::Graph& g) {
    ir::Value* keys = g.add_input("x", {DType::f32, x});
    ir::Value* pos = g.add_input("pos", {DType::i32, x});
    ir::Op* op = g.add_op(OpKind::Sort, {keys, pos}, {{"axis", int64_t(-1)}}, "sort");
    g.add_output(op->result(0), "sorted");
    g.add_output(op->result(1), "order");
  };
  c.torch = {{"op", "sort"}};
  return c;
}

// Global average pooling (squeeze-excite blocks, classifier heads): pure bandwidth, so its target
// is a fraction of the copy bandwidth (issue 21).
// `strategy` forces the pooling kernel ("direct": the one used before the workgroup strategy).
BenchCase global_avg_pool_case(Shape x, const std::string& strategy = "") {
  BenchCase c;
  c.name = "global_avg_pool_" + shape_str(x) + (strategy.empty() ? "" : "_" + strategy);
  if (!strategy.empty()) c.forced = {{"avg_pool", strategy}};
  c.group = "pool";
  c.build = [=](ir::Graph& g) {
    g.add_output(g.add_op(OpKind::AvgPool, {g.add_input("x", {DType::f32, x})}, {{"global", true}}, "gap")->result(),
                 "y");
  };
  c.flops = double(product(x));
  c.torch = {{"op", "global_avg_pool"}};
  return c;
}

// Elementwise relu over a flat tensor: bandwidth only. With `max_binding_bytes` it runs split
// over buffer ranges (issue 25: the split must cost <= 5% against the unsplit case).
BenchCase relu_case(int64_t n, uint64_t max_binding_bytes = 0, const std::string& suffix = "") {
  BenchCase c;
  c.name = "relu_" + std::to_string(n) + suffix;
  c.group = "split";
  c.build = [=](ir::Graph& g) {
    g.add_output(g.add_op(OpKind::Relu, {g.add_input("x", {DType::f32, {n}})}, {}, "relu")->result(), "y");
  };
  c.torch = {{"op", "relu"}};
  c.max_binding_bytes = max_binding_bytes;
  return c;
}

// Attention as BERT exports it (matmul, divide by sqrt(d), softmax, matmul): the fuse-attention
// pass makes it one kernel; `tiles` forces its tiling (BQxBK, or coopmat=BQxBK for the tensor-core
// kernel) to compare tilings in one run. Against torch's scaled_dot_product_attention (issue 23:
// faster than SDPA fp32 at 1x12x1024x64). float16 (a float16 model): the tensor-core kernel,
// against SDPA fp16 (flash attention).
BenchCase attention_case(int64_t heads, int64_t seq, int64_t d, const std::string& tiles = "", int64_t batch = 1,
                         DType dtype = DType::f32) {
  BenchCase c;
  const std::string tag = tiles.rfind("coopmat=", 0) == 0 ? "c" + tiles.substr(8) : tiles;
  c.name = "attention_" + std::to_string(batch) + "x" + std::to_string(heads) + "x" + std::to_string(seq) + "x" + std::to_string(d) +
           (dtype == DType::f16 ? "_fp16" : "") + (tiles.empty() ? "" : "_" + tag);
  c.group = dtype == DType::f16 ? "attention_fp16" : "attention";
  if (!tiles.empty()) c.forced = {{"attention", tiles}};
  c.flops = 4.0 * double(batch) * double(heads) * double(seq) * double(seq) * double(d);
  c.build = [=](ir::Graph& g) {
    ir::Value* q = g.add_input("q", {dtype, {batch, heads, seq, d}});
    ir::Value* k = g.add_input("k", {dtype, {batch, heads, seq, d}});
    ir::Value* v = g.add_input("v", {dtype, {batch, heads, seq, d}});
    ir::Value* kt = g.add_op(OpKind::Transpose, {k}, {{"perm", Ints{0, 1, 3, 2}}})->result();
    HostTensor root(dtype, {1});
    root.set_f64(0, std::sqrt(double(d)));
    ir::Value* s = g.add_op(OpKind::Div, {g.add_op(OpKind::MatMul, {q, kt})->result(), g.add_constant(root)})->result();
    ir::Value* p = g.add_op(OpKind::Softmax, {s}, {{"axis", int64_t(-1)}}, "softmax")->result();
    g.add_output(g.add_op(OpKind::MatMul, {p, v})->result(), "y");
  };
  c.torch = {{"op", "sdpa"}, {"dtype", std::string(dtype_name(dtype))}};
  return c;
}

// The QDQ cases' common end: the float result quantized to u8 (scale 0.5, zero point 120) as the
// graph output, then the qdq-to-integer rewrite the compiler runs, so the harness's reference is
// the integer form.
void quantize_output_and_rewrite(ir::Graph& g, ir::Value* y) {
  auto scalar = [&](DType t, double v) {
    HostTensor s(t, Shape{});
    s.set_f64(0, v);
    return g.add_constant(std::move(s));
  };
  g.add_output(g.add_op(OpKind::Quantize, {y, scalar(DType::f32, 0.5), scalar(DType::u8, 120)},
                        {{"to", std::string("u8")}})->result(), "y");
  ir::PassManager pm;
  pm.add(ir::qdq_to_integer_pass());
  pm.run(g);
}

// The int8 QDQ conv (issue 22 item 5): quantize(conv(dequantize(x_u8), dequantize(w_i8))) with
// per-channel symmetric weights, as ONNX Runtime's quantizer writes it. The QDQ pass is applied
// here already, so the harness's reference is the integer form the kernels run (exact i32 sums and
// ORT's requantization) and the u8 result must match it bit for bit. Compare its time with the fp16
// conv of the same shape (`_fp16`); PyTorch has no counterpart here.
// `strategy` forces the conv_integer kernel ("simt", "coopmat=TMxTNxTK"; docs/int8.md).
BenchCase qdq_conv_case(std::string name, Shape x, Shape w, Ints pads, const std::string& strategy = "") {
  BenchCase c = conv_case(std::move(name), OpKind::Conv, x, w, false, 1, pads);
  c.group = "conv_int8";
  if (!strategy.empty()) c.forced = {{"conv_integer", strategy}};
  c.torch = {{"op", "qdq_conv_int8"}};
  c.build = [=](ir::Graph& g) {
    const int64_t f = w[0];
    auto scalar = [&](DType t, double v) {
      HostTensor s(t, Shape{});
      s.set_f64(0, v);
      return g.add_constant(std::move(s));
    };
    HostTensor wq(DType::i8, w), ws(DType::f32, {f}), wz(DType::i8, {f});
    for (int64_t i = 0; i < wq.numel(); ++i) wq.set_i64(i, int64_t((i * 2654435761u) % 255u) - 127);
    for (int64_t i = 0; i < f; ++i) ws.set_f64(i, 0.002 + 0.00001 * double(i));
    ir::Value* xd = g.add_op(OpKind::Dequantize, {g.add_input("x", {DType::u8, x}), scalar(DType::f32, 0.02),
                                                  scalar(DType::u8, 128)})->result();
    ir::Value* wd = g.add_op(OpKind::Dequantize, {g.add_constant(std::move(wq)), g.add_constant(std::move(ws)),
                                                  g.add_constant(std::move(wz))}, {{"axis", int64_t(0)}})->result();
    ir::Value* y = g.add_op(OpKind::Conv, {xd, wd}, {{"pads", pads}}, "conv")->result();
    quantize_output_and_rewrite(g, y);
  };
  return c;
}

// The n^3 matmul in QDQ form (u8 lhs, constant per-column i8 rhs, u8 result): matmul_integer with
// the requantization fused (docs/int8.md); compared with matmul_n^3_fp16.
// `per_column`: per-column weight scales (else one per tensor); `strategy` forces the kernel.
BenchCase qdq_matmul_case(int64_t m, int64_t n, int64_t k, bool per_column, const std::string& strategy = "") {
  BenchCase c;
  c.name = (m == n && n == k ? "matmul_" + std::to_string(n) + "^3"
                             : "matmul_" + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k)) +
           "_int8_qdq" + (per_column ? "" : "_per_tensor") + (strategy.empty() ? "" : "_" + strategy);
  c.group = "matmul_int8";
  c.flops = 2.0 * double(m) * double(n) * double(k);
  c.torch = {{"op", "qdq_matmul_int8"}};
  if (!strategy.empty()) c.forced = {{"matmul_integer", strategy}};
  c.build = [=](ir::Graph& g) {
    auto scalar = [&](DType t, double v) {
      HostTensor s(t, Shape{});
      s.set_f64(0, v);
      return g.add_constant(std::move(s));
    };
    const int64_t scales = per_column ? n : 1;
    HostTensor bq(DType::i8, {k, n}), bs(DType::f32, {scales}), bz(DType::i8, {scales});
    for (int64_t i = 0; i < bq.numel(); ++i) bq.set_i64(i, int64_t((i * 2654435761u) % 255u) - 127);
    for (int64_t i = 0; i < scales; ++i) bs.set_f64(i, 0.0002 + 0.000001 * double(i % 100));
    if (!per_column) {
      bs = HostTensor(DType::f32, Shape{});
      bs.set_f64(0, 0.0002);
      bz = HostTensor(DType::i8, Shape{});
    }
    ir::Value* ad = g.add_op(OpKind::Dequantize, {g.add_input("a", {DType::u8, {m, k}}), scalar(DType::f32, 0.02),
                                                  scalar(DType::u8, 128)})->result();
    ir::AttrMap axis;
    if (per_column) axis["axis"] = int64_t(1);
    ir::Value* bd = g.add_op(OpKind::Dequantize, {g.add_constant(std::move(bq)), g.add_constant(std::move(bs)),
                                                  g.add_constant(std::move(bz))}, axis)->result();
    ir::Value* y = g.add_op(OpKind::MatMul, {ad, bd}, {}, "matmul")->result();
    quantize_output_and_rewrite(g, y);
  };
  return c;
}

}  // namespace

std::vector<BenchCase> make_cases(bool small) {
  const OpKind conv = OpKind::Conv, convt = OpKind::ConvTranspose;
  const Ints p1{1, 1, 1, 1}, p0{0, 0, 0, 0};
  std::vector<BenchCase> cases;
  auto s = [small](Shape big, Shape tiny) { return small ? tiny : big; };
  auto n = [small](int64_t big, int64_t tiny) { return small ? tiny : big; };
  cases.push_back(conv_case("conv_1x64x512x512_f256_k3", conv, s({1, 64, 512, 512}, {1, 8, 32, 32}),
                            s({256, 64, 3, 3}, {16, 8, 3, 3}), false, 1, p1));
  // The same conv planned for a 2^27-byte maxStorageBufferRange: two pieces of 128 output channels.
  cases.push_back(conv_case("conv_1x64x512x512_f256_k3", conv, s({1, 64, 512, 512}, {1, 8, 32, 32}),
                            s({256, 64, 3, 3}, {16, 8, 3, 3}), false, 1, p1));
  cases.back().name += "_range128M";
  cases.back().group = "split";
  cases.back().max_binding_bytes = small ? 32768 : uint64_t(1) << 27;
  // 1 GiB each way, whole and in 8 pieces of 128 MiB; and 4.8 GB each way, beyond the 4 GiB a
  // binding can reach on any device (issue 25's "a tensor above 4 GiB").
  cases.push_back(relu_case(n(int64_t(1) << 28, 1 << 14)));
  cases.push_back(relu_case(n(int64_t(1) << 28, 1 << 14), small ? 8192 : uint64_t(1) << 27, "_range128M"));
  cases.push_back(relu_case(n(1200000000, 1 << 15)));
  // A conv with a 6 GiB result (issue 25's other example): pieces of batch images within one
  // allocation, the result held in segments.
  cases.push_back(conv_case("conv_6x64x1024x1024_f256_k3", conv, s({6, 64, 1024, 1024}, {2, 8, 32, 32}),
                            s({256, 64, 3, 3}, {16, 8, 3, 3}), false, 1, p1));
  cases.back().group = "split";
  cases.push_back(conv_case("conv_resnet3x3_8x256x56x56", conv, s({8, 256, 56, 56}, {2, 16, 14, 14}),
                            s({256, 256, 3, 3}, {16, 16, 3, 3}), false, 1, p1));
  cases.push_back(conv_case("conv_1x1_8x256x56x56_f64", conv, s({8, 256, 56, 56}, {2, 16, 14, 14}),
                            s({64, 256, 1, 1}, {8, 16, 1, 1}), false, 1, p0));
  cases.push_back(conv_case("conv_depthwise_8x144x56x56", conv, s({8, 144, 56, 56}, {2, 8, 14, 14}),
                            s({144, 1, 3, 3}, {8, 1, 3, 3}), false, n(144, 8), p1));
  // ggml-vulkan's depthwise figure (issue 9) is for this size: 256 MiB each way, so it measures
  // bandwidth, where the 8x144x56x56 case (14 MiB each way, inside the L2) mostly measures launch.
  cases.push_back(conv_case("conv_depthwise_1x256x512x512", conv, s({1, 256, 512, 512}, {1, 8, 32, 32}),
                            s({256, 1, 3, 3}, {8, 1, 3, 3}), false, n(256, 8), p1));
  cases.push_back(conv_case("conv_grouped32_1x256x128x128", conv, s({1, 256, 128, 128}, {1, 64, 16, 16}),
                            s({256, 8, 3, 3}, {64, 2, 3, 3}), false, 32, p1));
  cases.push_back(conv_case("conv3d_1x1x32^3_f16_k9x9x1_bias", conv, s({1, 1, 32, 32, 32}, {1, 1, 8, 8, 8}),
                            s({16, 1, 9, 9, 1}, {4, 1, 3, 3, 1}), true, 1,
                            small ? Ints{1, 1, 0, 1, 1, 0} : Ints{4, 4, 0, 4, 4, 0}));
  cases.push_back(conv_case("conv_transpose_up2x_1x64x128x128_k4", convt, s({1, 64, 128, 128}, {1, 8, 16, 16}),
                            s({64, 64, 4, 4}, {8, 8, 4, 4}), false, 1, p1, {2, 2}));
  cases.push_back(im2col_case(s({1, 64, 256, 256}, {1, 4, 16, 16}), {3, 3}, p1));
  cases.push_back(matmul_case(n(4096, 64)));
  // Transformer shapes (ViT-B/16 at batch 8 and 1, BERT-base at batch 1: fc2, fc1, the projections),
  // the planner's tile and candidate FMA tiles and K splits forced, to choose them by measurement.
  for (auto [m, nn, k] : {std::tuple<int64_t, int64_t, int64_t>{1576, 768, 3072}, {1576, 3072, 768},
                          {1576, 768, 768}, {197, 768, 3072}, {128, 768, 3072}, {128, 2304, 768}, {128, 768, 768}})
    for (const char* tile : {"", "64x64x16/4x4/1", "128x64x16/8x8/2/k4", "64x64x16/8x4/2/k8"})
      cases.push_back(matmul_mnk_case(n(m, 64), n(nn, 64), n(k, 64), tile));
  for (const char* tiles : {"", "64x32", "48x32", "64x16", "32x32", "32x16", "16x16"})
    cases.push_back(attention_case(n(12, 2), n(1024, 64), 64, tiles));
  cases.push_back(attention_case(n(12, 2), n(128, 32), 64));
  // ViT-B/16's attention at batch 8 (197 tokens: a partial last tile).
  for (const char* tiles : {"", "64x32", "32x32", "32x16"})
    cases.push_back(attention_case(n(12, 2), n(197, 37), 64, tiles, n(8, 2)));
  // float16 matmuls through a fused prologue (ViT-B/16 batch 8's second MLP product and its
  // sequence-first projection), the planner's choice against the FMA loop.
  for (const char* strategy : {"", "tiled"}) {
    cases.push_back(prologue_matmul_case(n(8, 2), n(197, 37), n(768, 64), n(3072, 128), false, strategy));
    cases.push_back(prologue_matmul_case(n(8, 2), n(197, 37), n(2304, 64), n(768, 64), true, strategy));
  }
  // float16 attention on tensor cores (the planner's tile, then candidate tiles forced).
  for (const char* tiles : {"", "coopmat=64x64", "coopmat=64x32", "coopmat=32x64", "coopmat=32x32", "64x32"})
    cases.push_back(attention_case(n(12, 2), n(1024, 64), 64, tiles, 1, DType::f16));
  for (const char* tiles : {"", "coopmat=64x64", "coopmat=32x64", "coopmat=32x32"})
    cases.push_back(attention_case(n(12, 2), n(197, 37), 64, tiles, n(8, 2), DType::f16));
  // float16 on tensor cores (issue 9; forced, so that a planner change cannot move them off): the
  // two large convs and the matmul again, and the two CONV_2D shapes ggml-vulkan's figures are for
  // ([W,H,C,N] there: 19x19x256x16 * 4x4x256x4096, 1536x1536x32 * 3x3x32x64). Compared with
  // PyTorch fp16 and with vkc's own fp32 rows.
  const DType h = DType::f16;
  cases.push_back(conv_case("conv_1x64x512x512_f256_k3_fp16", conv, s({1, 64, 512, 512}, {1, 8, 32, 32}),
                            s({256, 64, 3, 3}, {16, 8, 3, 3}), false, 1, p1, {}, h));
  // The same conv as PyTorch's channels_last tensors hold it (issue 22's comparison): NHWC in and
  // out, filter FHWC, PyTorch fp16 on channels_last tensors.
  cases.push_back(conv_case("conv_1x64x512x512_f256_k3_nhwc_fp16", conv, s({1, 64, 512, 512}, {1, 8, 32, 32}),
                            s({256, 64, 3, 3}, {16, 8, 3, 3}), false, 1, p1, {}, h, true));
  cases.push_back(qdq_conv_case("conv_1x64x512x512_f256_k3_int8_qdq", s({1, 64, 512, 512}, {1, 8, 32, 32}),
                                s({256, 64, 3, 3}, {16, 8, 3, 3}), p1));
  // The same on the SIMT kernel, and int8 tensor-core tiles forced, to choose them by measurement.
  for (const char* strategy : {"simt", "coopmat=64x64x128", "coopmat=128x128x128"}) {
    std::string suffix = std::string(strategy) == "simt" ? "simt" : std::string(strategy).substr(8);
    cases.push_back(qdq_conv_case("conv_1x64x512x512_f256_k3_int8_qdq_" + suffix, s({1, 64, 512, 512}, {1, 16, 32, 32}),
                                  s({256, 64, 3, 3}, {16, 16, 3, 3}), p1, strategy));
  }
  cases.push_back(conv_case("conv_resnet3x3_8x256x56x56_fp16", conv, s({8, 256, 56, 56}, {2, 16, 14, 14}),
                            s({256, 256, 3, 3}, {16, 16, 3, 3}), false, 1, p1, {}, h));
  cases.push_back(conv_case("conv_ggml_16x256x19x19_f4096_k4_fp16", conv, s({16, 256, 19, 19}, {2, 16, 7, 7}),
                            s({4096, 256, 4, 4}, {32, 16, 4, 4}), false, 1, p0, {}, h));
  cases.push_back(conv_case("conv_ggml_1x32x1536x1536_f64_k3_fp16", conv, s({1, 32, 1536, 1536}, {1, 8, 40, 40}),
                            s({64, 32, 3, 3}, {16, 8, 3, 3}), false, 1, p1, {}, h));
  // ResNet's stem at batch 32 in float16 (3 input channels: no 16-byte staging): on tensor cores
  // with one-element staging (forced), and as planned.
  const Ints p3{3, 3, 3, 3}, s2{2, 2};
  cases.push_back(conv_case("conv_stem_32x3x224x224_f64_k7s2_fp16", conv, s({32, 3, 224, 224}, {2, 3, 32, 32}),
                            s({64, 3, 7, 7}, {16, 3, 7, 7}), true, 1, p3, s2, h));
  cases.push_back(conv_case("conv_stem_32x3x224x224_f64_k7s2_fp16_planned", conv, s({32, 3, 224, 224}, {2, 3, 32, 32}),
                            s({64, 3, 7, 7}, {16, 3, 7, 7}), true, 1, p3, s2, h));
  cases.back().forced.clear();
  cases.push_back(matmul_case(n(4096, 64), h));
  // Tensor-core tiles forced, to choose them by measurement: the subgroups' share of the tile
  // (64 x 32 on 2 x 4 of 128 x 128, 64 x 64 on 2 x 2 of it or on 1 x 4 of 64 x 256), K slices, one
  // or two copies of the operand tiles (/s2). RESULTS.md, session 20, has the wider sweep.
  for (const char* tile : {"128x128x64/2x4", "128x128x32/2x2/s2", "128x128x64/2x2", "128x128x32/2x4/s2", "64x256x32/1x4/s2",
                           "64x256x64/1x4", "128x64x32/2x1/s2", "64x128x32/1x2/s2"})
    cases.push_back(matmul_case(n(4096, 64), h, tile));
  // The same products in QDQ form on int8 tensor cores: per-tensor weight scales at 4096^3, and
  // per-column scales with 1024 columns (a larger per-column table stays on the SIMT kernel:
  // docs/int8.md), and 4096 columns on the SIMT kernel.
  cases.push_back(qdq_matmul_case(n(4096, 64), n(4096, 64), n(4096, 64), false));
  cases.push_back(qdq_matmul_case(n(4096, 64), n(1024, 64), n(4096, 64), true));
  cases.push_back(qdq_matmul_case(n(4096, 64), n(4096, 64), n(4096, 64), true, "simt"));
  cases.push_back(topk_case({n(131072, 1000)}, 4));
  cases.push_back(topk_case({n(1 << 20, 2048)}, n(64, 16)));
  cases.push_back(topk_case({n(1 << 24, 8192)}, 8));
  cases.push_back(topk_case(s({4096, 32768}, {4, 2048}), n(1024, 64)));
  cases.push_back(sort_case({n(1 << 24, 5000)}));
  cases.push_back(sort_case(s({4096, 4096}, {8, 512})));
  // efficientnet_b0 at batch 32: its first squeeze-excite block (112x112) and its last (7x7).
  cases.push_back(global_avg_pool_case(s({32, 32, 112, 112}, {2, 4, 16, 16})));
  cases.push_back(global_avg_pool_case(s({32, 32, 112, 112}, {2, 4, 16, 16}), "direct"));
  cases.push_back(global_avg_pool_case(s({32, 1152, 7, 7}, {2, 8, 7, 7})));
  return cases;
}

}  // namespace vkc::bench
