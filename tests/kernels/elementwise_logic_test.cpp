// Elementwise and logic ops of issue 23 on the device against the float64 reference: comparisons
// and logic with bool results (any numeric operand type, numpy broadcasting, NaN and infinities),
// is_nan/is_inf, mod/fmod (ints with zero divisors), sign, the activations, rounding ties, sin/cos
// and prelu; then fused chains that carry bools between ops (select of a comparison, casts to and
// from bool). Outputs are poisoned first; a bool byte must also be exactly 0 or 1, since the
// poison pattern read as a bool would pass for "true".
#include <cmath>

#include "kernels/op_test_helpers.h"

namespace vkc::test {
namespace {

using K = ir::OpKind;

const DType kBool = DType::boolean;

// Random inputs made interesting: floats on a grid of quarters in [-4, 4] (so that comparisons
// see ties across operands) with NaN, +-inf and -0.0 sprinkled in; ints in [-8, 8].
std::map<std::string, HostTensor> special_inputs(const ir::Graph& g, uint32_t seed, bool specials = true,
                                                 double scale = 4.0) {
  std::map<std::string, HostTensor> in = random_inputs(g, seed);
  std::mt19937 rng(seed * 7 + 1);
  const double kSpecial[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0};
  for (auto& [name, t] : in) {
    if (!is_float(t.dtype())) continue;
    for (int64_t i = 0; i < t.numel(); ++i) {
      double v = std::round(t.get_f64(i) * scale * 4) / 4;
      if (specials && rng() % 6 == 0) v = kSpecial[rng() % 5];
      t.set_f64(i, v);
    }
  }
  return in;
}

::testing::AssertionResult bools_are_bytes(const GpuRun& run) {
  for (const auto& [name, t] : run.outputs) {
    if (t.dtype() != kBool) continue;
    for (int64_t i = 0; i < t.numel(); ++i)
      if (t.data()[i] > 1)
        return ::testing::AssertionFailure() << "output " << name << " element " << i << " is byte "
                                             << int(t.data()[i]) << " (unwritten?)";
  }
  return ::testing::AssertionSuccess();
}

void expect_matches(const ir::Graph& g, const std::map<std::string, HostTensor>& inputs, double rel_tol = 1e-5,
                    size_t max_dispatches = 0) {
  GpuRunOptions o;
  o.rel_tol = rel_tol;
  try {
    GpuRun run = run_on_gpu(g, inputs, o);
    EXPECT_TRUE(outputs_match(run, o));
    EXPECT_TRUE(bools_are_bytes(run));
    if (max_dispatches > 0) {
      EXPECT_LE(run.module.manifest.dispatches.size(), max_dispatches);
    }
  } catch (const Error& e) {
    ADD_FAILURE() << e.what();
  }
}

struct BinaryShapes {
  Shape a, b;
};
const BinaryShapes kShapes[] = {{{3, 5, 7}, {3, 5, 7}}, {{4, 1, 6}, {5, 1}}, {{}, {2, 3}}, {{2, 1, 3, 1}, {1, 4, 1, 5}}};

TEST(ElementwiseLogicKernel, ComparisonsEveryDtypeAndBroadcast) {
  uint32_t seed = 1;
  for (K k : {K::Equal, K::Less, K::Greater, K::LessOrEqual, K::GreaterOrEqual})
    for (DType t : {DType::f32, DType::f16, DType::i32, DType::i64, DType::i8, DType::u8})
      for (const BinaryShapes& s : kShapes) {
        SCOPED_TRACE(cat(ir::op_name(k), " ", dtype_name(t), " ", shape_str(s.a), " vs ", shape_str(s.b)));
        ir::Graph g = one_op_graph(k, {{t, s.a}, {t, s.b}});
        expect_matches(g, special_inputs(g, seed++));
      }
  // equal on bools
  ir::Graph g = one_op_graph(K::Equal, {{kBool, {4, 1, 9}}, {kBool, {3, 9}}});
  expect_matches(g, special_inputs(g, 99));
}

TEST(ElementwiseLogicKernel, ExactInt64Comparisons) {
  // Values that differ only beyond 2^53: a float path would call them equal.
  const int64_t big = (int64_t(1) << 53) + 1;
  ir::Graph g = one_op_graph(K::Less, {{DType::i64, {4}}, {DType::i64, {4}}});
  std::map<std::string, HostTensor> in{{"x0", make_i64({4}, {big, big - 1, -big, INT64_MIN})},
                                       {"x1", make_i64({4}, {big - 1, big, -big + 1, INT64_MAX})}};
  expect_matches(g, in);
  ir::Graph e = one_op_graph(K::Equal, {{DType::i64, {4}}, {DType::i64, {4}}});
  expect_matches(e, in);
}

TEST(ElementwiseLogicKernel, LogicOps) {
  uint32_t seed = 200;
  for (K k : {K::And, K::Or, K::Xor})
    for (const BinaryShapes& s : kShapes) {
      SCOPED_TRACE(cat(ir::op_name(k), " ", shape_str(s.a), " vs ", shape_str(s.b)));
      ir::Graph g = one_op_graph(k, {{kBool, s.a}, {kBool, s.b}});
      expect_matches(g, special_inputs(g, seed++));
    }
  ir::Graph g = one_op_graph(K::Not, {{kBool, {5, 13}}});
  expect_matches(g, special_inputs(g, seed++));
}

TEST(ElementwiseLogicKernel, IsNaNIsInf) {
  for (DType t : {DType::f32, DType::f16}) {
    ir::Graph n = one_op_graph(K::IsNaN, {{t, {7, 11}}});
    expect_matches(n, special_inputs(n, 300));
    for (bool pos : {false, true})
      for (bool neg : {false, true}) {
        SCOPED_TRACE(cat(dtype_name(t), " detect_positive ", pos, " detect_negative ", neg));
        ir::Graph g = one_op_graph(K::IsInf, {{t, {7, 11}}}, {{"detect_positive", pos}, {"detect_negative", neg}});
        expect_matches(g, special_inputs(g, 301));
      }
  }
}

TEST(ElementwiseLogicKernel, ModAndFModIntsWithZeroDivisors) {
  uint32_t seed = 400;
  for (K k : {K::Mod, K::FMod})
    for (DType t : {DType::i32, DType::i64, DType::i8, DType::u8})
      for (const BinaryShapes& s : kShapes) {
        SCOPED_TRACE(cat(ir::op_name(k), " ", dtype_name(t), " ", shape_str(s.a), " vs ", shape_str(s.b)));
        ir::Graph g = one_op_graph(k, {{t, s.a}, {t, s.b}});
        expect_matches(g, special_inputs(g, seed++));  // ints in [-8, 8]: zero divisors included
      }
  // The extremes: MIN mod -1, large i64.
  ir::Graph g = one_op_graph(K::Mod, {{DType::i64, {4}}, {DType::i64, {4}}});
  expect_matches(g, {{"x0", make_i64({4}, {INT64_MIN, INT64_MAX, -(int64_t(1) << 60) - 3, 17})},
                     {"x1", make_i64({4}, {-1, 1000000007, 1000000007, -5})}});
}

TEST(ElementwiseLogicKernel, ModAndFModFloats) {
  uint32_t seed = 500;
  for (K k : {K::Mod, K::FMod})
    for (const BinaryShapes& s : kShapes) {
      SCOPED_TRACE(cat(ir::op_name(k), " ", shape_str(s.a), " vs ", shape_str(s.b)));
      ir::Graph g = one_op_graph(k, {f32(s.a), f32(s.b)});
      expect_matches(g, special_inputs(g, seed++));  // quarters: many exact multiples, zero divisors
      std::map<std::string, HostTensor> wide = random_inputs(g, seed++);
      std::mt19937 rng(seed);
      for (int64_t i = 0; i < wide.at("x0").numel(); ++i)  // dividends up to 1e6: long quotients
        wide.at("x0").set_f64(i, wide.at("x0").get_f64(i) * std::pow(10.0, double(rng() % 7)));
      expect_matches(g, wide);
    }
}

TEST(ElementwiseLogicKernel, UnaryMath) {
  struct Case {
    K kind;
    ir::AttrMap attrs;
    double scale;
    double rel_tol;
  };
  const Case cases[] = {{K::Sign, {}, 4, 1e-6},         {K::Elu, {}, 4, 1e-5},
                        {K::Elu, {{"alpha", 0.3}}, 4, 1e-5}, {K::Selu, {}, 4, 1e-5},
                        {K::Softplus, {}, 40, 1e-5},    {K::Mish, {}, 40, 1e-5},
                        {K::Sin, {}, 10, 1e-5},         {K::Cos, {}, 10, 1e-5},
                        {K::Floor, {}, 4, 1e-6},        {K::Ceil, {}, 4, 1e-6},
                        {K::Round, {}, 4, 1e-6}};
  uint32_t seed = 600;
  for (const Case& c : cases)
    for (DType t : {DType::f32, DType::f16})
      for (bool specials : {false, true}) {
        SCOPED_TRACE(cat(ir::op_name(c.kind), " ", dtype_name(t), specials ? " with NaN/inf" : ""));
        ir::Graph g = one_op_graph(c.kind, {{t, {3, 67}}}, c.attrs);
        // Quarters: round meets its ties (x.5) and floor/ceil exact integers.
        expect_matches(g, special_inputs(g, seed++, specials, c.scale), c.rel_tol);
      }
  for (DType t : {DType::i32, DType::i64, DType::i8, DType::u8}) {
    ir::Graph g = one_op_graph(K::Sign, {{t, {5, 9}}});
    expect_matches(g, special_inputs(g, seed++));
  }
}

TEST(ElementwiseLogicKernel, SmallArgumentsKeepRelativePrecision) {
  // expm1/log1p forms: elu, selu and softplus of tiny or very negative x stay accurate relative
  // to the value (a naive exp(x) - 1 loses all digits near 0).
  for (K k : {K::Elu, K::Selu, K::Softplus, K::Mish}) {
    SCOPED_TRACE(ir::op_name(k));
    ir::Graph g = one_op_graph(k, {f32({6})});
    GpuRunOptions o;
    o.abs_tol = 0;
    o.rel_tol = 1e-5;
    GpuRun run = run_on_gpu(g, {{"x0", make_f32({6}, {-1e-6f, 1e-7f, -3e-4f, -20, -30, -60})}}, o);
    const HostTensor& y = run.outputs.at("y");
    const HostTensor& r = run.reference.at("y");
    for (int64_t i = 0; i < 6; ++i)
      EXPECT_NEAR(y.get_f64(i), r.get_f64(i), 1e-5 * std::fabs(r.get_f64(i)) + 1e-44) << "element " << i;
  }
}

TEST(ElementwiseLogicKernel, PReluSlopeShapes) {
  uint32_t seed = 700;
  for (const Shape& slope : {Shape{3, 1, 1}, Shape{1}, Shape{5}, Shape{2, 3, 4, 5}}) {
    SCOPED_TRACE(shape_str(slope));
    ir::Graph g = one_op_graph(K::PRelu, {f32({2, 3, 4, 5}), f32(slope)});
    expect_matches(g, special_inputs(g, seed++));
  }
  ir::Graph g = one_op_graph(K::PRelu, {{DType::i32, {4, 6}}, {DType::i32, {6}}});
  expect_matches(g, special_inputs(g, seed++));
}

// select(equal(a, b), x, y): the comparison's bool stays in a register of one kernel.
TEST(ElementwiseLogicKernel, FusedSelectOfComparison) {
  for (DType t : {DType::f32, DType::i64}) {
    SCOPED_TRACE(dtype_name(t));
    ir::Graph g;
    ir::Value* a = g.add_input("a", {t, {4, 1, 6}});
    ir::Value* b = g.add_input("b", {t, {5, 1}});
    ir::Value* x = g.add_input("x", f32({4, 5, 6}));
    ir::Value* y = g.add_input("y", f32({6}));
    ir::Value* eq = g.add_op(K::Equal, {a, b})->result();
    g.add_output(g.add_op(K::Select, {eq, x, y})->result(), "out");
    expect_matches(g, special_inputs(g, 800), 1e-5, 1);
  }
}

// A chain mixing every bool producer and consumer: the mask of finite positive values, combined,
// negated, stored as bool and used as a float multiplier; casts f32 -> bool (NaN is true) and
// bool -> i64 and f16.
TEST(ElementwiseLogicKernel, FusedBoolChains) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", f32({6, 35}));
  ir::Value* z = g.add_input("z", f32({35}));
  ir::Value* finite = g.add_op(K::Not, {g.add_op(K::Or, {g.add_op(K::IsNaN, {x})->result(),
                                                         g.add_op(K::IsInf, {x})->result()})->result()})->result();
  ir::Value* positive = g.add_op(K::Greater, {x, z})->result();
  ir::Value* both = g.add_op(K::And, {finite, positive})->result();
  ir::Value* either = g.add_op(K::Xor, {both, g.add_op(K::Cast, {x}, {{"to", std::string("bool")}})->result()})->result();
  g.add_output(either, "mask");
  ir::Value* as_float = g.add_op(K::Cast, {both}, {{"to", std::string("f32")}})->result();
  g.add_output(g.add_op(K::Mul, {as_float, g.add_op(K::Mish, {x})->result()})->result(), "masked");
  g.add_output(g.add_op(K::Cast, {either}, {{"to", std::string("i64")}})->result(), "as_i64");
  g.add_output(g.add_op(K::Cast, {either}, {{"to", std::string("f16")}})->result(), "as_f16");
  expect_matches(g, special_inputs(g, 900));

