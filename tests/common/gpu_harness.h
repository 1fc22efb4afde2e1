// Differential testing on the live device (lavapipe in CI): compile a graph, run it with outputs
// poisoned, compare every output with the float64 reference interpreter.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "codegen/compiler.h"
#include "common/test_util.h"
#include "ir/graph.h"
#include "runtime/runtime.h"

namespace vkc::test {

// One device context per test binary (device creation is slow on lavapipe). Validation is on
// whenever VKC_VALIDATION=1 (CTest sets it); any validation message fails the execution.
rt::Context& shared_context();

// Whether VKC_TEST_MAX_BINDING is set: differential runs are planned with a binding of that many
// bytes at most, so ops beyond it are split into pieces (issue 25). Expectations on how an op is
// computed (its strategy, its dispatch count, its scratch) do not hold for the pieces and the
// slices, copies, adds and concats around them; tests skip those under it, never the numeric
// comparison.
bool split_testing();

struct GpuRun {
  ModuleImage module;
  std::map<std::string, HostTensor> outputs;    // from the GPU
  std::map<std::string, HostTensor> reference;  // from the interpreter
};

struct GpuRunOptions {
  std::map<std::string, std::string> forced_strategy;
  double rel_tol = 1e-5;
  double abs_tol = 1e-6;
  // Compile for this profile's limits instead of the device's (must still fit the device).
  std::string target;
  // Edits the limits before planning, for the hints a device may run either way: e.g. plan with
  // another vendor's kernel configs (TargetLimits::vendor) or a different compute-unit count.
  std::function<void(TargetLimits&)> adjust_target;
  // Run on this context instead of shared_context() (e.g. one made with other ContextOptions).
  rt::Context* context = nullptr;
  // Compile in this precision (the reference is always the float64 interpreter on the graph).
  Precision precision = Precision::fp32;
};

// Random inputs (seeded) for every graph input: floats uniform in [-1, 1), ints in [-8, 8].
std::map<std::string, HostTensor> random_inputs(const ir::Graph& graph, uint32_t seed);

// Compiles for the device (or options.target), runs, and returns outputs with the reference.
GpuRun run_on_gpu(const ir::Graph& graph, const std::map<std::string, HostTensor>& inputs,
                  const GpuRunOptions& options = {});

// gtest assertion helper: every output matches the reference within tolerances. Use as
//   EXPECT_TRUE(outputs_match(run, options));
::testing::AssertionResult outputs_match(const GpuRun& run, const GpuRunOptions& options = {});

// Byte-for-byte equality of dtype, shape and data: for ops that only move elements (sort, topk,
// data movement), where NaN payloads and -0.0 must survive exactly.
::testing::AssertionResult same_bytes(const HostTensor& actual, const HostTensor& expected);

}  // namespace vkc::test
