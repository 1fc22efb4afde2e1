// Shared by the conv kernel tests: building conv graphs, forcing every strategy that applies,
// and compiling for every target profile.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "codegen/compiler.h"
#include "codegen/conv_planner.h"
#include "common/gpu_harness.h"
#include "ir/conv_geometry.h"
#include "ir/graph.h"
#include "module/target_profiles.h"
#include "support/error.h"

namespace vkc::test {

// A conv or conv_transpose with inputs "x", "w" (and "b") and output "y".
inline ir::Graph conv_graph(ir::OpKind kind, const Shape& input, const Shape& filter, bool bias,
                            const ir::AttrMap& attrs) {
  ir::Graph g;
  std::vector<ir::Value*> operands{g.add_input("x", {DType::f32, input}), g.add_input("w", {DType::f32, filter})};
  ir::Op* probe_op = nullptr;
  if (bias) {
    // The bias length is the output channel count, which the geometry knows.
    ir::Graph probe;
    ir::Value* px = probe.add_input("x", {DType::f32, input});
    ir::Value* pw = probe.add_input("w", {DType::f32, filter});
    probe_op = probe.add_op(kind, {px, pw}, attrs);
    int64_t channels = ir::conv_geometry(*probe_op).out_channels;
    operands.push_back(g.add_input("b", {DType::f32, {channels}}));
  }
  g.add_output(g.add_op(kind, operands, attrs, "conv")->result(), "y");
  return g;
}

inline const ir::Op& only_conv(const ir::Graph& g) {
  for (const ir::Op* op : g.ops())
    if (op->kind == ir::OpKind::Conv || op->kind == ir::OpKind::ConvTranspose) return *op;
  throw Error("test graph has no conv");
}

// The names of the strategies the planner accepts for a conv (tests force them by name).
inline std::vector<std::string> applicable_strategy_names(const ir::ConvGeometry& g, const TargetLimits& t,
                                                          uint32_t element_bytes) {
  std::vector<std::string> names;
  for (codegen::ConvStrategy s : codegen::applicable_conv_strategies(g, t, element_bytes))
    names.emplace_back(codegen::conv_strategy_name(s));
  return names;
}

// The strategies the planner accepts for the graph's conv on lavapipe.
inline std::vector<std::string> lavapipe_strategies(const ir::Graph& g) {
  return applicable_strategy_names(ir::conv_geometry(only_conv(g)), find_target("lavapipe").limits, 4);
}

// Compiles for a profile and checks every dispatch against the profile's limits (the compiler
// checks too; this keeps the test meaningful if that check ever moves).
inline ::testing::AssertionResult compiles_within(const ir::Graph& g, const std::string& target) {
  codegen::CompileOptions o;
  o.target = find_target(target).limits;
  try {
    ModuleImage m = codegen::compile_graph(g, o);
    for (const DispatchDesc& d : m.manifest.dispatches) {
      if (d.workgroup_memory_bytes > o.target.max_compute_shared_memory_size)
        return ::testing::AssertionFailure() << target << ": " << d.name << " uses "
                                             << d.workgroup_memory_bytes << " bytes";
      uint64_t inv = uint64_t(d.workgroup_size[0]) * d.workgroup_size[1] * d.workgroup_size[2];
      if (inv > o.target.max_compute_work_group_invocations)
        return ::testing::AssertionFailure() << target << ": " << d.name << " uses " << inv << " invocations";
    }
  } catch (const Error& e) {
    return ::testing::AssertionFailure() << target << ": " << e.what();
  }
  return ::testing::AssertionSuccess();
}

// Runs the graph on lavapipe with `strategy` forced on its conv ("" for the planner's choice).
inline GpuRun run_conv(const ir::Graph& g, const std::map<std::string, HostTensor>& inputs,
                       const std::string& strategy) {
  GpuRunOptions o;
  if (!strategy.empty()) o.forced_strategy[std::string(ir::op_name(only_conv(g).kind))] = strategy;
  return run_on_gpu(g, inputs, o);
}

}  // namespace vkc::test
