// ONNX import of the indexing and data movement ops (issue 23): Gather with run-time indices (the
// embedding lookup), GatherElements, GatherND, ScatterND, ScatterElements, and the lowerings of
// Split, Tile, DepthToSpace, SpaceToDepth, Trilu, Range and OneHot. Imported graphs run on the
// device against the reference; the lowerings are also checked against the ONNX definitions
// computed here element by element.
#include <gtest/gtest.h>

#include "common/gpu_harness.h"
#include "ir/interpreter.h"
#include "onnx/importer.h"
#include "onnx_model_builder.h"
#include "support/error.h"

namespace vkc::test {
namespace {

constexpr int kI64 = 7;

int count_ops(const ir::Graph& g, ir::OpKind k) {
  int n = 0;
  for (const ir::Op* op : g.ops()) n += op->kind == k;
  return n;
}

HostTensor iota_f32(Shape s) {
  HostTensor t(DType::f32, std::move(s));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, double(i) * 0.5 - 3.0);
  return t;
}

void expect_gpu(const ir::Graph& g, const std::map<std::string, HostTensor>& in) {
  try {
    GpuRun run = run_on_gpu(g, in);
    EXPECT_TRUE(outputs_match(run));
  } catch (const Error& e) {
    ADD_FAILURE() << e.what();
  }
}

TEST(OnnxIndexing, EmbeddingLookupWithRunTimeIds) {
  OnnxModel m(17);
  std::vector<float> table(10 * 4);
  for (size_t i = 0; i < table.size(); ++i) table[i] = float(i) * 0.25f - 2.0f;
  m.initializer("table", {10, 4}, table);
  m.input("ids", {2, 3}, kI64);
  m.node("Gather", {"table", "ids"}, {"y"}, "embed");
  m.output("y");
  ir::Graph g = onnx::import_model(m.write(scratch_dir("onnx_embedding")));
  EXPECT_EQ(count_ops(g, ir::OpKind::Gather), 1);
  // In range, negative (-1 is row 9) and out of range (10, -11: zeros, docs/ops.md).
  HostTensor ids = make_i64({2, 3}, {0, 9, -1, 10, -11, 3});
  std::map<std::string, HostTensor> in{{"ids", ids}};
  HostTensor y = ir::interpret(g, in).at("y");
  ASSERT_EQ(y.shape(), (Shape{2, 3, 4}));
  const int64_t rows[] = {0, 9, 9, -1, -1, 3};
  for (int64_t j = 0; j < 6; ++j)
    for (int64_t c = 0; c < 4; ++c)
      EXPECT_EQ(y.get_f64(j * 4 + c), rows[j] < 0 ? 0.0 : double(table[size_t(rows[j] * 4 + c)]));
  expect_gpu(g, in);
}

TEST(OnnxIndexing, ConstantGatherStillFoldsAndChecksRange) {
  OnnxModel m(13);
  m.input("x", {3, 4});
  m.initializer_i64("i", {1});
  m.initializer_i64("j", {0, 2});
  m.node("Gather", {"x", "i"}, {"a"}, "one");  // one constant index on computed data: a slice
  m.node("Gather", {"x", "j"}, {"b"}, "two");  // several: the gather op with constant indices
  m.output("a");
  m.output("b");
  ir::Graph g = onnx::import_model(m.write(scratch_dir("onnx_gather_const")));
  EXPECT_EQ(count_ops(g, ir::OpKind::Gather), 1);
  EXPECT_EQ(count_ops(g, ir::OpKind::Slice), 1);
  expect_gpu(g, random_inputs(g, 5));

  OnnxModel bad(13);
  bad.input("x", {3, 4});
  bad.initializer_i64("i", {3});
  bad.node("Gather", {"x", "i"}, {"y"}, "g");
  bad.output("y");
  std::string path = bad.write(scratch_dir("onnx_gather_oor"));
  EXPECT_EQ(import_error(path), path + ": cannot import 1 item: node 'g' (Gather): index 3 is out of range for dim 3");
}

TEST(OnnxIndexing, GatherElementsGatherNdScatterRunOnTheDevice) {
  OnnxModel m(18);
  m.input("x", {4, 5});
  m.input("ie", {3, 5}, kI64);
  m.input("ind", {2, 2}, kI64);
  m.input("isn", {3, 1}, kI64);
  m.input("u", {3, 5});
  m.input("ise", {2, 5}, kI64);
  m.input("ue", {2, 5});
  OnnxModel::attr_int(m.node("GatherElements", {"x", "ie"}, {"ge"}), "axis", 0);
  m.node("GatherND", {"x", "ind"}, {"gn"});
  OnnxModel::attr_string(m.node("ScatterND", {"x", "isn", "u"}, {"sn"}), "reduction", "add");
  auto* se = m.node("ScatterElements", {"x", "ise", "ue"}, {"se"});
  OnnxModel::attr_int(se, "axis", 0);
  OnnxModel::attr_string(se, "reduction", "max");
  for (const char* o : {"ge", "gn", "sn", "se"}) m.output(o);
  ir::Graph g = onnx::import_model(m.write(scratch_dir("onnx_gather_scatter")));
  EXPECT_EQ(count_ops(g, ir::OpKind::GatherElements), 1);
  EXPECT_EQ(count_ops(g, ir::OpKind::GatherND), 1);
  EXPECT_EQ(count_ops(g, ir::OpKind::ScatterND), 1);
  EXPECT_EQ(count_ops(g, ir::OpKind::ScatterElements), 1);
  // random_inputs gives integers in [-8, 8]: negative, in-range and out-of-range indices.
  expect_gpu(g, random_inputs(g, 11));
}

TEST(OnnxIndexing, SplitEveryOpsetForm) {
  struct Form {
    int64_t opset;
    std::vector<int64_t> sizes;  // attribute (< 13) or constant input; empty: equal parts
    bool num_outputs;
    int parts;
    std::vector<int64_t> expected;
  };
  const Form forms[] = {{11, {2, 4}, false, 2, {2, 4}}, {13, {1, 2, 3}, false, 3, {1, 2, 3}},
                        {13, {}, false, 3, {2, 2, 2}}, {18, {}, true, 4, {2, 2, 2, 0}},
                        {18, {}, true, 5, {2, 2, 2, 0, 0}}};
  for (const Form& f : forms) {
    SCOPED_TRACE(cat("opset ", f.opset, " parts ", f.parts));
    OnnxModel m(f.opset);
    m.input("x", {3, 6});
    std::vector<std::string> inputs{"x"}, outputs;
    for (int i = 0; i < f.parts; ++i) outputs.push_back(cat("y", i));
    if (f.opset >= 13 && !f.sizes.empty()) {
      m.initializer_i64("split", f.sizes);
      inputs.push_back("split");
    }
    auto* n = m.node("Split", inputs, outputs, "split");
    OnnxModel::attr_int(n, "axis", -1);
    if (f.opset < 13) OnnxModel::attr_ints(n, "split", f.sizes);
    if (f.num_outputs) OnnxModel::attr_int(n, "num_outputs", f.parts);
    for (const std::string& o : outputs) m.output(o);
    std::string path = m.write(scratch_dir("onnx_split"));
    ir::Graph g = onnx::import_model(path);
    std::map<std::string, HostTensor> in{{"x", iota_f32({3, 6})}};
    std::map<std::string, HostTensor> out = ir::interpret(g, in);
    int64_t start = 0;
    for (int i = 0; i < f.parts; ++i) {
      const HostTensor& y = out.at(cat("y", i));
      ASSERT_EQ(y.shape(), (Shape{3, f.expected[size_t(i)]}));
      for (int64_t r = 0; r < 3; ++r)
        for (int64_t c = 0; c < f.expected[size_t(i)]; ++c)
          EXPECT_EQ(y.get_f64(r * f.expected[size_t(i)] + c), in.at("x").get_f64(r * 6 + start + c));
      start += f.expected[size_t(i)];
    }
  }
  OnnxModel bad(13);
  bad.input("x", {3, 6});
  bad.node("Split", {"x"}, {"a", "b", "c", "d"}, "s");
  for (const char* o : {"a", "b", "c", "d"}) bad.output(o);
  std::string path = bad.write(scratch_dir("onnx_split_bad"));
  EXPECT_EQ(import_error(path),
            path + ": cannot import 1 item: node 's' (Split): dim 0 (3) does not split into 4 equal parts");
}

// ONNX Tile computed here: out[i] = x[i mod shape].
HostTensor tile_reference(const HostTensor& x, const std::vector<int64_t>& repeats) {
  Shape os;
  for (size_t d = 0; d < repeats.size(); ++d) os.push_back(x.shape()[d] * repeats[d]);
  HostTensor out(x.dtype(), os);
  std::vector<int64_t> xs = shape_strides(x.shape());
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t rem = i, src = 0;
    for (size_t d = os.size(); d-- > 0;) {
      int64_t c = rem % os[d];
      rem /= os[d];
      src += (c % x.shape()[d]) * xs[d];
    }
    out.set_f64(i, x.get_f64(src));
  }
  return out;
}

