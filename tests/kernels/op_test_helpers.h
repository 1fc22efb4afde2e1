// Shared by the kernel test suites of contraction, pooling, reductions, data movement and
// quantization: one-op graphs, differential runs against the reference, and a check that a
// kernel compiles (fits) for every known target profile.
#pragma once

#include <algorithm>

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "codegen/compiler.h"
#include "codegen/dispatch_group.h"
#include "codegen/kernel_context.h"
#include "codegen/storage_plan.h"
#include "common/gpu_harness.h"
#include "ir/graph.h"
#include "module/target_profiles.h"
#include "support/error.h"

namespace vkc::test {

using Ints = std::vector<int64_t>;

// A graph with inputs x0, x1, ... of the given types, one op and its result as output "y".
inline ir::Graph one_op_graph(ir::OpKind kind, const std::vector<ir::TensorType>& inputs,
                              ir::AttrMap attrs = {}) {
  ir::Graph g;
  std::vector<ir::Value*> operands;
  for (size_t i = 0; i < inputs.size(); ++i) operands.push_back(g.add_input("x" + std::to_string(i), inputs[i]));
  ir::Op* op = g.add_op(kind, operands, std::move(attrs), "under_test");
  g.add_output(op->result(), "y");
  return g;
}

inline ir::TensorType f32(Shape s) { return {DType::f32, std::move(s)}; }

// The error compiling `g` with `o` gives, or "(compiled)" when it compiles: for tests that a
// refusal (a forced strategy that cannot run, a budget) names its reason.
inline std::string compile_error(const ir::Graph& g, const codegen::CompileOptions& o) {
  try {
    codegen::compile_graph(g, o);
  } catch (const Error& e) {
    return e.what();
  }
  return "(compiled)";
}

// Runs on the device (optionally planned for a profile, optionally forcing a strategy for the
// op) and compares with the reference.
inline void expect_gpu_matches(const ir::Graph& g, const std::map<std::string, HostTensor>& inputs,
                               const std::string& op, const std::string& strategy = "",
                               const std::string& target = "", double rel_tol = 1e-5) {
  GpuRunOptions o;
  if (!strategy.empty()) o.forced_strategy[op] = strategy;
  o.target = target;
  o.rel_tol = rel_tol;
  SCOPED_TRACE("strategy '" + strategy + "' target '" + target + "'");
  try {
    GpuRun run = run_on_gpu(g, inputs, o);
    EXPECT_TRUE(outputs_match(run, o));
    // The forced strategy must really be the one that ran ("tiled=64x64x16/4x4/1": "tiled ..."; under
    // the split: by every piece of the op, not by the slices, copies and sums around them).
    const std::string name = strategy.substr(0, strategy.find('='));
    for (const DispatchDesc& d : run.module.manifest.dispatches) {
      if (split_testing() && !strategy.empty() &&
          std::none_of(d.ops.begin(), d.ops.end(), [&](const std::string& o) { return o.rfind(op, 0) == 0; }))
        continue;
      EXPECT_EQ(d.strategy.rfind(name, 0), 0u) << d.name << " ran '" << d.strategy << "'";
    }
  } catch (const Error& e) {
    ADD_FAILURE() << e.what();
  }
}

inline void expect_gpu_matches(const ir::Graph& g, uint32_t seed, const std::string& op,
                               const std::string& strategy = "", const std::string& target = "",
                               double rel_tol = 1e-5) {
  expect_gpu_matches(g, random_inputs(g, seed), op, strategy, target, rel_tol);
}

// The GLSL of every kernel the graph's dispatches emit for `t` with `forced` strategies, fused as
// the compiler fuses (no GPU).
inline std::vector<codegen::EmittedKernel> emitted_kernels(const ir::Graph& graph, const TargetLimits& t,
                                                    const std::map<std::string, std::string>& forced) {
  codegen::StoragePlan storage = codegen::plan_storage(graph);
  std::vector<codegen::EmittedKernel> kernels;
  for (const codegen::DispatchGroup& group : codegen::form_dispatch_groups(graph, t, storage.zero_copy)) {
    codegen::KernelContext ctx{t, graph, storage, forced};
    std::vector<codegen::ScratchTensor> scratch;
    for (codegen::EmittedKernel& k : codegen::find_kernel_emitter(group)(group, ctx, scratch)) kernels.push_back(std::move(k));
  }
  return kernels;
}

inline std::string emitted_glsl(const ir::Graph& graph, const TargetLimits& t, const std::map<std::string, std::string>& forced) {
  std::string text;
  for (const codegen::EmittedKernel& k : emitted_kernels(graph, t, forced)) text += k.glsl;
  return text;
}

// Compiles (no run) for every known profile, proving the plan fits each one's limits.
inline void expect_compiles_everywhere(const ir::Graph& g, const std::string& op = "",
                                       const std::string& strategy = "") {
  for (const std::string& name : known_targets()) {
    codegen::CompileOptions co;
    co.target = find_target(name).limits;
    if (!strategy.empty()) co.forced_strategy[op] = strategy;
    try {
      codegen::compile_graph(g, co);
    } catch (const Error& e) {
      ADD_FAILURE() << "target " << name << " strategy '" << strategy << "': " << e.what();
    }
  }
}

}  // namespace vkc::test
