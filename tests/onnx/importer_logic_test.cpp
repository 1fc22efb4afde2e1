// ONNX import of the issue 23 elementwise and logic ops: which IR op each node becomes (with its
// attributes), the masks PyTorch exporters emit (Where(Equal(ids, 0)), PRelu with [C, 1, 1]
// slopes) running on the device against the reference, and one-line errors for bad forms.
#include <gtest/gtest.h>

#include "common/gpu_harness.h"
#include "onnx/importer.h"
#include "onnx_model_builder.h"
#include "support/error.h"

namespace vkc::test {
namespace {

using ir::OpKind;
constexpr int kFloat = 1, kBool = 9, kInt64 = 7, kInt32 = 6;

const ir::Op* only_compute_op(const ir::Graph& g) {
  const ir::Op* found = nullptr;
  for (const ir::Op* op : g.ops()) {
    if (op->kind == OpKind::Constant) continue;
    EXPECT_EQ(found, nullptr) << "more than one computing op";
    found = op;
  }
  return found;
}

struct OneNode {
  const char* onnx;
  OpKind kind;
  int inputs;
  int elem;
};

TEST(OnnxLogicImport, EachOpBecomesItsIrOp) {
  const OneNode cases[] = {
      {"Equal", OpKind::Equal, 2, kInt64},       {"Less", OpKind::Less, 2, kFloat},
      {"Greater", OpKind::Greater, 2, kInt32},   {"LessOrEqual", OpKind::LessOrEqual, 2, kFloat},
      {"GreaterOrEqual", OpKind::GreaterOrEqual, 2, kInt64},
      {"And", OpKind::And, 2, kBool},            {"Or", OpKind::Or, 2, kBool},
      {"Xor", OpKind::Xor, 2, kBool},            {"Not", OpKind::Not, 1, kBool},
      {"IsNaN", OpKind::IsNaN, 1, kFloat},       {"IsInf", OpKind::IsInf, 1, kFloat},
      {"Mod", OpKind::Mod, 2, kInt64},           {"Sign", OpKind::Sign, 1, kFloat},
      {"Elu", OpKind::Elu, 1, kFloat},           {"Selu", OpKind::Selu, 1, kFloat},
      {"Softplus", OpKind::Softplus, 1, kFloat}, {"Mish", OpKind::Mish, 1, kFloat},
      {"Sin", OpKind::Sin, 1, kFloat},           {"Cos", OpKind::Cos, 1, kFloat},
      {"Floor", OpKind::Floor, 1, kFloat},       {"Ceil", OpKind::Ceil, 1, kFloat},
      {"Round", OpKind::Round, 1, kFloat},       {"PRelu", OpKind::PRelu, 2, kFloat},
  };
  for (int opset : {11, 17, 18}) {
    for (const OneNode& c : cases) {
      if (std::string(c.onnx) == "Mish" && opset < 18) continue;  // Mish is opset 18
      SCOPED_TRACE(cat(c.onnx, " opset ", opset));
      OnnxModel m(opset);
      m.input("a", {2, 3}, c.elem);
      std::vector<std::string> in{"a"};
      if (c.inputs == 2) {
        m.input("b", {3}, c.elem);
        in.push_back("b");
      }
      m.node(c.onnx, in, {"y"}, "n");
      m.output("y");
      ir::Graph g = onnx::import_model(m.write(scratch_dir(cat("logic_", c.onnx, opset))));
      const ir::Op* op = only_compute_op(g);
      ASSERT_NE(op, nullptr);
      EXPECT_EQ(op->kind, c.kind);
      EXPECT_EQ(op->name, "n");
      bool bool_result = c.kind <= OpKind::IsInf && c.kind >= OpKind::Equal;
      EXPECT_EQ(op->result()->type.dtype == DType::boolean, bool_result);
    }
  }
}

TEST(OnnxLogicImport, Attributes) {
  OnnxModel m(17);
  m.input("x", {4}, kFloat);
  m.input("i", {4}, kInt64);
  OnnxModel::attr_int(m.node("Mod", {"i", "i"}, {"fm"}, "fm"), "fmod", 1);
  OnnxModel::attr_int(m.node("IsInf", {"x"}, {"pos"}, "pos"), "detect_negative", 0);
  OnnxModel::attr_float(m.node("Elu", {"x"}, {"elu"}, "elu"), "alpha", 0.5f);
  m.node("Selu", {"x"}, {"selu"}, "selu");
  for (const char* o : {"fm", "pos", "elu", "selu"}) m.output(o);
  ir::Graph g = onnx::import_model(m.write(scratch_dir("logic_attrs")));
  std::map<std::string, const ir::Op*> by_name;
  for (const ir::Op* op : g.ops()) by_name[op->name] = op;
  EXPECT_EQ(by_name.at("fm")->kind, OpKind::FMod);
  EXPECT_TRUE(by_name.at("pos")->attr_bool("detect_positive"));
  EXPECT_FALSE(by_name.at("pos")->attr_bool("detect_negative"));
  EXPECT_DOUBLE_EQ(by_name.at("elu")->attr_float("alpha"), 0.5);
  EXPECT_NEAR(by_name.at("selu")->attr_float("alpha"), 1.6732632, 1e-6);
  EXPECT_NEAR(by_name.at("selu")->attr_float("gamma"), 1.0507010, 1e-6);
}

TEST(OnnxLogicImport, BadFormsNameTheNode) {
  {
    OnnxModel m(17);
    m.input("i", {4}, kInt64);
    OnnxModel::attr_int(m.node("Mod", {"i", "i"}, {"y"}, "m"), "fmod", 2);
    m.output("y");
    std::string e = import_error(m.write(scratch_dir("logic_bad_fmod")));
    EXPECT_NE(e.find("'m'"), std::string::npos) << e;
    EXPECT_NE(e.find("attribute 'fmod' is 2, expected 0 or 1"), std::string::npos) << e;
  }
  {
    // A [C] slope under NCHW input lines up with W, not C: refused, naming the dims.
    OnnxModel m(17);
    m.input("x", {1, 3, 4, 5});
    m.initializer("s", {3}, {0.1f, 0.2f, 0.3f});
    m.node("PRelu", {"x", "s"}, {"y"}, "pr");
    m.output("y");
    std::string e = import_error(m.write(scratch_dir("logic_bad_prelu")));
    EXPECT_NE(e.find("pr"), std::string::npos) << e;
    EXPECT_NE(e.find("slope dim 0 is 3, input dim 3 is 5"), std::string::npos) << e;
  }
  {
    OnnxModel m(17);
    m.input("x", {4});
    m.node("And", {"x", "x"}, {"y"}, "and1");
    m.output("y", kBool);
    std::string e = import_error(m.write(scratch_dir("logic_bad_and")));
    EXPECT_NE(e.find("and1"), std::string::npos) << e;
    EXPECT_NE(e.find("expected bool"), std::string::npos) << e;
  }
}

// The attention-mask form of BERT exports: Where(Equal(ids, 0), -10000, scores), plus a
// Not/IsNaN/Cast chain; on the device, bool values never leave the fused kernel.
TEST(OnnxLogicImport, MaskChainsRunOnTheDevice) {
  OnnxModel m(17);
  m.input("ids", {2, 1, 1, 8}, kInt64);
  m.input("scores", {2, 4, 8, 8});
  auto* zero = m.graph().add_initializer();
  zero->set_name("zero");
  zero->set_data_type(::onnx::TensorProto::INT64);
  zero->add_int64_data(0);
  m.initializer("neg", {}, {-10000.0f});
  m.node("Equal", {"ids", "zero"}, {"pad"}, "eq");
  m.node("Where", {"pad", "neg", "scores"}, {"masked"}, "where");
  m.node("IsNaN", {"scores"}, {"nan"}, "isnan");
  m.node("Not", {"nan"}, {"ok"}, "not");
  OnnxModel::attr_int(m.node("Cast", {"ok"}, {"okf"}, "cast"), "to", 1);
  m.node("Mul", {"masked", "okf"}, {"y"}, "mul");
  m.output("y");
  ir::Graph g = onnx::import_model(m.write(scratch_dir("logic_mask")));
  std::map<std::string, HostTensor> in = random_inputs(g, 5);
  HostTensor& ids = in.at("ids");
  for (int64_t i = 0; i < ids.numel(); ++i) ids.set_i64(i, i % 3 == 0 ? 0 : i);
  GpuRun run = run_on_gpu(g, in);
  EXPECT_TRUE(outputs_match(run));
  EXPECT_EQ(run.module.manifest.dispatches.size(), 1u);
}

// PRelu as both PyTorch exporters write it: slope [C, 1, 1] for NCHW and [C] for [N, C].
TEST(OnnxLogicImport, PReluPerChannelRunsOnTheDevice) {
  OnnxModel m(17);
  m.input("x", {2, 3, 4, 5});
  m.input("v", {6, 3});
  m.initializer("s", {3, 1, 1}, {0.1f, -0.2f, 0.3f});
  m.initializer("t", {3}, {0.25f, 0.5f, 2.0f});
  m.node("PRelu", {"x", "s"}, {"y"}, "p4");
  m.node("PRelu", {"v", "t"}, {"z"}, "p2");
  m.output("y");
  m.output("z");
  ir::Graph g = onnx::import_model(m.write(scratch_dir("logic_prelu")));
  GpuRun run = run_on_gpu(g, random_inputs(g, 9));
  EXPECT_TRUE(outputs_match(run));
}

// Opsets before 7 had no broadcasting: a slope of C entries is per channel (dim 1), as PyTorch's
// old exports (pytorch-converted test_PReLU_*_multiparam) rely on.
TEST(OnnxLogicImport, LegacyPReluSlopeIsPerChannel) {
  OnnxModel m(6);
  m.input("x", {2, 3, 4});
  m.initializer("s", {3}, {0.1f, -0.2f, 0.3f});
  m.node("PRelu", {"x", "s"}, {"y"}, "p");
  m.output("y");
  ir::Graph g = onnx::import_model(m.write(scratch_dir("logic_prelu6")));
  std::map<std::string, HostTensor> in{{"x", HostTensor(DType::f32, {2, 3, 4})}};
  for (int64_t i = 0; i < 24; ++i) in.at("x").set_f64(i, -1.0);
  GpuRun run = run_on_gpu(g, in);
  EXPECT_TRUE(outputs_match(run));
  // Element [0, c, w] is -1 * slope[c].
  for (int64_t c = 0; c < 3; ++c) EXPECT_NEAR(run.outputs.at("y").get_f64(c * 4 + 1), -0.1 * double(c == 0) + 0.2 * double(c == 1) - 0.3 * double(c == 2), 1e-7);
}

}  // namespace
}  // namespace vkc::test