TEST(OnnxIndexing, TileAsBroadcastWithinAndBeyondTheRankLimit) {
  const std::pair<Shape, std::vector<int64_t>> cases[] = {
      {{2, 3}, {3, 2}}, {{2, 3, 4}, {1, 2, 1}}, {{2, 1, 3, 2}, {2, 3, 2, 2}}};
  for (const auto& [shape, repeats] : cases) {
    SCOPED_TRACE(shape_str(shape));
    OnnxModel m(13);
    m.input("x", shape);
    m.initializer_i64("r", repeats);
    m.node("Tile", {"x", "r"}, {"y"});
    m.output("y");
    ir::Graph g = onnx::import_model(m.write(scratch_dir("onnx_tile")));
    std::map<std::string, HostTensor> in{{"x", iota_f32(shape)}};
    HostTensor y = ir::interpret(g, in).at("y");
    EXPECT_EQ(y, tile_reference(in.at("x"), repeats));
    expect_gpu(g, in);
  }
}

TEST(OnnxIndexing, DepthToSpaceAndSpaceToDepth) {
  // SpaceToDepth then DepthToSpace (DCR) is the identity (ONNX defines them as inverses).
  OnnxModel m(13);
  m.input("x", {2, 3, 4, 6});
  OnnxModel::attr_int(m.node("SpaceToDepth", {"x"}, {"s"}), "blocksize", 2);
  auto* d = m.node("DepthToSpace", {"s"}, {"y"});
  OnnxModel::attr_int(d, "blocksize", 2);
  OnnxModel::attr_string(d, "mode", "DCR");
  auto* crd = m.node("DepthToSpace", {"s"}, {"z"});
  OnnxModel::attr_int(crd, "blocksize", 2);
  OnnxModel::attr_string(crd, "mode", "CRD");
  m.output("s");
  m.output("y");
  m.output("z");
  ir::Graph g = onnx::import_model(m.write(scratch_dir("onnx_d2s")));
  std::map<std::string, HostTensor> in{{"x", iota_f32({2, 3, 4, 6})}};
  std::map<std::string, HostTensor> out = ir::interpret(g, in);
  EXPECT_EQ(out.at("y"), in.at("x"));
  // CRD: z[n, c, h*b + i, w*b + j] = s[n, c*b*b + i*b + j, h, w].
  const HostTensor& s = out.at("s");
  const HostTensor& z = out.at("z");
  ASSERT_EQ(z.shape(), (Shape{2, 3, 4, 6}));
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t y = 0; y < 4; ++y)
        for (int64_t x = 0; x < 6; ++x) {
          int64_t h = y / 2, i = y % 2, w = x / 2, j = x % 2;
          int64_t src = ((n * 12 + c * 4 + i * 2 + j) * 2 + h) * 3 + w;
          EXPECT_EQ(z.get_f64(((n * 3 + c) * 4 + y) * 6 + x), s.get_f64(src));
        }
  expect_gpu(g, in);
}

