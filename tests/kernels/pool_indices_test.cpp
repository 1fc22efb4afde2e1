// max_pool_with_indices kernel against the reference: values and i64 indices in both storage
// orders, windows with padding, dilation, ceil_mode and layouts, integer inputs full of ties
// (the first maximum must win on the device too), and a compile check on every profile.
#include "kernels/op_test_helpers.h"

namespace vkc::test {
namespace {

using K = ir::OpKind;

struct IndicesCase {
  Shape input;
  ir::AttrMap attrs;
};

void PrintTo(const IndicesCase& c, std::ostream* os) { *os << shape_str(c.input); }

class PoolIndicesTest : public ::testing::TestWithParam<IndicesCase> {};

TEST_P(PoolIndicesTest, ValuesAndIndicesMatchReference) {
  const IndicesCase& c = GetParam();
  for (DType t : {DType::f32, DType::i32}) {
    for (int64_t order : {0, 1}) {
      ir::AttrMap attrs = c.attrs;
      attrs["storage_order"] = order;
      ir::Graph g;
      ir::Value* x = g.add_input("x", {t, c.input});
      ir::Op* op = g.add_op(K::MaxPoolWithIndices, {x}, attrs, "under_test");
      g.add_output(op->result(0), "values");
      g.add_output(op->result(1), "indices");
      SCOPED_TRACE(cat(dtype_name(t), " storage_order ", order));
      // i32 inputs are random in [-8, 8]: most windows hold ties.
      GpuRun run = run_on_gpu(g, random_inputs(g, 17));
      EXPECT_TRUE(same_bytes(run.outputs.at("values"), run.reference.at("values")));
      EXPECT_TRUE(same_bytes(run.outputs.at("indices"), run.reference.at("indices")));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Windows, PoolIndicesTest,
    ::testing::Values(
        IndicesCase{{2, 3, 9, 10}, {{"kernel", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}},
        IndicesCase{{1, 2, 7, 8}, {{"kernel", Ints{2, 3}}, {"strides", Ints{2, 1}}, {"ceil_mode", true}}},
        IndicesCase{{2, 9, 10, 5}, {{"kernel", Ints{2, 3}}, {"strides", Ints{2, 1}}, {"pads", Ints{1, 1, 0, 1}},
                                    {"layout", std::string("NHWC")}}},
        IndicesCase{{3, 4, 17}, {{"kernel", Ints{4}}, {"strides", Ints{3}}, {"dilations", Ints{2}}, {"pads", Ints{2, 3}}}},
        IndicesCase{{1, 2, 5, 6, 7}, {{"kernel", Ints{2, 3, 2}}, {"strides", Ints{2, 2, 3}},
                                      {"dilations", Ints{2, 1, 2}}, {"pads", Ints{1, 0, 1, 1, 2, 1}}}}));

TEST(PoolIndicesKernelTest, NaNWinsAndStaysTheFirst) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", f32({1, 1, 6}));
  ir::Op* op = g.add_op(K::MaxPoolWithIndices, {x}, {{"kernel", Ints{3}}, {"pads", Ints{1, 1}}}, "mp");
  g.add_output(op->result(0), "values");
  g.add_output(op->result(1), "indices");
  std::map<std::string, HostTensor> in{{"x", make_f32({1, 1, 6}, {1, NAN, 3, NAN, 2, 9})}};
  GpuRun run = run_on_gpu(g, in);
  EXPECT_TRUE(outputs_match(run));
  // Windows (-1..1) (0..2) (1..3) (2..4) (3..5) (4..6): the first NaN of each window wins.
  EXPECT_EQ(run.outputs.at("indices").get_i64(2), 1);
  EXPECT_EQ(run.outputs.at("indices").get_i64(3), 3);
  EXPECT_EQ(run.outputs.at("indices").get_i64(5), 5);
}

TEST(PoolIndicesKernelTest, FitsEveryProfileAndRunsOnTheMinimum) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", f32({2, 8, 32, 32}));
  ir::Op* op = g.add_op(K::MaxPoolWithIndices, {x}, {{"kernel", Ints{3, 3}}, {"strides", Ints{2, 2}}}, "mp");
  g.add_output(op->result(0), "values");
  g.add_output(op->result(1), "indices");
  expect_compiles_everywhere(g);
  expect_gpu_matches(g, 3, "max_pool_with_indices", "direct", "vulkan-min");
}

}  // namespace
}  // namespace vkc::test
