// The filter-packing pass (ir/passes/pack_conv_filters.cpp): constant float16 and float32 conv
// filters are stored output channels, taps, input channels with filter_layout saying so, and the
// conv computes exactly the same numbers (a permutation of values loses nothing), in 1-D, 2-D and
// 3-D, grouped, from OIHW and from HWCF; filters that are not sole-use constants stay as they are.
#include <gtest/gtest.h>

#include <random>

#include "ir/interpreter.h"
#include "ir/passes.h"
#include "ir/verifier.h"

namespace vkc::ir {
namespace {

struct Case {
  Shape x, w;
  std::string filter_layout;  // "" for the default (FC + spatial)
  int64_t groups;
  std::string packed;  // the layout the pass must write
};

HostTensor random_tensor(DType t, const Shape& s, std::mt19937& rng) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  HostTensor h(t, s);
  for (int64_t i = 0; i < h.numel(); ++i) h.set_f64(i, dist(rng));
  return h;
}

Graph conv_graph(const Case& c, DType wt, std::mt19937& rng, bool filter_also_output = false) {
  Graph g;
  Value* x = g.add_input("x", {wt, c.x});
  AttrMap wattrs{{"value", std::make_shared<const HostTensor>(random_tensor(wt, c.w, rng))}};
  Value* w = g.add_op(OpKind::Constant, {}, wattrs, "w")->result();
  AttrMap attrs{{"groups", c.groups}};
  if (!c.filter_layout.empty()) attrs["filter_layout"] = c.filter_layout;
  std::vector<Value*> operands{x, w};
  g.add_output(g.add_op(OpKind::Conv, operands, attrs, "conv")->result(), "y");
  if (filter_also_output) g.add_output(w, "w_out");
  return g;
}

std::string layout_of_conv(const Graph& g) {
  for (const Op* op : g.ops())
    if (op->kind == OpKind::Conv) return op->attr_string_or("filter_layout", "");
  return "(no conv)";
}

TEST(PackConvFilters, SameNumbersInThePackedLayout) {
  const std::vector<Case> cases = {
      {{1, 16, 7, 9}, {24, 16, 3, 3}, "", 1, "FHWC"},
      {{2, 16, 5, 6}, {32, 8, 3, 2}, "", 2, "FHWC"},
      {{1, 8, 6, 6}, {3, 3, 8, 16}, "HWCF", 1, "FHWC"},
      {{1, 8, 11}, {12, 8, 5}, "", 1, "FWC"},
      {{1, 8, 4, 5, 6}, {16, 8, 3, 3, 3}, "", 1, "FDHWC"},
  };
  std::mt19937 rng(11);
  for (DType t : {DType::f16, DType::f32})
  for (const Case& c : cases) {
    SCOPED_TRACE(shape_str(c.w) + " " + std::string(dtype_name(t)));
    Graph g = conv_graph(c, t, rng);
    Graph before = g.clone();
    PassManager pm;
    pm.add(pack_conv_filters_pass());
    pm.run(g);
    verify_graph(g);
    EXPECT_EQ(layout_of_conv(g), c.packed);
    std::map<std::string, HostTensor> in{{"x", random_tensor(t, c.x, rng)}};
    HostTensor want = interpret(before, in).at("y"), got = interpret(g, in).at("y");
    ASSERT_EQ(got.numel(), want.numel());
    for (int64_t i = 0; i < want.numel(); ++i) ASSERT_EQ(got.get_f64(i), want.get_f64(i)) << i;
  }
}

TEST(PackConvFilters, LeavesOtherFiltersAlone) {
  std::mt19937 rng(12);
  const Case c{{1, 16, 5, 5}, {8, 16, 3, 3}, "", 1, ""};
  auto unchanged = [&](Graph g, const ConvFilterPacked& wanted = {}) {
    PassManager pm;
    pm.add(pack_conv_filters_pass(wanted));
    pm.run(g);
    return layout_of_conv(g) == "";
  };
  EXPECT_TRUE(unchanged(conv_graph(c, DType::f16, rng, true)));  // the filter is also an output
  EXPECT_TRUE(unchanged(conv_graph(c, DType::f32, rng, true)));
  EXPECT_TRUE(unchanged(conv_graph(c, DType::f16, rng), [](const Op&) { return false; }));  // not wanted
  EXPECT_TRUE(unchanged(conv_graph(c, DType::f32, rng), [](const Op&) { return false; }));
  EXPECT_FALSE(unchanged(conv_graph(c, DType::f16, rng)));
  EXPECT_FALSE(unchanged(conv_graph(c, DType::f32, rng)));
}

}  // namespace
}  // namespace vkc::ir
