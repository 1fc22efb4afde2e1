#include "common/gpu_harness.h"

#include <algorithm>
#include <cstdlib>

#include <gtest/gtest.h>

#include <cstring>

#include "ir/interpreter.h"
#include "module/target_profiles.h"

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

bool split_testing() {
  const char* cap = std::getenv("VKC_TEST_MAX_BINDING");
  return cap && *cap;
}

GpuRun run_on_gpu(const ir::Graph& graph, const std::map<std::string, HostTensor>& inputs,
                  const GpuRunOptions& options) {
  rt::Context& ctx = options.context ? *options.context : shared_context();
  codegen::CompileOptions co;
  co.target = options.target.empty() ? ctx.limits() : find_target(options.target).limits;
  if (options.adjust_target) options.adjust_target(co.target);
  // VKC_TEST_MAX_BINDING=N: plan every differential run as if maxStorageBufferRange were N bytes,
  // so that the suites exercise the range split (issue 25) on their own graphs.
  if (const char* cap = std::getenv("VKC_TEST_MAX_BINDING"); cap && *cap)
    co.target.max_storage_buffer_range = std::min<uint64_t>(co.target.max_storage_buffer_range, std::stoull(cap));
  co.forced_strategy = options.forced_strategy;
  co.precision = options.precision;
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

::testing::AssertionResult same_bytes(const HostTensor& actual, const HostTensor& expected) {
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape())
    return ::testing::AssertionFailure() << "dtype/shape differ";
  size_t width = dtype_size(expected.dtype());
  for (int64_t i = 0; i < expected.numel(); ++i)
    if (std::memcmp(actual.data() + i * width, expected.data() + i * width, width) != 0)
      return ::testing::AssertionFailure() << "element " << i << ": got " << actual.get_f64(i)
                                           << ", expected " << expected.get_f64(i);
  return ::testing::AssertionSuccess();
}

}  // namespace vkc::test
