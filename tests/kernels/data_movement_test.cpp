// transpose / pad / reverse / slice / concat / broadcast kernels: bit-exact against the reference
// for several dtypes, concat split across dispatches on the 4-binding profile, and compile-only
// checks on every profile.
#include "kernels/op_test_helpers.h"

namespace vkc::test {
namespace {

using K = ir::OpKind;

struct MoveCase {
  std::string name;
  K kind;
  Shape shape;
  ir::AttrMap attrs;
};

const DType kDTypes[] = {DType::f32, DType::i32, DType::i64, DType::f16, DType::i8, DType::u8};

class DataMovementTest : public ::testing::TestWithParam<MoveCase> {};

TEST_P(DataMovementTest, EveryDTypeMatchesReference) {
  const MoveCase& c = GetParam();
  for (DType t : kDTypes) {
    SCOPED_TRACE(dtype_name(t));
    ir::Graph g = one_op_graph(c.kind, {{t, c.shape}}, c.attrs);
    expect_gpu_matches(g, 61, c.name);
  }
  ir::Graph g = one_op_graph(c.kind, {f32(c.shape)}, c.attrs);
  expect_compiles_everywhere(g);
  expect_gpu_matches(g, 62, c.name, "", "vulkan-min");
  // 8- and 16-bit elements on a target without their storage extensions: moved inside 32-bit
  // words (odd element counts, so the last word is partly past the tensor's end).
  for (DType t : {DType::f16, DType::i8, DType::u8}) {
    SCOPED_TRACE(cat(dtype_name(t), " in 32-bit words on vulkan-min"));
    ir::Graph p = one_op_graph(c.kind, {{t, c.shape}}, c.attrs);
    expect_gpu_matches(p, 63, c.name, "", "vulkan-min");
    codegen::CompileOptions co;
    co.target = find_target("vulkan-min").limits;
    EXPECT_NE(codegen::compile_graph(p, co).manifest.dispatches.at(0).strategy.find("per 32-bit word"), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(
    DataMovementOps, DataMovementTest,
    ::testing::Values(
        MoveCase{"transpose", K::Transpose, {2, 3, 4, 5}, {{"perm", Ints{3, 1, 0, 2}}}},
        MoveCase{"transpose", K::Transpose, {33, 65}, {{"perm", Ints{1, 0}}}},
        MoveCase{"pad", K::Pad, {3, 4, 5}, {{"pads", Ints{1, 0, 2, 0, 3, 1}}, {"value", 1.5}}},
        MoveCase{"pad", K::Pad, {6, 7}, {{"pads", Ints{2, 2, 1, 3}}, {"value", 300.0}}},  // saturates for 8-bit
        MoveCase{"reverse", K::Reverse, {4, 5, 6}, {{"axes", Ints{0, -1}}}},
        MoveCase{"slice", K::Slice, {10, 8, 6},
                 {{"starts", Ints{-1, 1}}, {"ends", Ints{-100, 7}}, {"axes", Ints{0, 2}}, {"steps", Ints{-3, 2}}}},
        MoveCase{"slice", K::Slice, {10, 8}, {{"starts", Ints{2, 20}}, {"ends", Ints{9, -9}}, {"steps", Ints{3, -1}}}},
        MoveCase{"broadcast", K::Broadcast, {3, 1, 5}, {{"shape", Ints{2, 3, 4, 5}}}},
        MoveCase{"broadcast", K::Broadcast, {1}, {{"shape", Ints{3, 7}}}}));

TEST(DataMovementKernelTest, ConcatManyInputsSplitsAcrossDispatches) {
  for (int64_t axis : {int64_t(0), int64_t(1), int64_t(-1)}) {
    std::vector<ir::TensorType> inputs;
    for (int i = 0; i < 7; ++i) {
      Shape s{3, 4, 5};
      s[size_t(axis < 0 ? axis + 3 : axis)] = 1 + i % 3;
      inputs.push_back(f32(s));
    }
    ir::Graph g = one_op_graph(K::Concat, inputs, {{"axis", axis}});
    SCOPED_TRACE(axis);
    expect_gpu_matches(g, 71, "concat");
    expect_gpu_matches(g, 72, "concat", "", "vulkan-min");  // 4 bindings: 3 inputs per dispatch
    expect_compiles_everywhere(g);
    codegen::CompileOptions co;
    co.target = find_target("vulkan-min").limits;
    EXPECT_EQ(codegen::compile_graph(g, co).manifest.dispatches.size(), 3u);
  }
  for (DType t : kDTypes) {
    ir::Graph g = one_op_graph(K::Concat, {{t, {2, 3}}, {t, {2, 5}}}, {{"axis", int64_t(1)}});
    SCOPED_TRACE(dtype_name(t));
    expect_gpu_matches(g, 73, "concat");
  }
}

// Concat of 8-bit tensors on a target without 8-bit storage: one dispatch writes every word (so
// no two dispatches share one); more operands than it binds are refused in one line.
TEST(DataMovementKernelTest, PackedConcatWithoutEightBitStorage) {
  for (int64_t axis : {int64_t(0), int64_t(1), int64_t(-1)}) {
    std::vector<ir::TensorType> inputs;
    for (int i = 0; i < 3; ++i) {
      Shape s{3, 5, 7};
      s[size_t(axis < 0 ? axis + 3 : axis)] = 1 + 2 * i;
      inputs.push_back({DType::i8, s});
    }
    SCOPED_TRACE(axis);
    expect_gpu_matches(one_op_graph(K::Concat, inputs, {{"axis", axis}}), 73, "concat", "", "vulkan-min");
  }
  std::vector<ir::TensorType> many(7, ir::TensorType{DType::u8, {2, 3}});
  codegen::CompileOptions co;
  co.target = find_target("vulkan-min").limits;
  const std::string e = compile_error(one_op_graph(K::Concat, many, {{"axis", int64_t(0)}}), co);
  EXPECT_NE(e.find("7 u8 operands packed in 32-bit words on target 'vulkan-min'"), std::string::npos) << e;
}

TEST(DataMovementKernelTest, I64MovesWithoutShaderInt64) {
  // i64 moves as pairs of 32-bit words, so it needs no 64-bit integer support.
  ir::Graph g = one_op_graph(K::Transpose, {{DType::i64, {5, 6}}}, {{"perm", Ints{1, 0}}});
  expect_gpu_matches(g, 74, "transpose", "", "vulkan-min");
}

}  // namespace
}  // namespace vkc::test
