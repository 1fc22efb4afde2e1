// conv_integer / matmul_integer kernels: i32 results exact against the reference on seeded random
// 8-bit inputs over the full ranges (several shapes, groups, strides, pads, dilations, per-channel
// zero points, bias), through 8-bit storage and through packed words (vulkan-min); and the QDQ
// conv, rewritten by the compiler's pipeline, exact against the reference of the rewritten graph.
#include <random>

#include "ir/passes.h"
#include "kernels/op_test_helpers.h"

namespace vkc::test {
namespace {

using K = ir::OpKind;

// Full-range 8-bit values (random_inputs keeps to [-8, 8]); zero points too.
std::map<std::string, HostTensor> int8_inputs(const ir::Graph& g, uint32_t seed) {
  std::mt19937 rng(seed);
  std::map<std::string, HostTensor> in = random_inputs(g, seed);
  for (const ir::Value* v : g.inputs()) {
    DType t = v->type.dtype;
    if (t == DType::i8) in[v->name] = random_tensor(t, v->type.shape, rng, -128, 127);
    if (t == DType::u8) in[v->name] = random_tensor(t, v->type.shape, rng, 0, 255);
    if (t == DType::i32) in[v->name] = random_tensor(t, v->type.shape, rng, -100000, 100000);
  }
  return in;
}

// Packed access reads whole words; the runtime binds at least 4 bytes but does not round larger
// ranges up (as quant_test.cpp), so the packed path runs where sizes allow.
bool whole_words(const ir::Graph& g) {
  for (const ir::Value* v : g.inputs())
    if (v->type.numel() != 1 && v->type.size_bytes() % 4 != 0) return false;
  return true;
}

// The same op with its zero points (inputs x2, x3) as constants holding `inputs`' values: they
// are then written into the shader, which is what lets it fit the 4 storage buffers of vulkan-min.
ir::Graph with_constant_zero_points(const ir::Graph& g, std::map<std::string, HostTensor>& inputs) {
  const ir::Op& op = *g.ops().back();
  ir::Graph c;
  std::vector<ir::Value*> operands;
  for (int i = 0; i < op.num_operands(); ++i) {
    const ir::Value* v = op.operand(i);
    if (i == 2 || i == 3) {
      operands.push_back(c.add_constant(inputs.at(v->name)));
      inputs.erase(v->name);
    } else {
      operands.push_back(c.add_input(v->name, v->type));
    }
  }
  c.add_output(c.add_op(op.kind, operands, op.attrs, "under_test")->result(), "y");
  return c;
}

void expect_exact(const ir::Graph& g, const std::string& op, uint32_t seed) {
  auto inputs = int8_inputs(g, seed);
  expect_gpu_matches(g, inputs, op, "", "", 0.0);
  auto const_inputs = inputs;
  ir::Graph c = with_constant_zero_points(g, const_inputs);
  expect_gpu_matches(c, const_inputs, op, "", "", 0.0);
  if (whole_words(c)) expect_gpu_matches(c, const_inputs, op, "", "vulkan-min", 0.0);  // packed 8-bit words
  expect_compiles_everywhere(c);
}

TEST(IntegerProductLimits, TooManyBuffersIsAClearError) {
  // Zero points as run-time tensors: 6 storage buffers, vulkan-min allows 4.
  ir::Graph g = one_op_graph(K::ConvInteger, {{DType::u8, {1, 4, 8, 8}}, {DType::i8, {8, 4, 3, 3}}, {DType::u8, {}},
                                              {DType::i8, {8}}, {DType::i32, {8}}});
  codegen::CompileOptions o;
  o.target = find_target("vulkan-min").limits;
  EXPECT_PRED_FORMAT2(::testing::IsSubstring,
                      "conv_integer 'under_test': needs 6 storage buffers (zero points that are not constants "
                      "take one each), target 'vulkan-min' allows 4",
                      compile_error(g, o));
}

struct ConvCase {
  Shape x, w;
  ir::AttrMap attrs;
  DType xt, wt;
  bool per_channel, bias;
};

class ConvIntegerKernel : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvIntegerKernel, ExactAgainstReference) {
  const ConvCase& c = GetParam();
  std::vector<ir::TensorType> in{{c.xt, c.x}, {c.wt, c.w}, {c.xt, {}}, {c.wt, c.per_channel ? Shape{c.w[0]} : Shape{}}};
  if (c.bias) in.push_back({DType::i32, {c.w[0]}});
  expect_exact(one_op_graph(K::ConvInteger, in, c.attrs), "under_test", 31);
}

using V = std::vector<int64_t>;
INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvIntegerKernel,
    ::testing::Values(
        ConvCase{{1, 4, 8, 8}, {8, 4, 3, 3}, {{"pads", V{1, 1, 1, 1}}}, DType::u8, DType::i8, false, false},
        ConvCase{{2, 8, 9, 7}, {12, 8, 3, 3}, {{"pads", V{1, 0, 1, 2}}}, DType::i8, DType::i8, true, true},
        ConvCase{{1, 6, 10, 12}, {9, 2, 3, 3}, {{"groups", int64_t(3)}, {"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}},
                 DType::u8, DType::u8, true, false},
        ConvCase{{1, 4, 12, 12}, {4, 1, 3, 3}, {{"groups", int64_t(4)}, {"dilations", V{2, 2}}, {"pads", V{2, 2, 2, 2}}},
                 DType::u8, DType::i8, true, true},                                             // depthwise
        ConvCase{{1, 16, 5, 5}, {36, 16, 1, 1}, {}, DType::u8, DType::i8, false, true},          // 1x1, odd F
        ConvCase{{3, 4, 20}, {5, 4, 5}, {{"strides", V{3}}, {"pads", V{2, 2}}}, DType::i8, DType::i8, true, false},  // 1-D
        // The fused requantization (QDQ convs): per-channel scales, u8 and i8 results.
        ConvCase{{1, 8, 9, 9}, {12, 8, 3, 3},
                 {{"pads", V{1, 1, 1, 1}}, {"requantize_to", std::string("u8")},
                  {"requantize_scale", std::vector<double>{1e-3, 2e-3, 3e-3, 4e-4, 5e-3, 6e-4, 7e-3, 8e-4, 9e-3, 1e-2, 1.1e-3, 1.2e-2}},
                  {"requantize_zero_point", int64_t(117)}},
                 DType::u8, DType::i8, true, true},
        ConvCase{{2, 4, 7, 6}, {8, 4, 3, 3},
                 {{"requantize_to", std::string("i8")}, {"requantize_scale", std::vector<double>{0.0013}},
                  {"requantize_zero_point", int64_t(-3)}},
                 DType::u8, DType::i8, false, false}));

struct MatMulCase {
  Shape a, b;
  DType at, bt;
  bool per_column;
};

class MatMulIntegerKernel : public ::testing::TestWithParam<MatMulCase> {};

TEST_P(MatMulIntegerKernel, ExactAgainstReference) {
  const MatMulCase& c = GetParam();
  std::vector<ir::TensorType> in{{c.at, c.a}, {c.bt, c.b}, {c.at, {}}, {c.bt, c.per_column ? Shape{c.b.back()} : Shape{}}};
  expect_exact(one_op_graph(K::MatMulInteger, in), "under_test", 37);
  // The fused requantization, per column.
  std::vector<double> scales;
  for (int64_t j = 0; j < c.b.back(); ++j) scales.push_back(1e-3 * double(1 + j % 7));
  expect_exact(one_op_graph(K::MatMulInteger, in,
                            {{"requantize_to", std::string("u8")}, {"requantize_scale", scales},
                             {"requantize_zero_point", int64_t(128)}}),
               "under_test", 38);
}

INSTANTIATE_TEST_SUITE_P(Shapes, MatMulIntegerKernel,
                         ::testing::Values(MatMulCase{{16, 32}, {32, 8}, DType::u8, DType::i8, false},
                                           MatMulCase{{37, 29}, {29, 41}, DType::i8, DType::i8, true},
                                           MatMulCase{{2, 3, 12, 20}, {20, 16}, DType::u8, DType::u8, true},
                                           MatMulCase{{4, 1, 9, 8}, {3, 8, 4}, DType::i8, DType::u8, false},
                                           // 4096 per-column zero points and scales: a table, not shader arrays.
                                           MatMulCase{{5, 16}, {16, 4096}, DType::u8, DType::i8, true}));

// The QDQ conv as exporters write it: the compiler's pipeline rewrites it (conv_integer, then the
// requantization); the module must match the reference of that same rewritten graph exactly.
TEST(QdqConvKernel, RewrittenAndExact) {
  ir::Graph g;
  std::mt19937 rng(13);
  auto f32_scalar = [&](double v) {
    HostTensor t(DType::f32, Shape{});
    t.set_f64(0, v);
    return g.add_constant(t);
  };
  const int64_t F = 8;
  HostTensor w = random_tensor(DType::i8, {F, 4, 3, 3}, rng, -127, 127);
  HostTensor sw(DType::f32, {F}), wz(DType::i8, {F}), b = random_tensor(DType::i32, {F}, rng, -3000, 3000);
  HostTensor sb(DType::f32, {F}), bz(DType::i32, {F});
  for (int64_t i = 0; i < F; ++i) {
    sw.set_f64(i, 0.001 + 0.0007 * double(i));
    sb.set_f64(i, double(float(0.02) * float(sw.get_f64(i))));
  }
  HostTensor xz(DType::u8, {}), yz(DType::u8, {});
  xz.set_i64(0, 128);
  yz.set_i64(0, 7);
  ir::Value* x = g.add_input("x", {DType::u8, {1, 4, 10, 10}});
  ir::Value* xd = g.add_op(K::Dequantize, {x, f32_scalar(0.02), g.add_constant(xz)})->result();
  ir::Value* wd = g.add_op(K::Dequantize, {g.add_constant(w), g.add_constant(sw), g.add_constant(wz)}, {{"axis", int64_t(0)}})->result();
  ir::Value* bd = g.add_op(K::Dequantize, {g.add_constant(b), g.add_constant(sb), g.add_constant(bz)}, {{"axis", int64_t(0)}})->result();
  ir::Value* y = g.add_op(K::Conv, {xd, wd, bd}, {{"pads", V{1, 1, 1, 1}}})->result();
  ir::Value* yq = g.add_op(K::Quantize, {y, f32_scalar(0.05), g.add_constant(yz)}, {{"to", std::string("u8")}})->result();
  g.add_output(yq, "y");
  ir::PassManager pm;
  pm.add(ir::qdq_to_integer_pass());
  pm.run(g);
  bool integer = false;
  for (const ir::Op* op : g.ops()) integer |= op->kind == K::ConvInteger;
  ASSERT_TRUE(integer);
  auto inputs = int8_inputs(g, 41);
  GpuRunOptions o;
  o.rel_tol = 0;
  GpuRun run = run_on_gpu(g, inputs, o);
  EXPECT_TRUE(outputs_match(run, o));
  bool ran_integer = false;
  for (const DispatchDesc& d : run.module.manifest.dispatches) ran_integer |= d.kernel == "conv_integer";
  EXPECT_TRUE(ran_integer);
}

}  // namespace
}  // namespace vkc::test