TEST(OnnxIndexing, TriluUpperAndLowerWithK) {
  for (int64_t upper : {0, 1})
    for (int64_t k : {-1, 0, 2}) {
      SCOPED_TRACE(cat("upper ", upper, " k ", k));
      OnnxModel m(14);
      m.input("x", {2, 3, 5});
      auto* kt = m.initializer_i64("k", {k});
      kt->clear_dims();  // a scalar
      OnnxModel::attr_int(m.node("Trilu", {"x", "k"}, {"y"}), "upper", upper);
      m.output("y");
      ir::Graph g = onnx::import_model(m.write(scratch_dir("onnx_trilu")));
      std::map<std::string, HostTensor> in{{"x", iota_f32({2, 3, 5})}};
      HostTensor y = ir::interpret(g, in).at("y");
      for (int64_t b = 0; b < 2; ++b)
        for (int64_t i = 0; i < 3; ++i)
          for (int64_t j = 0; j < 5; ++j) {
            bool keep = upper ? j - i >= k : j - i <= k;
            int64_t e = (b * 3 + i) * 5 + j;
            EXPECT_EQ(y.get_f64(e), keep ? in.at("x").get_f64(e) : 0.0) << b << "," << i << "," << j;
          }
      expect_gpu(g, in);
    }
}

