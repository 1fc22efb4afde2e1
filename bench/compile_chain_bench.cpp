// vkc-compile-bench: compile time of long elementwise chains, per op (issue 24 item 11: the
// passes must stay linear; vk-compile of a 20k-op chain in under a second on the 2-core machine).
//
// Each case is a chain of N ops in one of four shapes:
//   fused    v[i] = op(v[i-1] [, y]) cycling add, relu, mul, sigmoid, sub, tanh, max, abs: the
//            chain fuses into kernels of at most kMaxFusedOps ops, and equal chunks share one
//            compiled kernel through the SPIR-V cache
//   random   the same ops drawn at random (fixed seed): every kernel differs and is compiled
//   unfused  v[i] = v[i-1] - v[i-2]: every intermediate has two users, one dispatch per op (the
//            case for storage, arena, manifest and barrier planning)
//   reshapes [1, 1024] <-> [32, 32] reshapes with a relu after every second one: the reshape pass
//            moves them all to the end, where they cancel (one relu kernel is left)
// An iteration is what vk-compile does short of writing files: parse the .vkir text, compile for
// the lavapipe profile (verifier, passes, dispatch formation, kernels, SPIR-V, storage and arena
// plans), write the manifest JSON and the --report text. The process-wide SPIR-V cache is cleared
// first, as in a fresh process. `per_op` is time per op: flat across N means linear.
// BM_LoadPlan times what the runtime derives from an unfused chain's manifest at load (reading the
// JSON and the barrier plan), without a device.
//
//   vkc-compile-bench [--benchmark_filter=REGEX] [benchmark flags]
//   vkc-compile-bench --write-chain MODE N > chain.vkir     the same graph as text, for vk-compile
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>

#include "codegen/compiler.h"
#include "codegen/spirv_cache.h"
#include "ir/text_format.h"
#include "module/manifest.h"
#include "module/target_profiles.h"
#include "runtime/barrier_plan.h"
#include "support/error.h"

namespace {

using vkc::ir::OpKind;

enum class Mode { Fused, Random, Unfused, Reshapes };

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::Fused: return "fused";
    case Mode::Random: return "random";
    case Mode::Unfused: return "unfused";
    case Mode::Reshapes: return "reshapes";
  }
  return "?";
}

vkc::ir::Graph chain(Mode mode, int n) {
  static const std::pair<OpKind, bool> kOps[] = {
      {OpKind::Add, true},  {OpKind::Relu, false}, {OpKind::Mul, true}, {OpKind::Sigmoid, false},
      {OpKind::Sub, true},  {OpKind::Tanh, false}, {OpKind::Max, true}, {OpKind::Abs, false}};
  vkc::ir::Graph g;
  g.name = vkc::cat("chain_", mode_name(mode), "_", n);
  const vkc::ir::TensorType type{vkc::DType::f32, {1, 1024}};
  vkc::ir::Value* prev = g.add_input("x", type);
  vkc::ir::Value* y = g.add_input("y", type);
  vkc::ir::Value* before = y;
  std::mt19937 rng(24);  // mt19937's sequence is fixed by the standard
  for (int i = 0; i < n; ++i) {
    vkc::ir::Value* next;
    if (mode == Mode::Unfused) {
      // x, y, y-x, -x, -y, x-y, x, ...: period 6, so values stay finite for any n.
      next = g.add_op(OpKind::Sub, {prev, before})->result();
    } else if (mode == Mode::Reshapes) {
      // [1, 1024] <-> [32, 32] reshapes with a relu between every second pair: the reshape pass
      // moves every reshape to the end and cancels them (ir/passes/reshape_propagation.cpp).
      if (i % 3 == 2) {
        next = g.add_op(OpKind::Relu, {prev})->result();
      } else {
        vkc::Shape shape = prev->type.shape == vkc::Shape{1, 1024} ? vkc::Shape{32, 32} : vkc::Shape{1, 1024};
        next = g.add_op(OpKind::Reshape, {prev}, {{"shape", std::vector<int64_t>(shape.begin(), shape.end())}})
                   ->result();
      }
    } else {
      auto [kind, binary] = kOps[mode == Mode::Fused ? size_t(i) % 8 : size_t(rng() % 8)];
      next = g.add_op(kind, binary ? std::vector<vkc::ir::Value*>{prev, y} : std::vector<vkc::ir::Value*>{prev})
                 ->result();
    }
    before = prev;
    prev = next;
  }
  g.add_output(prev, "out");
  return g;
}

const vkc::TargetLimits& lavapipe() { return vkc::find_target("lavapipe").limits; }

void BM_CompileChain(benchmark::State& state, Mode mode) {
  const int n = int(state.range(0));
  const std::string text = vkc::ir::print_graph(chain(mode, n));
  vkc::codegen::CompileOptions options;
  options.target = lavapipe();
  size_t dispatches = 0;
  for (auto _ : state) {
    vkc::codegen::SpirvCache::process().clear();
    vkc::ir::Graph graph = vkc::ir::parse_graph(text, "chain.vkir");
    vkc::ModuleImage image = vkc::codegen::compile_graph(graph, options);
    std::string json = vkc::manifest_to_json(vkc::manifest_with_spirv_hashes(image));
    std::string report = vkc::codegen::format_report(image.manifest);
    benchmark::DoNotOptimize(json.data());
    benchmark::DoNotOptimize(report.data());
    dispatches = image.manifest.dispatches.size();
  }
  state.counters["ops"] = n;
  state.counters["dispatches"] = double(dispatches);
  state.counters["per_op"] =
      benchmark::Counter(double(n), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_LoadPlan(benchmark::State& state) {
  const int n = int(state.range(0));
  vkc::codegen::CompileOptions options;
  options.target = lavapipe();
  const std::string json = vkc::manifest_to_json(vkc::codegen::compile_graph(chain(Mode::Unfused, n), options).manifest);
  for (auto _ : state) {
    vkc::Manifest m = vkc::manifest_from_json(json);
    std::vector<bool> barriers = vkc::rt::plan_barriers(m);
    benchmark::DoNotOptimize(barriers);
  }
  state.counters["per_op"] =
      benchmark::Counter(double(n), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void chain_sizes(benchmark::internal::Benchmark* b) {
  for (int n : {2500, 5000, 10000, 20000}) b->Arg(n);
  b->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
}

BENCHMARK_CAPTURE(BM_CompileChain, fused, Mode::Fused)->Apply(chain_sizes);
BENCHMARK_CAPTURE(BM_CompileChain, random, Mode::Random)->Apply(chain_sizes);
BENCHMARK_CAPTURE(BM_CompileChain, unfused, Mode::Unfused)->Apply(chain_sizes);
BENCHMARK_CAPTURE(BM_CompileChain, reshapes, Mode::Reshapes)->Apply(chain_sizes);
BENCHMARK(BM_LoadPlan)->Apply(chain_sizes);

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--write-chain") == 0) {
    const std::string m = argv[2];
    const int n = std::atoi(argv[3]);
    const Mode modes[] = {Mode::Fused, Mode::Random, Mode::Unfused, Mode::Reshapes};
    const Mode* mode = std::find_if(std::begin(modes), std::end(modes), [&](Mode x) { return m == mode_name(x); });
    if (mode == std::end(modes) || n < 1) {
      std::fprintf(stderr, "usage: vkc-compile-bench --write-chain fused|random|unfused|reshapes N\n");
      return 1;
    }
    std::fputs(vkc::ir::print_graph(chain(*mode, n)).c_str(), stdout);
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
