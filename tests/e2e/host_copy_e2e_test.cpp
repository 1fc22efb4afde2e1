// Executions whose inputs and outputs are large enough for the threaded host copy (runtime/
// host_copy.h, vkc issue 21) match the reference interpreter: uploads into mapped storage and into
// staging buffers, with one copy thread and with four, outputs poisoned with NaN first. (Buffers
// held in several allocations: tests/runtime/host_copy_test.cpp.)
#include <gtest/gtest.h>

#include "common/copy_setting.h"
#include "common/gpu_harness.h"
#include "runtime/context_internal.h"
#include "runtime/host_copy.h"

namespace vkc::test {
namespace {

using ir::OpKind;

// y = relu(x) + x2 over 5 MiB + 12 bytes per tensor: above the threshold, and not a whole number
// of chunks.
ir::Graph relu_add() {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {5, 262147}});
  ir::Value* x2 = g.add_input("x2", {DType::f32, {5, 262147}});
  ir::Value* r = g.add_op(OpKind::Relu, {x})->result();
  g.add_output(g.add_op(OpKind::Add, {r, x2})->result(), "y");
  return g;
}

TEST(HostCopyE2E, LargeInputsAndOutputsMatchTheReference) {
  const ir::Graph g = relu_add();
  ASSERT_GT(uint64_t(g.inputs()[0]->type.size_bytes()), rt::kParallelCopyMinBytes);
  for (unsigned threads : {1u, 4u})
    for (bool staging : {false, true}) {
      SCOPED_TRACE(cat(threads, " copy threads, ", staging ? "staging buffers" : "mapped storage"));
      CopySetting setting(shared_context(), threads, staging);
      EXPECT_TRUE(outputs_match(run_on_gpu(g, random_inputs(g, 21 + threads))));
      EXPECT_EQ(shared_context().impl().host_copy.pool() != nullptr, threads > 1);
    }
}

}  // namespace
}  // namespace vkc::test
