// Hostile run-time indices (issue 23): gather and scatter kernels fed indices far outside their
// dims (INT64_MIN/MAX, +-2^32, -n - 1, n) must give the defined results of docs/ops.md (zeros,
// skipped updates) exactly, both on a plain device under the validation layer and on a device
// with robust buffer access (vk-run --robust). Robustness would hide a stray read as a zero, so
// the plain run is the one that proves the kernels never leave their bindings; the robust run
// proves the documented result does not depend on it.
#include <gtest/gtest.h>

#include <climits>
#include <memory>

#include "common/gpu_harness.h"
#include "hostile/hostile_util.h"
#include "runtime/runtime.h"

namespace vkc::hostile {
namespace {

using K = ir::OpKind;

ir::Graph graph_of(K kind, const std::vector<ir::TensorType>& inputs, ir::AttrMap attrs = {}) {
  ir::Graph g;
  std::vector<ir::Value*> operands;
  for (size_t i = 0; i < inputs.size(); ++i) operands.push_back(g.add_input("x" + std::to_string(i), inputs[i]));
  g.add_output(g.add_op(kind, operands, std::move(attrs), "hostile")->result(), "y");
  return g;
}

void expect_exact(const ir::Graph& g, const std::map<std::string, HostTensor>& in, rt::Context* ctx,
                  const std::string& scatter_nd_strategy = "") {
  test::GpuRunOptions o;
  o.context = ctx;
  if (!scatter_nd_strategy.empty()) o.forced_strategy["scatter_nd"] = scatter_nd_strategy;
  test::GpuRun run = test::run_on_gpu(g, in, o);
  EXPECT_TRUE(test::same_bytes(run.outputs.at("y"), run.reference.at("y")));
}

TEST(HostileRuntimeIndices, FarOutOfRangeIndicesGiveTheDefinedResult) {
  const std::vector<int64_t> hostile = {INT64_MIN, INT64_MAX, int64_t(1) << 32, -(int64_t(1) << 32), -6, 5,
                                        -5, 4, INT32_MIN, INT32_MAX};
  HostTensor idx = make_i64({10}, hostile);
  HostTensor idx2 = make_i64({10, 1}, hostile);
  HostTensor data(DType::f32, {5, 3});
  for (int64_t i = 0; i < data.numel(); ++i) data.set_f64(i, double(i) + 0.5);
  HostTensor updates(DType::f32, {10, 3});
  for (int64_t i = 0; i < updates.numel(); ++i) updates.set_f64(i, -double(i));
  HostTensor upd_e(DType::f32, {10, 3});
  HostTensor idx_e(DType::i64, {10, 3});
  for (int64_t i = 0; i < 30; ++i) {
    idx_e.set_i64(i, hostile[size_t(i % 10)]);
    upd_e.set_f64(i, double(i) * 2);
  }
  rt::ContextOptions robust_options;
  robust_options.robust_buffer_access = true;
  auto robust = std::make_unique<rt::Context>(robust_options);
  for (rt::Context* ctx : {static_cast<rt::Context*>(nullptr), robust.get()}) {
    SCOPED_TRACE(ctx ? "robust buffer access" : "validation layer");
    expect_exact(graph_of(K::Gather, {{DType::f32, {5, 3}}, {DType::i64, {10}}}), {{"x0", data}, {"x1", idx}}, ctx);
    expect_exact(graph_of(K::GatherND, {{DType::f32, {5, 3}}, {DType::i64, {10, 1}}}), {{"x0", data}, {"x1", idx2}},
                 ctx);
    for (const char* strategy : {"owner scan", "update scan"})
      expect_exact(graph_of(K::ScatterND, {{DType::f32, {5, 3}}, {DType::i64, {10, 1}}, {DType::f32, {10, 3}}},
                            {{"reduction", std::string("add")}}),
                   {{"x0", data}, {"x1", idx2}, {"x2", updates}}, ctx, strategy);
    expect_exact(graph_of(K::ScatterElements, {{DType::f32, {5, 3}}, {DType::i64, {10, 3}}, {DType::f32, {10, 3}}}),
                 {{"x0", data}, {"x1", idx_e}, {"x2", upd_e}}, ctx);
  }
}

}  // namespace
}  // namespace vkc::hostile
