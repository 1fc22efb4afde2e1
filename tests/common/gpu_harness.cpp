#include "common/gpu_harness.h"

#include <gtest/gtest.h>

#include "codegen/targets.h"
#include "ir/interpreter.h"

namespace vkc::test {

rt::Context& shared_context() {
  static rt::Context context{};
  return context;
}

std::map<std::string, HostTensor> random_inputs(const ir::Graph& graph, uint32_t seed) {
  std::mt19937 rng(seed);
  std::map<std::string, HostTensor> in;
  for (const ir::Value* v : graph.inputs()) {
    bool f = is_float(v->type.dtype);
    in[v->name] = random_tensor(v->type.dtype, v->type.shape, rng, f ? -1.0 : -8.0, f ? 1.0 : 8.0);
  }
  return in;
}

GpuRun run_on_gpu(const ir::Graph& graph, const std::map<std::string, HostTensor>& inputs,
                  const GpuRunOptions& options) {
  rt::Context& ctx = shared_context();
  codegen::CompileOptions co;
  co.target = options.target.empty() ? ctx.limits() : codegen::find_target(options.target).limits;
  co.forced_strategy = options.forced_strategy;
  GpuRun run;
  run.module = codegen::compile_graph(graph, co);
  rt::Program program(ctx, run.module);
  rt::ExecuteOptions eo;
  eo.poison_outputs = true;  // unwritten elements become NaN and fail the comparison
  run.outputs = program.execute(inputs, eo);
  run.reference = ir::interpret(graph, inputs);
  return run;
}

::testing::AssertionResult outputs_match(const GpuRun& run, const GpuRunOptions& options) {
  for (const auto& [name, ref] : run.reference) {
    auto it = run.outputs.find(name);
    if (it == run.outputs.end()) return ::testing::AssertionFailure() << "missing output " << name;
    Comparison c = compare(it->second, ref, options.rel_tol, options.abs_tol);
    if (!c.ok) return ::testing::AssertionFailure() << "output " << name << ": " << c.message;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace vkc::test
