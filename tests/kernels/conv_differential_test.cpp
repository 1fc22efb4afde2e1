// Differential tests: seeded random conv and conv_transpose configs (1-3 spatial dims, batches,
// groups, depthwise with and without multiplier, strides, dilations, asymmetric pads, kernels
// 1..7, odd sizes, random layouts), each run on lavapipe with every applicable strategy forced and
// compared with the reference interpreter, and each compiled for every target profile. split_k
// runs on every fourth config only (it applies to most, and is the implicit GEMM kernel plus a
// reduce), alternating the planner's S with an S of 3 that rarely divides the K steps.
#include <algorithm>
#include <cstdlib>
#include <random>

#include <gtest/gtest.h>

#include "kernels/conv_test_support.h"
#include "support/error.h"

namespace vkc::test {
namespace {

using ir::OpKind;

struct ConvConfig {
  OpKind kind = OpKind::Conv;
  Shape input, filter;
  bool bias = false;
  ir::AttrMap attrs;
  std::string text;  // for failure messages
};

int64_t pick(std::mt19937& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

std::string shuffled(std::string letters, std::mt19937& rng) {
  std::shuffle(letters.begin(), letters.end(), rng);
  return letters;
}

// Places logical extents (in `letters` order) at the physical positions of `layout`.
Shape physical(const std::string& layout, const std::string& letters, const std::vector<int64_t>& extents) {
  Shape s(letters.size());
  for (size_t i = 0; i < letters.size(); ++i) s[layout.find(letters[i])] = extents[i];
  return s;
}

// One random config; `max_macs` keeps the reference interpreter and lavapipe fast.
ConvConfig random_config(std::mt19937& rng, bool large) {
  for (;;) {
    ConvConfig c;
    bool transposed = pick(rng, 0, 2) == 0;
    c.kind = transposed ? OpKind::ConvTranspose : OpKind::Conv;
    int rank = int(pick(rng, 1, 3));
    std::string sp = ir::spatial_letters(rank);
    int64_t batch = pick(rng, 1, 3);
    int64_t groups = 1, cg = 1, fg = 1;
    int64_t family = pick(rng, 0, 3);
    switch (family) {
      case 0: cg = pick(rng, 1, 5); fg = pick(rng, 1, 6); break;           // dense
      case 1: groups = pick(rng, 2, 4); cg = pick(rng, 1, 3); fg = pick(rng, 1, 3); break;
      case 2: groups = pick(rng, 1, 6); break;                             // depthwise
      default: groups = pick(rng, 1, 4); fg = pick(rng, 2, 3); break;      // depthwise x multiplier
    }
    if (large) {
      if (family < 2) cg *= 4;  // depthwise keeps one input channel per group
      fg *= 2;
    }
    int64_t max_k = rank == 3 ? 3 : 7;
    std::vector<int64_t> kernel, strides, dilations, pb, pe, in, outpad;
    for (int i = 0; i < rank; ++i) {
      int64_t k = pick(rng, 1, max_k), s = pick(rng, 1, 3), d = pick(rng, 1, 2);
      int64_t extent = d * (k - 1) + 1;
      kernel.push_back(k);
      strides.push_back(s);
      dilations.push_back(d);
      int64_t a = pick(rng, 0, extent - 1), b = pick(rng, 0, extent - 1);
      int64_t n = 0;
      if (!transposed) {
        n = std::max<int64_t>(1, extent - a - b + pick(rng, 0, rank == 3 ? 4 : 9));
      } else {
        n = pick(rng, 1, rank == 3 ? 4 : 7);
        int64_t full = s * (n - 1) + d * (k - 1) + 1;
        a = std::min(a, (full - 1) / 2);
        b = std::min(b, (full - 1) / 2);
        outpad.push_back(pick(rng, 0, 1) ? 0 : pick(rng, 0, std::max(s, d) - 1));
      }
      if (large) n += 8;
      in.push_back(n);
      pb.push_back(a);
      pe.push_back(b);
    }
    int64_t in_channels = groups * cg;
    std::string il = shuffled("NC" + sp, rng), fl = shuffled("FC" + sp, rng), ol = shuffled("NC" + sp, rng);
    std::vector<int64_t> x_ext{batch, in_channels}, w_ext;
    x_ext.insert(x_ext.end(), in.begin(), in.end());
    if (!transposed) {
      w_ext = {groups * fg, cg};
    } else {
      w_ext = {fg, in_channels};
    }
    w_ext.insert(w_ext.end(), kernel.begin(), kernel.end());
    c.input = physical(il, "NC" + sp, x_ext);
    c.filter = physical(fl, "FC" + sp, w_ext);
    std::vector<int64_t> pads = pb;
    pads.insert(pads.end(), pe.begin(), pe.end());
    c.attrs = {{"groups", groups},          {"strides", strides},
               {"dilations", dilations},    {"pads", pads},
               {"input_layout", il},        {"filter_layout", fl},
               {"output_layout", ol}};
    if (transposed) c.attrs["output_padding"] = outpad;
    c.bias = pick(rng, 0, 1) == 1;
    c.text = cat(transposed ? "conv_transpose" : "conv", " x", shape_str(c.input), " ", il, " w",
                 shape_str(c.filter), " ", fl, " out ", ol, " groups ", groups, " k ",
                 shape_str(kernel), " s ", shape_str(strides), " d ", shape_str(dilations), " pads ",
                 shape_str(pads), transposed ? " outpad " + shape_str(outpad) : std::string(),
                 c.bias ? " +bias" : "");
    try {
      ir::Graph g = conv_graph(c.kind, c.input, c.filter, c.bias, c.attrs);
      const ir::ConvGeometry geo = ir::conv_geometry(only_conv(g));
      double macs = double(shape_numel(geo.output_shape())) * double(geo.in_channels_per_group()) *
                    double(shape_numel(geo.kernel));
      if (macs > (large ? 4e6 : 2e5)) continue;
      return c;
    } catch (const Error&) {
      continue;  // e.g. output_padding not below stride or dilation: draw again
    }
  }
}

// Runs configs [first, first + count) of the sequence that `seed` draws; the ones before `first`
// are drawn and dropped, so a shard sees exactly the configs the unsharded run would.
void run_configs(int first, int count, uint32_t seed, bool large) {
  std::mt19937 rng(seed);
  for (int i = 0; i < first; ++i) random_config(rng, large);
  std::map<std::string, int> runs_per_strategy;
  for (int i = first; i < first + count; ++i) {
    ConvConfig c = random_config(rng, large);
    SCOPED_TRACE(cat("config ", i, ": ", c.text));
    ir::Graph g = conv_graph(c.kind, c.input, c.filter, c.bias, c.attrs);
    std::map<std::string, HostTensor> in = random_inputs(g, seed + uint32_t(i));
    for (const std::string& s : lavapipe_strategies(g)) {
      if (s == "split_k" && i % 4 != 0) continue;
      std::string forced = s;
      if (s == "split_k" && i % 8 == 4) {
        // An explicit S when the K loop has at least 3 steps of any tile (TK <= 16).
        if (codegen::conv_gemm_shape(ir::conv_geometry(only_conv(g))).k > 32) forced = "split_k:3";
      }
      GpuRun run = run_conv(g, in, forced);
      EXPECT_TRUE(outputs_match(run)) << forced;
      ++runs_per_strategy[s];
    }
    // Every profile, lavapipe's included (the runs above used the live device's own limits).
    for (const std::string& target : known_targets()) {
      EXPECT_TRUE(compiles_within(g, target));
    }
    if (::testing::Test::HasFailure()) break;  // one broken config is enough output
  }
  for (const auto& [s, n] : runs_per_strategy) std::printf("  %s: %d runs\n", s.c_str(), n);
  // Every strategy must have been exercised.
  for (const char* s : {"direct", "implicit_gemm", "split_k", "depthwise", "depthwise_tiled", "depthwise_channels_last", "im2col"})
    EXPECT_GT(runs_per_strategy[s], 0) << s;
}

// 320 configs in four shards of 80: CTest runs them in parallel, and each stays far inside the
// per-test timeout in the sanitizer build, where SPIR-V compilation (malloc-heavy) is ~9x slower.
class ConvDifferentialShard : public ::testing::TestWithParam<int> {};

TEST_P(ConvDifferentialShard, RandomConfigsEveryStrategyMatchesReference) {
  run_configs(GetParam() * 80, 80, 20240601, false);
}

INSTANTIATE_TEST_SUITE_P(Configs, ConvDifferentialShard, ::testing::Values(0, 1, 2, 3));

TEST(ConvDifferential, LargeRandomConfigs) {
  if (std::getenv("VKC_LARGE_TESTS") == nullptr || std::string(std::getenv("VKC_LARGE_TESTS")) != "1")
    GTEST_SKIP() << "larger conv sweep: set VKC_LARGE_TESTS=1 to run it";
  run_configs(0, 60, 777, true);
}

}  // namespace
}  // namespace vkc::test
