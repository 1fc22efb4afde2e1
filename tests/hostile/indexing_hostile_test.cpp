// Tensors too big for the kernels' 32-bit indexing or for maxStorageBufferRange, and zero-size
// dims. An op must either be split into pieces that fit (codegen/range_split.h) or be refused
// clearly; a module whose indices wrap would silently read and write the wrong elements.
#include <gtest/gtest.h>

#include "codegen/compiler.h"
#include "codegen/range_split.h"
#include "hostile/hostile_util.h"
#include "ir/text_format.h"
#include "module/target_profiles.h"
#include "module/tensor_lookup.h"

namespace vkc::hostile {
namespace {

using Ints = std::vector<int64_t>;

// A target whose storage-buffer range is no obstacle, so the indexing limit is what gets tested.
TargetLimits huge_range_target() {
  TargetLimits t = find_target("nvidia").limits;
  t.name = "huge-range";
  t.max_storage_buffer_range = uint64_t(1) << 44;
  t.max_memory_allocation_size = 0;  // unknown: no allocation cap either
  return t;
}

std::string compile_error(const ir::Graph& g, const TargetLimits& t) {
  codegen::CompileOptions o;
  o.target = t;
  return error_of([&] { codegen::compile_graph(g, o); });
}

ir::Graph one_op(ir::OpKind kind, const std::vector<ir::TensorType>& inputs, ir::AttrMap attrs = {}) {
  ir::Graph g;
  std::vector<ir::Value*> operands;
  for (size_t i = 0; i < inputs.size(); ++i) operands.push_back(g.add_input("x" + std::to_string(i), inputs[i]));
  ir::Op* op = g.add_op(kind, operands, std::move(attrs), "big");
  for (size_t i = 0; i < op->results.size(); ++i) g.add_output(op->result(int(i)), "y" + std::to_string(i));
  return g;
}

ir::TensorType f32(Shape s) { return {DType::f32, std::move(s)}; }

// Every binding of a compiled module holds at most 2^32 - 1 elements (the kernels index with 32-bit
// unsigned integers; the op-level pieces hold at most kMaxPieceElements, a kernel's own scratch,
// e.g. radix sort's key-index pairs, up to twice that) and `range` bytes.
void expect_bindings_within(const ModuleImage& image, uint64_t range) {
  const TensorLookup tensors(image.manifest);
  for (const DispatchDesc& d : image.manifest.dispatches)
    for (const BindingDesc& b : d.bindings) {
      const TensorDesc& t = tensors.tensor(b.tensor);
      EXPECT_LE(shape_numel(t.shape), int64_t(UINT32_MAX)) << d.name << " binds " << t.name;
      EXPECT_LE(t.size_bytes(), range) << d.name << " binds " << t.name;
    }
}

TEST(HostileIndexing, Relu70000x70000FromTextIsSplit) {
  codegen::CompileOptions o;
  o.target = huge_range_target();
  ModuleImage image = codegen::compile_graph(ir::parse_graph_file(data_path("huge_70000x70000.vkir")), o);
  // 4.9e9 elements: pieces of at most 2^31 - 1 elements, 30678 rows each.
  ASSERT_EQ(image.manifest.dispatches.size(), 3u);
  EXPECT_NE(image.manifest.dispatches[0].notes.find("4900000000 elements, above 32-bit indexing"), std::string::npos)
      << image.manifest.dispatches[0].notes;
  expect_bindings_within(image, o.target.max_storage_buffer_range);
}

struct BigOp {
  const char* name;
  std::function<ir::Graph()> build;
};

// Each op family with 4.9e9 (> 2^32) elements in an operand or result.
std::vector<BigOp> big_ops() {
  const int64_t n = 70000;
  return {
      {"relu", [=] { return one_op(ir::OpKind::Relu, {f32({n, n})}); }},
      {"add_broadcast", [=] { return one_op(ir::OpKind::Add, {f32({n, 1}), f32({1, n})}); }},
      {"reduce_sum", [=] { return one_op(ir::OpKind::ReduceSum, {f32({n, n})}, {{"axes", Ints{1}}}); }},
      {"argmax", [=] { return one_op(ir::OpKind::ArgMax, {f32({n, n})}, {{"axis", int64_t(0)}}); }},
      {"softmax", [=] { return one_op(ir::OpKind::Softmax, {f32({n, n})}); }},
      {"transpose", [=] { return one_op(ir::OpKind::Transpose, {f32({n, n})}, {{"perm", Ints{1, 0}}}); }},
      {"matmul", [=] { return one_op(ir::OpKind::MatMul, {f32({n, n}), f32({n, 2})}); }},
      {"matmul_output", [=] { return one_op(ir::OpKind::MatMul, {f32({n, 1}), f32({1, n})}); }},
      {"conv", [=] { return one_op(ir::OpKind::Conv, {f32({1, 1, n, n}), f32({1, 1, 1, 1})}); }},
      {"conv_transpose",
       [=] { return one_op(ir::OpKind::ConvTranspose, {f32({1, 1, n / 2, n / 2}), f32({1, 1, 2, 2})}, {{"strides", Ints{2, 2}}}); }},
      {"max_pool", [=] { return one_op(ir::OpKind::MaxPool, {f32({1, 1, n, n})}, {{"kernel", Ints{1, 1}}}); }},
      {"sort", [=] { return one_op(ir::OpKind::Sort, {f32({n, n})}); }},
      {"topk", [=] { return one_op(ir::OpKind::TopK, {f32({n, n})}, {{"k", int64_t(2)}}); }},
      {"pad", [=] { return one_op(ir::OpKind::Pad, {f32({n, n - 1})}, {{"pads", Ints{0, 0, 0, 1}}}); }},
      {"concat", [=] { return one_op(ir::OpKind::Concat, {f32({n / 2, n}), f32({n / 2, n})}, {{"axis", int64_t(0)}}); }},
      {"cast_to_i8", [=] { return one_op(ir::OpKind::Cast, {f32({n, n})}, {{"to", std::string("i8")}}); }},
  };
}

// Each family either compiles into pieces within 32-bit indexing or is refused in one line.
TEST(HostileIndexing, EveryOpFamilyIsSplitOrRefusedBeyond32BitElements) {
  for (const BigOp& c : big_ops()) {
    SCOPED_TRACE(c.name);
    ir::Graph g;
    std::string build_error = error_of([&] { g = c.build(); });
    ASSERT_EQ(build_error, "(no error)") << "the test graph itself is invalid";
    codegen::CompileOptions o;
    o.target = huge_range_target();
    ModuleImage image;
    std::string m = error_of([&] { image = codegen::compile_graph(g, o); });
    if (m == "(no error)") {
      expect_bindings_within(image, o.target.max_storage_buffer_range);
      continue;
    }
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_EQ(m.find("internal"), std::string::npos) << m;
  }
}

TEST(HostileIndexing, TensorAboveMaxStorageBufferRangeIsSplit) {
  // 64 Mi f32 elements = 256 MiB, twice lavapipe's 2^27 range: two pieces of 4096 rows.
  ir::Graph g = one_op(ir::OpKind::Relu, {f32({8192, 8192})});
  codegen::CompileOptions o;
  o.target = find_target("lavapipe").limits;
  ModuleImage image = codegen::compile_graph(g, o);
  ASSERT_EQ(image.manifest.dispatches.size(), 2u);
  EXPECT_NE(image.manifest.dispatches[0].notes.find("268435456 bytes, above target 'lavapipe' maxStorageBufferRange 134217728"),
            std::string::npos) << image.manifest.dispatches[0].notes;
  expect_bindings_within(image, o.target.max_storage_buffer_range);
}

TEST(HostileIndexing, UnsplittableTensorAboveMaxStorageBufferRange) {
  // A 1-D sort of 4 GiB: every output element depends on every input element, and its blocks of
  // 2^23 keys (two of them and the sort's scratch in 2^27 bytes) would be 128, above the 64 the
  // range split sorts by blocks (codegen/range_split_sort.cpp). 2^26 keys are cut (8 blocks).
  ir::Graph g = one_op(ir::OpKind::Sort, {f32({int64_t(1) << 30})});
  std::string m = compile_error(g, find_target("lavapipe").limits);
  EXPECT_NE(m.find("sort 'big'"), std::string::npos) << m;
  EXPECT_NE(m.find("4294967296 bytes, above target 'lavapipe' maxStorageBufferRange 134217728"), std::string::npos) << m;
  EXPECT_NE(m.find("cannot be split"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
}

TEST(HostileIndexing, SortAboveMaxStorageBufferRangeIsSortedByBlocks) {
  ir::Graph g = one_op(ir::OpKind::Sort, {f32({int64_t(1) << 26})});
  codegen::CompileOptions o;
  o.target = find_target("lavapipe").limits;
  ModuleImage image = codegen::compile_graph(g, o);
  EXPECT_NE(image.manifest.dispatches.at(0).notes.find("odd-even transposition sort over 8 blocks"), std::string::npos)
      << image.manifest.dispatches.at(0).notes;
  expect_bindings_within(image, o.target.max_storage_buffer_range);
}

TEST(HostileIndexing, ZeroSizeDimsCompile) {
  // A zero-size dim is a valid (empty) tensor: compile must not divide by zero or refuse.
  codegen::CompileOptions o;
  o.target = find_target("lavapipe").limits;
  EXPECT_EQ(error_of([&] { codegen::compile_graph(ir::parse_graph_file(data_path("zero_size.vkir")), o); }),
            "(no error)");
  for (ir::OpKind kind : {ir::OpKind::Softmax, ir::OpKind::Sort}) {
    ir::Graph g = one_op(kind, {f32({0, 7})});
    std::string m = compile_error(g, o.target);
    EXPECT_TRUE(m == "(no error)" || (m.find("internal") == std::string::npos && m.find('\n') == std::string::npos))
        << ir::op_name(kind) << ": " << m;
  }
}

}  // namespace
}  // namespace vkc::hostile