TEST(OnnxIndexing, RangeFoldsConstantsAndNamesRunTimeOperands) {
  OnnxModel m(11);
  m.initializer("start", {}, {1.0f});
  m.initializer("limit", {}, {2.9f});
  m.initializer("delta", {}, {0.5f});
  m.input("x", {4});
  m.node("Range", {"start", "limit", "delta"}, {"r"}, "range");
  m.node("Add", {"x", "r"}, {"y"});
  m.output("y");
  ir::Graph g = onnx::import_model(m.write(scratch_dir("onnx_range")));
  std::map<std::string, HostTensor> in{{"x", make_f32({4}, {0, 0, 0, 0})}};
  HostTensor y = ir::interpret(g, in).at("y");
  EXPECT_EQ(y, make_f32({4}, {1.0f, 1.5f, 2.0f, 2.5f}));

  OnnxModel bad(11);
  bad.input("start", {}, kI64);
  bad.initializer_i64("limit", {5});
  bad.initializer_i64("delta", {1});
  bad.node("Range", {"start", "limit", "delta"}, {"r"}, "range");
  bad.output("r", kI64);
  std::string path = bad.write(scratch_dir("onnx_range_bad"));
  // A run-time start decides the result's shape: the importer names the input it needs by value
  // (vkc::ModelSession specializes on it at first use), and with it bound the import folds.
  EXPECT_EQ(import_error(path), path + ": cannot import 1 item: node 'range' (Range): start (input 0) must be known "
                                       "when compiling; it is graph input 'start': give its value (vkc::ModelSession "
                                       "and vk-run specialize on it at first use)");
  try {
    onnx::import_model(path);
    ADD_FAILURE() << "imported without the value of 'start'";
  } catch (const onnx::InputValuesNeeded& need) {
    EXPECT_EQ(need.names, std::vector<std::string>{"start"});
  }
  HostTensor start(DType::i64, {});
  start.set_i64(0, 2);
  ir::Graph bound = onnx::import_model(path, {{}, {{"start", start}}});
  HostTensor r = ir::interpret(bound, {}).at("r");
  ASSERT_EQ(r.shape(), (Shape{3}));
  EXPECT_EQ(r.get_i64(0), 2);
  EXPECT_EQ(r.get_i64(2), 4);
}

TEST(OnnxIndexing, OneHotWithRunTimeIndices) {
  for (int64_t axis : {-1, 0, 1}) {
    SCOPED_TRACE(axis);
    OnnxModel m(11);
    m.input("i", {2, 3}, kI64);
    m.initializer_i64("depth", {4});
    m.initializer("values", {2}, {-1.5f, 2.5f});  // off, on
    OnnxModel::attr_int(m.node("OneHot", {"i", "depth", "values"}, {"y"}), "axis", axis);
    m.output("y");
    ir::Graph g = onnx::import_model(m.write(scratch_dir("onnx_onehot")));
    HostTensor idx = make_i64({2, 3}, {0, 3, -1, 4, -5, 2});  // -1 is 3; 4 and -5 are out of range
    std::map<std::string, HostTensor> in{{"i", idx}};
    HostTensor y = ir::interpret(g, in).at("y");
    const int64_t hot[] = {0, 3, 3, -1, -1, 2};
    int64_t a = axis < 0 ? 2 : axis;
    Shape expected_shape{2, 3};
    expected_shape.insert(expected_shape.begin() + a, 4);
    ASSERT_EQ(y.shape(), expected_shape);
    std::vector<int64_t> st = shape_strides(y.shape());
    for (int64_t p = 0; p < 6; ++p)
      for (int64_t d = 0; d < 4; ++d) {
        std::vector<int64_t> at{p / 3, p % 3};
        at.insert(at.begin() + a, d);
        int64_t e = at[0] * st[0] + at[1] * st[1] + at[2] * st[2];
        EXPECT_EQ(y.get_f64(e), hot[p] == d ? 2.5 : -1.5) << p << " " << d;
      }
    expect_gpu(g, in);
  }
}

}  // namespace
}  // namespace vkc::test
