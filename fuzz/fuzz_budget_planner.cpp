// libFuzzer target: the budget planner. Each input decodes into one op (conv, conv_transpose,
// matmul, pooling, a reduction, sort or topk) with shapes and attributes the verifier accepts and
// a random TargetLimits, then runs codegen::compile_graph.
//
// Property: the compiler either refuses with a clear vkc::Error or returns a module in which every
// dispatch fits the limits, re-checked here from the emitted SPIR-V and the manifest independently
// of the compiler's own checks. A message starting with "internal" means a planner produced a plan
// the target cannot hold instead of falling back or refusing, and counts as a failure.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "codegen/compiler.h"
#include "codegen/spirv_tools.h"
#include "fuzz_common.h"
#include "ir/graph.h"
#include "support/error.h"

namespace {

using vkc::Shape;
using vkc::ir::AttrMap;
using Ints = std::vector<int64_t>;

// Shapes are capped so that one compile stays well under a second; limits are what we search.
constexpr int64_t kMaxDim = 96;

vkc::TargetLimits random_limits(FuzzedDataProvider& in) {
  vkc::TargetLimits t;
  t.name = "fuzz";
  t.vulkan_version = in.PickValueInArray({"1.1", "1.2", "1.3"});
  t.max_compute_shared_memory_size = in.ConsumeIntegralInRange<uint32_t>(1024, 65536);
  t.max_compute_work_group_invocations = in.ConsumeIntegralInRange<uint32_t>(64, 1024);
  t.max_compute_work_group_size = {in.ConsumeIntegralInRange<uint32_t>(64, 1024),
                                   in.ConsumeIntegralInRange<uint32_t>(1, 1024),
                                   in.ConsumeIntegralInRange<uint32_t>(1, 64)};
  t.max_compute_work_group_count = {in.ConsumeIntegralInRange<uint32_t>(65535, 0x7fffffff),
                                    in.ConsumeIntegralInRange<uint32_t>(65535, 65535 * 4),
                                    in.ConsumeIntegralInRange<uint32_t>(65535, 65535 * 4)};
  uint32_t sg = in.PickValueInArray({0u, 4u, 8u, 16u, 32u, 64u, 128u});
  t.subgroup_size = sg;
  t.min_subgroup_size = sg ? std::max(4u, sg / 2) : 0;
  t.max_subgroup_size = sg ? sg : 0;
  t.max_storage_buffer_range = in.ConsumeIntegralInRange<uint64_t>(uint64_t(1) << 27, (uint64_t(1) << 32) - 1);
  t.max_push_constants_size = in.PickValueInArray({128u, 256u});
  t.min_storage_buffer_offset_alignment = in.PickValueInArray({4u, 16u, 64u, 256u});
  t.max_per_stage_descriptor_storage_buffers = in.ConsumeIntegralInRange<uint32_t>(4, 32);
  t.shader_float16 = in.ConsumeBool();
  t.shader_int8 = in.ConsumeBool();
  t.shader_int64 = in.ConsumeBool();
  t.storage_buffer_16bit = in.ConsumeBool();
  t.storage_buffer_8bit = in.ConsumeBool();
  t.subgroup_arithmetic = sg && in.ConsumeBool();
  t.subgroup_shuffle = sg && in.ConsumeBool();
  t.compute_units = in.ConsumeIntegralInRange<uint32_t>(0, 512);  // steers split-K conv plans
  return t;
}

int64_t dim(FuzzedDataProvider& in, int64_t hi = kMaxDim) { return in.ConsumeIntegralInRange<int64_t>(1, hi); }

Ints ints(FuzzedDataProvider& in, int n, int64_t lo, int64_t hi) {
  Ints v;
  for (int i = 0; i < n; ++i) v.push_back(in.ConsumeIntegralInRange<int64_t>(lo, hi));
  return v;
}

// A layout string: `fixed` letters then the spatial letters, shuffled when the input says so.
// Returns it with the permutation applied to the logical dims (fixed then spatial order).
std::pair<std::string, Shape> layout(FuzzedDataProvider& in, const std::string& logical, const Shape& dims) {
  std::vector<int> order(logical.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = int(i);
  if (in.ConsumeBool()) {
    for (size_t i = order.size(); i > 1; --i)
      std::swap(order[i - 1], order[in.ConsumeIntegralInRange<size_t>(0, i - 1)]);
  }
  std::string letters;
  Shape shape;
  for (int i : order) {
    letters += logical[size_t(i)];
    shape.push_back(dims[size_t(i)]);
  }
  return {letters, shape};
}

const char* spatial_letters(int s) { return s == 1 ? "W" : s == 2 ? "HW" : "DHW"; }

// Conv or conv_transpose: input, filter and an optional bias, any layouts.
vkc::ir::Op* add_conv(vkc::ir::Graph& g, FuzzedDataProvider& in, bool transpose) {
  int s = in.ConsumeIntegralInRange<int>(1, 3);
  int64_t groups = in.ConsumeBool() ? 1 : in.ConsumeIntegralInRange<int64_t>(1, 8);
  int64_t n = dim(in, 4), cg = dim(in, 16), fg = dim(in, 16);
  Ints spatial = ints(in, s, 1, s == 3 ? 24 : 64);
  Ints kernel = ints(in, s, 1, s == 3 ? 5 : 9);
  std::string sp = spatial_letters(s);
  Shape in_dims{n, cg * groups};
  in_dims.insert(in_dims.end(), spatial.begin(), spatial.end());
  Shape f_dims = transpose ? Shape{cg * groups, fg} : Shape{fg * groups, cg};
  f_dims.insert(f_dims.end(), kernel.begin(), kernel.end());
  auto [in_layout, in_shape] = layout(in, "NC" + sp, in_dims);
  auto [f_layout, f_shape] = layout(in, transpose ? "CF" + sp : "FC" + sp, f_dims);
  auto [out_layout, unused] = layout(in, "NC" + sp, in_dims);
  AttrMap a{{"groups", groups},
            {"strides", ints(in, s, 1, 4)},
            {"dilations", ints(in, s, 1, 3)},
            {"pads", ints(in, 2 * s, 0, 4)},
            {"input_layout", in_layout},
            {"filter_layout", f_layout},
            {"output_layout", out_layout}};
  if (transpose && in.ConsumeBool()) a["output_padding"] = ints(in, s, 0, 1);
  std::vector<vkc::ir::Value*> operands{g.add_input("x", {vkc::DType::f32, in_shape}),
                                        g.add_input("w", {vkc::DType::f32, f_shape})};
  if (in.ConsumeBool()) operands.push_back(g.add_input("b", {vkc::DType::f32, {fg * groups}}));
  return g.add_op(transpose ? vkc::ir::OpKind::ConvTranspose : vkc::ir::OpKind::Conv, operands, a, "op");
}

vkc::ir::Op* add_matmul(vkc::ir::Graph& g, FuzzedDataProvider& in) {
  int64_t m = dim(in, 512), k = dim(in, 512), n = dim(in, 512);
  bool ta = in.ConsumeBool(), tb = in.ConsumeBool();
  Shape batch;
  if (in.ConsumeBool()) batch.push_back(dim(in, 8));
  Shape a = batch, b = batch;
  a.push_back(ta ? k : m);
  a.push_back(ta ? m : k);
  b.push_back(tb ? n : k);
  b.push_back(tb ? k : n);
  return g.add_op(vkc::ir::OpKind::MatMul,
                  {g.add_input("a", {vkc::DType::f32, a}), g.add_input("b", {vkc::DType::f32, b})},
                  {{"transpose_a", ta}, {"transpose_b", tb}}, "op");
}

vkc::ir::Op* add_pool(vkc::ir::Graph& g, FuzzedDataProvider& in) {
  int s = in.ConsumeIntegralInRange<int>(1, 3);
  Shape dims{dim(in, 4), dim(in, 32)};
  for (int i = 0; i < s; ++i) dims.push_back(dim(in, s == 3 ? 24 : 64));
  auto [letters, shape] = layout(in, std::string("NC") + spatial_letters(s), dims);
  AttrMap a{{"layout", letters}};
  if (in.ConsumeIntegralInRange<int>(0, 4) == 0) {
    a["global"] = true;
  } else {
    Ints kernel = ints(in, s, 1, 7);
    Ints pads;
    for (int64_t k : kernel) pads.push_back(in.ConsumeIntegralInRange<int64_t>(0, k - 1));
    for (int64_t k : kernel) pads.push_back(in.ConsumeIntegralInRange<int64_t>(0, k - 1));
    a["kernel"] = kernel;
    a["pads"] = pads;
    a["strides"] = ints(in, s, 1, 4);
    a["dilations"] = ints(in, s, 1, 2);
    a["ceil_mode"] = in.ConsumeBool();
    a["count_include_pad"] = in.ConsumeBool();
  }
  auto kind = in.ConsumeBool() ? vkc::ir::OpKind::MaxPool : vkc::ir::OpKind::AvgPool;
  return g.add_op(kind, {g.add_input("x", {vkc::DType::f32, shape})}, a, "op");
}

Shape random_shape(FuzzedDataProvider& in, int max_rank, int64_t max_numel) {
  int rank = in.ConsumeIntegralInRange<int>(1, max_rank);
  Shape shape;
  int64_t numel = 1;
  for (int i = 0; i < rank; ++i) {
    int64_t d = std::min(dim(in, 4096), std::max<int64_t>(1, max_numel / numel));
    shape.push_back(d);
    numel *= d;
  }
  return shape;
}

vkc::ir::Op* add_reduce(vkc::ir::Graph& g, FuzzedDataProvider& in) {
  Shape shape = random_shape(in, 4, 1 << 20);
  int rank = int(shape.size());
  auto kind = in.PickValueInArray({vkc::ir::OpKind::ReduceSum, vkc::ir::OpKind::ReduceMean,
                                   vkc::ir::OpKind::ReduceMax, vkc::ir::OpKind::ReduceMin,
                                   vkc::ir::OpKind::ArgMax, vkc::ir::OpKind::ArgMin});
  AttrMap a{{"keepdims", in.ConsumeBool()}};
  if (kind == vkc::ir::OpKind::ArgMax || kind == vkc::ir::OpKind::ArgMin) {
    a["axis"] = in.ConsumeIntegralInRange<int64_t>(-rank, rank - 1);
  } else {
    Ints axes;
    for (int i = 0; i < rank; ++i)
      if (in.ConsumeBool()) axes.push_back(i);
    if (!axes.empty() || in.ConsumeBool()) a["axes"] = axes;
  }
  return g.add_op(kind, {g.add_input("x", {vkc::DType::f32, shape})}, a, "op");
}

vkc::ir::Op* add_sort(vkc::ir::Graph& g, FuzzedDataProvider& in, bool topk) {
  Shape shape = random_shape(in, 3, 1 << 18);
  int rank = int(shape.size());
  int64_t axis = in.ConsumeIntegralInRange<int64_t>(-rank, rank - 1);
  vkc::DType key = in.ConsumeBool() ? vkc::DType::f32 : vkc::DType::i32;
  std::vector<vkc::ir::Value*> operands{g.add_input("x", {key, shape})};
  if (topk) {
    int64_t extent = shape[size_t(axis < 0 ? axis + rank : axis)];
    AttrMap a{{"axis", axis},
              {"k", in.ConsumeIntegralInRange<int64_t>(1, extent)},
              {"largest", in.ConsumeBool()},
              {"sorted", in.ConsumeBool()}};
    if (in.ConsumeBool()) a["index_type"] = std::string(in.ConsumeBool() ? "i32" : "i64");
    return g.add_op(vkc::ir::OpKind::TopK, operands, a, "op");
  }
  int payloads = in.ConsumeIntegralInRange<int>(0, 2);
  for (int i = 0; i < payloads; ++i)
    operands.push_back(g.add_input("p" + std::to_string(i), {vkc::DType::f32, shape}));
  return g.add_op(vkc::ir::OpKind::Sort, operands, {{"axis", axis}, {"descending", in.ConsumeBool()}}, "op");
}

bool is_internal(const std::string& message) { return message.find("internal") != std::string::npos; }

// Everything the manifest and the SPIR-V say about a dispatch must fit `t`.
void check_fits(const vkc::ModuleImage& module, const vkc::TargetLimits& t) {
  const vkc::Manifest& m = module.manifest;
  for (const vkc::DispatchDesc& d : m.dispatches) {
    auto it = module.spirv.find(d.spv);
    if (it == module.spirv.end()) vkc::fuzz::fail("dispatch " + d.name + " has no SPIR-V");
    std::vector<std::pair<uint32_t, uint32_t>> spec;
    for (const vkc::SpecConstant& c : d.spec_constants) spec.push_back({c.id, c.value});
    uint32_t shared = vkc::codegen::measure_workgroup_memory(it->second, spec);
    std::array<uint32_t, 3> local = vkc::codegen::read_local_size(it->second, spec);
    uint64_t invocations = uint64_t(local[0]) * local[1] * local[2];
    std::string what = "dispatch " + d.name + " (" + d.strategy + ")";
    if (shared > t.max_compute_shared_memory_size)
      vkc::fuzz::fail(what + " uses " + std::to_string(shared) + " bytes of workgroup memory");
    if (invocations > t.max_compute_work_group_invocations)
      vkc::fuzz::fail(what + " has " + std::to_string(invocations) + " invocations");
    for (int a = 0; a < 3; ++a) {
      if (local[a] == 0 || local[a] > t.max_compute_work_group_size[a])
        vkc::fuzz::fail(what + " local size out of range on axis " + std::to_string(a));
      if (d.workgroup_count[a] == 0 || d.workgroup_count[a] > t.max_compute_work_group_count[a])
        vkc::fuzz::fail(what + " grid out of range on axis " + std::to_string(a));
    }
    if (d.push_constants.size() * 4 > t.max_push_constants_size) vkc::fuzz::fail(what + " push constants too big");
    if (d.bindings.size() > t.max_per_stage_descriptor_storage_buffers) vkc::fuzz::fail(what + " binds too many buffers");
    // What a dispatch binds is the tensor it names: a view of a larger tensor (a piece of one split
    // over buffer ranges) binds only its own bytes.
    for (const vkc::BindingDesc& b : d.bindings)
      if (m.tensor(b.tensor).size_bytes() > t.max_storage_buffer_range)
        vkc::fuzz::fail(what + " binds " + b.tensor + " beyond maxStorageBufferRange");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  vkc::codegen::CompileOptions options;
  options.target = random_limits(in);
  options.optimize_spirv = in.ConsumeBool();
  vkc::ir::Graph g;
  try {
    vkc::ir::Op* op = nullptr;
    switch (in.ConsumeIntegralInRange<int>(0, 6)) {
      case 0: op = add_conv(g, in, false); break;
      case 1: op = add_conv(g, in, true); break;
      case 2: op = add_matmul(g, in); break;
      case 3: op = add_pool(g, in); break;
      case 4: op = add_reduce(g, in); break;
      case 5: op = add_sort(g, in, false); break;
      default: op = add_sort(g, in, true); break;
    }
    for (size_t i = 0; i < op->results.size(); ++i) g.add_output(op->result(int(i)), "y" + std::to_string(i));
  } catch (const vkc::Error&) {
    return 0;  // the verifier rejected the op: not an input for the planner
  }
  vkc::ModuleImage module;
  try {
    module = vkc::codegen::compile_graph(g, options);
  } catch (const vkc::Error& e) {
    vkc::fuzz::check_error_message(e.what());
    if (is_internal(e.what())) vkc::fuzz::fail(std::string("planner produced an unfit plan: ") + e.what());
    return 0;
  }
  check_fits(module, options.target);
  return 0;
}