  // where(is_nan(x), 0, x) with a scalar constant: one kernel.
  ir::Graph w;
  ir::Value* v = w.add_input("x", f32({3, 70}));
  HostTensor zero(DType::f32, {});
  zero.set_f64(0, 0.0);
  ir::Value* c = w.add_constant(zero, "zero");
  w.add_output(w.add_op(K::Select, {w.add_op(K::IsNaN, {v})->result(), c, v})->result(), "y");
  expect_matches(w, special_inputs(w, 901), 1e-5, 1);
}

// Casts to and from bool as kernels of their own (no fused producer): any nonzero is true, NaN
// included; true is 1 in every type.
TEST(ElementwiseLogicKernel, StandaloneCastsWithBool) {
  uint32_t seed = 960;
  for (DType t : {DType::f32, DType::f16, DType::i64, DType::i32, DType::i8, DType::u8}) {
    SCOPED_TRACE(dtype_name(t));
    ir::Graph to_bool = one_op_graph(K::Cast, {{t, {5, 17}}}, {{"to", std::string("bool")}});
    expect_matches(to_bool, special_inputs(to_bool, seed++, true, 1.0));  // quarters: many zeros
    ir::Graph from_bool = one_op_graph(K::Cast, {{kBool, {5, 17}}}, {{"to", std::string(dtype_name(t))}});
    expect_matches(from_bool, special_inputs(from_bool, seed++));
  }
}

// Between int64 and 32-bit compute types the cast is an explicit GLSL conversion (cast_expr).
TEST(ElementwiseLogicKernel, CastsBetweenIntWidths) {
  uint32_t seed = 965;
  for (auto [from, to] : {std::pair{DType::i64, DType::i32}, std::pair{DType::i32, DType::i64},
                          std::pair{DType::i64, DType::i8}, std::pair{DType::u8, DType::i64}}) {
    SCOPED_TRACE(cat(dtype_name(from), " -> ", dtype_name(to)));
    ir::Graph g = one_op_graph(K::Cast, {{from, {4, 9}}}, {{"to", std::string(dtype_name(to))}});
    expect_matches(g, special_inputs(g, seed++));
  }
}

// Float-in, float-out chains through every new expression compile for every target profile
// (vulkan-min included: the bools stay in registers, no 8-bit storage needed).
TEST(ElementwiseLogicKernel, FloatChainsCompileEverywhere) {
  ir::Graph g;
  ir::Value* a = g.add_input("a", f32({4, 16}));
  ir::Value* b = g.add_input("b", f32({16}));
  ir::Value* cmp = g.add_op(K::Or, {g.add_op(K::Less, {a, b})->result(), g.add_op(K::IsInf, {a})->result()})->result();
  ir::Value* keep = g.add_op(K::Xor, {g.add_op(K::Not, {cmp})->result(), g.add_op(K::IsNaN, {b})->result()})->result();
  ir::Value* v = a;
  for (K k : {K::Sign, K::Elu, K::Selu, K::Softplus, K::Mish, K::Sin, K::Cos, K::Floor, K::Ceil, K::Round})
    v = g.add_op(k, {v})->result();
  v = g.add_op(K::PRelu, {g.add_op(K::Mod, {v, b})->result(), b})->result();
  v = g.add_op(K::FMod, {v, b})->result();
  ir::Value* sel = g.add_op(K::Select, {keep, v, a})->result();
  g.add_output(sel, "y");
  expect_compiles_everywhere(g);
  expect_matches(g, special_inputs(g, 980), 1e-5, 1);
}

// A stored bool cast to float fuses into a matmul's operand loader (the byte read as 0/1), and a
// comparison computed before it stays its own elementwise kernel.
TEST(ElementwiseLogicKernel, BoolCastIntoMatMulPrologue) {
  ir::Graph g;
  ir::Value* a = g.add_input("a", f32({4, 8}));
  ir::Value* b = g.add_input("b", f32({8}));
  ir::Value* w = g.add_input("w", f32({8, 3}));
  ir::Value* mask = g.add_op(K::GreaterOrEqual, {a, b})->result();
  ir::Value* m = g.add_op(K::Cast, {mask}, {{"to", std::string("f32")}})->result();
  g.add_output(g.add_op(K::MatMul, {m, w})->result(), "y");
  expect_matches(g, special_inputs(g, 975, false), 1e-5, 2);
}

// select on bool values (where(c, a, b) with bool a and b), broadcast.
TEST(ElementwiseLogicKernel, SelectOfBools) {
  ir::Graph g = one_op_graph(K::Select, {{kBool, {3, 1, 8}}, {kBool, {4, 8}}, {kBool, {1}}});
  expect_matches(g, special_inputs(g, 970));
}

// A comparison's bool result feeding a data movement kernel and coming back into a chain.
TEST(ElementwiseLogicKernel, BoolThroughDataMovement) {
  ir::Graph g;
  ir::Value* a = g.add_input("a", {DType::i32, {4, 6}});
  ir::Value* b = g.add_input("b", {DType::i32, {4, 6}});
  ir::Value* lt = g.add_op(K::Less, {a, b})->result();
  ir::Value* t = g.add_op(K::Transpose, {lt}, {{"perm", Ints{1, 0}}})->result();
  ir::Value* n = g.add_op(K::Not, {t})->result();
  g.add_output(n, "y");
  expect_matches(g, special_inputs(g, 950));
}

}  // namespace
}  // namespace vkc::test
