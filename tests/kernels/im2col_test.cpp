// The im2col op's two kernels against the reference: the workgroup-memory tile ("tiled", the
// default) and the one-pass gather ("gather", used when no tile fits), over layouts, groups,
// strides, dilations, pads, partial tiles and every element width; and the tile's planning under
// small workgroup-memory limits.
#include <gtest/gtest.h>

#include "kernels/op_test_helpers.h"
#include "module/target_profiles.h"

namespace vkc::test {
namespace {

using ir::OpKind;

struct Im2ColCase {
  const char* name;
  ir::TensorType x;
  ir::AttrMap attrs;
};

std::vector<Im2ColCase> cases() {
  return {
      // K = 576 (9 full column tiles), P = 4096 (whole position tiles).
      {"nchw_k576", {DType::f32, {1, 64, 64, 64}}, {{"kernel", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}}},
      // K = 27 (one narrow tile, odd stride already), P = 19 x 23 (a partial position tile), N = 2.
      {"nchw_k27_partial",
       {DType::f32, {2, 3, 21, 25}},
       {{"kernel", Ints{3, 3}}, {"strides", Ints{1, 1}}, {"pads", Ints{0, 0, 0, 0}}}},
      // K = 100 (a partial column tile), strided, dilated, asymmetric pads, channels last.
      {"nhwc_k100_strided",
       {DType::f32, {1, 17, 19, 25}},
       {{"input_layout", std::string("NHWC")},
        {"kernel", Ints{2, 2}},
        {"strides", Ints{2, 1}},
        {"dilations", Ints{1, 2}},
        {"pads", Ints{1, 0, 2, 1}}}},
      // Groups, any filter layout (columns ordered H, C, W).
      {"grouped_hcfw",
       {DType::f32, {2, 12, 9, 11}},
       {{"filter_layout", std::string("HCFW")}, {"kernel", Ints{3, 2}}, {"groups", int64_t(3)}, {"pads", Ints{1, 1, 1, 1}}}},
      // 1-D and 3-D.
      {"nwc_1d", {DType::f32, {3, 40, 5}}, {{"input_layout", std::string("NWC")}, {"kernel", Ints{4}}, {"pads", Ints{2, 1}}}},
      {"ncdhw_3d", {DType::f32, {1, 2, 6, 7, 8}}, {{"kernel", Ints{3, 1, 2}}, {"pads", Ints{1, 0, 0, 1, 0, 1}}}},
      // Other element widths: staged as 4-byte (f16, i32, i8) and 8-byte (i64) values.
      {"f16", {DType::f16, {1, 8, 13, 13}}, {{"kernel", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}}},
      {"i32", {DType::i32, {1, 8, 13, 13}}, {{"kernel", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}}},
      {"i8", {DType::i8, {1, 8, 13, 13}}, {{"kernel", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}}},
      {"i64", {DType::i64, {1, 8, 13, 13}}, {{"kernel", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}}},
  };
}

TEST(Im2Col, TiledAndGatherMatchReference) {
  uint32_t seed = 40;
  for (const Im2ColCase& c : cases()) {
    SCOPED_TRACE(c.name);
    ir::Graph g = one_op_graph(OpKind::Im2Col, {c.x}, c.attrs);
    std::map<std::string, HostTensor> in = random_inputs(g, ++seed);
    for (const char* s : {"tiled", "gather"}) expect_gpu_matches(g, in, "im2col", s, "", 0);
  }
}

TEST(Im2Col, TiledIsTheDefaultAndShrinksToFitTheTarget) {
  ir::Graph g = one_op_graph(OpKind::Im2Col, {f32({1, 64, 32, 32})},
                             {{"kernel", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}});
  codegen::CompileOptions o;
  o.target = find_target("lavapipe").limits;
  // 64 columns staged with a row stride of 65 floats: 64 positions need 16640 bytes.
  for (uint32_t limit : {32768u, 16640u, 16639u, 2000u, 260u}) {
    SCOPED_TRACE(limit);
    o.target.max_compute_shared_memory_size = limit;
    ModuleImage m = codegen::compile_graph(g, o);
    ASSERT_EQ(m.manifest.dispatches.size(), 1u);
    const DispatchDesc& d = m.manifest.dispatches[0];
    EXPECT_EQ(d.strategy, "tiled");
    EXPECT_LE(d.workgroup_memory_bytes, limit);
    EXPECT_EQ(d.tiles.at("tile_columns"), 64);
    int64_t expected_positions = limit >= 16640 ? 64 : limit >= 8320 ? 32 : limit >= 2000 ? 4 : 1;
    EXPECT_EQ(d.tiles.at("tile_positions"), expected_positions);
  }
  // Below one staged row the gather kernel runs; forcing the tile there is a clear error.
  o.target.max_compute_shared_memory_size = 259;
  EXPECT_EQ(codegen::compile_graph(g, o).manifest.dispatches[0].strategy.rfind("gather", 0), 0u);
  o.forced_strategy["im2col"] = "tiled";
  std::string why = compile_error(g, o);
  EXPECT_NE(why.find("strategy 'tiled' does not apply"), std::string::npos) << why;
}

}  // namespace
}  // namespace vkc::test
