// vkc::ModelSession: shapes fixed at first use. Symbolic dims take the inputs' shapes, inputs that
// decide shapes are compiled in as values, and each specialization is compiled once, then reused
// (in memory, and across sessions through the module cache). Results against the reference.
#include <thread>

#include "api/api_helpers.h"
#include "common/test_util.h"
#include "onnx/onnx_model_builder.h"

namespace vkc::api_test {
namespace {

using ModelSessionApi = ApiTest;

HostTensor random_f32(const Shape& shape, uint32_t seed) {
  HostTensor t(DType::f32, shape);
  uint32_t s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.set_f64(i, double(int32_t(s >> 8) % 2001) / 1000.0 - 1.0);
  }
  return t;
}

HostTensor i64_tensor(const std::vector<int64_t>& v) {
  HostTensor t(DType::i64, {int64_t(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.set_i64(int64_t(i), v[i]);
  return t;
}

// y = relu(x @ W) + x2 with x [batch, seq, 4], x2 [batch, seq, 3]: two inputs share both symbols.
std::string symbolic_model(const std::string& dir) {
  test::OnnxModel m;
  m.input_symbolic("x", {"batch", "seq", "4"});
  m.input_symbolic("x2", {"batch", "seq", "3"});
  std::vector<float> w(12);
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(i % 5) * 0.25f - 0.5f;
  m.initializer("W", {4, 3}, w);
  m.node("MatMul", {"x", "W"}, {"h"});
  m.node("Relu", {"h"}, {"r"});
  m.node("Add", {"r", "x2"}, {"y"});
  m.output("y");
  return m.write(dir);
}

// The reference for a specialization: the same model imported with those shapes.
HostTensor reference(const std::string& path, const std::map<std::string, HostTensor>& in,
                     const std::map<std::string, HostTensor>& values = {}) {
  CompileOptions co;
  for (const auto& [name, t] : in)
    if (!values.count(name)) co.input_shapes[name] = t.shape();
  co.input_values = values;
  Module m = Module::compile(path, shared_device(), co);
  std::map<std::string, HostTensor> unbound;
  for (const auto& [name, t] : in)
    if (!values.count(name)) unbound[name] = t;
  return m.reference(unbound).at("y");
}

TEST_F(ModelSessionApi, SymbolicDimsCompileOncePerShape) {
  std::string path = symbolic_model(scratch_dir("model_session_symbolic"));
  ModelSession model(device(), path);
  ASSERT_EQ(model.inputs().size(), 2u);
  EXPECT_EQ(model.inputs()[0].dims[1].symbol, "seq");
  EXPECT_EQ(model.inputs()[0].dims[2].value, 4);
  struct Case { int64_t batch, seq; bool new_now; };
  // 1x5, 2x7, then 1x5 again (reused), then 3x1.
  const Case cases[] = {{1, 5, true}, {2, 7, true}, {1, 5, false}, {3, 1, true}};
  uint32_t seed = 1;
  for (const Case& c : cases) {
    std::map<std::string, HostTensor> in{{"x", random_f32({c.batch, c.seq, 4}, seed)},
                                         {"x2", random_f32({c.batch, c.seq, 3}, seed + 100)}};
    ++seed;
    Outputs out = model.run(in);
    const Specialization& sp = model.last_specialization();
    EXPECT_EQ(sp.new_now, c.new_now) << sp.key;
    EXPECT_NE(sp.key.find(cat("x f32[", c.batch, "x", c.seq, "x4]")), std::string::npos) << sp.key;
    EXPECT_TRUE(sp.bound_inputs.empty());
    ASSERT_EQ(out.at("y").shape(), (Shape{c.batch, c.seq, 3}));
    test::Comparison r = test::compare(out.at("y"), reference(path, in));
    EXPECT_TRUE(r.ok) << r.message;
  }
  EXPECT_EQ(model.specialization_count(), 3u);
}

TEST_F(ModelSessionApi, InputsAreCheckedBeforeCompiling) {
  std::string path = symbolic_model(scratch_dir("model_session_checks"));
  ModelSession model(device(), path);
  auto error_of = [&](std::map<std::string, HostTensor> in) {
    try {
      model.run(in);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // One value per symbol across inputs.
  EXPECT_NE(error_of({{"x", random_f32({1, 5, 4}, 1)}, {"x2", random_f32({1, 6, 3}, 2)}})
                .find("input 'x2' dim 1 ('seq') is 6, but input 'x' dim 1 gives 'seq' = 5"),
            std::string::npos);
  // Static dims, rank, dtype, missing and unknown inputs.
  EXPECT_NE(error_of({{"x", random_f32({1, 5, 3}, 1)}, {"x2", random_f32({1, 5, 3}, 2)}})
                .find("input 'x' dim 2 is 3, the model fixes it to 4"),
            std::string::npos);
  EXPECT_NE(error_of({{"x", random_f32({5, 4}, 1)}, {"x2", random_f32({1, 5, 3}, 2)}})
                .find("input 'x' has rank 2, the model expects 3"),
            std::string::npos);
  EXPECT_NE(error_of({{"x", HostTensor(DType::i32, {1, 5, 4})}, {"x2", random_f32({1, 5, 3}, 2)}})
                .find("input 'x' has element type i32, the model expects f32"),
            std::string::npos);
  EXPECT_NE(error_of({{"x", random_f32({1, 5, 4}, 1)}}).find("input 'x2' is missing"), std::string::npos);
  EXPECT_NE(error_of({{"x", random_f32({1, 5, 4}, 1)}, {"x2", random_f32({1, 5, 3}, 2)}, {"z", random_f32({1}, 3)}})
                .find("the model has no input named 'z' (its inputs are: x, x2)"),
            std::string::npos);
  EXPECT_EQ(model.specialization_count(), 0u);  // nothing was compiled for bad inputs
}

// Reshape's shape and TopK's K as graph inputs: their values become part of the key.
TEST_F(ModelSessionApi, InputsThatDecideShapesAreCompiledInAsValues) {
  test::OnnxModel m;
  m.input("x", {2, 3, 4});
  m.input("shape", {2}, ::onnx::TensorProto::INT64);
  m.node("Reshape", {"x", "shape"}, {"y"});
  m.output("y");
  std::string path = m.write(scratch_dir("model_session_values"));
  ModelSession model(device(), path);
  HostTensor x = random_f32({2, 3, 4}, 7);
  for (auto shape : {std::vector<int64_t>{4, 6}, {6, 4}, {4, 6}, {-1, 12}}) {
    std::map<std::string, HostTensor> in{{"x", x}, {"shape", i64_tensor(shape)}};
    Outputs out = model.run(in);
    const Specialization& sp = model.last_specialization();
    ASSERT_EQ(sp.bound_inputs, std::vector<std::string>{"shape"});
    EXPECT_NE(sp.key.find("shape i64[2] = {"), std::string::npos) << sp.key;
    test::Comparison r = test::compare(out.at("y"), reference(path, in, {{"shape", in.at("shape")}}));
    EXPECT_TRUE(r.ok) << r.message;
    EXPECT_EQ(out.at("y").shape()[0], shape[0] < 0 ? 2 : shape[0]);
  }
  EXPECT_EQ(model.specialization_count(), 3u);  // {4,6} came back
  // A value that cannot apply is a one-line error naming the node, not a crash.
  std::map<std::string, HostTensor> bad{{"x", x}, {"shape", i64_tensor({5, 5})}};
  EXPECT_THROW(model.run(bad), Error);
}

TEST_F(ModelSessionApi, ANewSessionLoadsSpecializationsFromTheModuleCache) {
  std::string dir = scratch_dir("model_session_cache");
  std::string path = symbolic_model(dir + "/model");
  ModelSessionOptions options;
  options.compile.module_cache_dir = dir + "/modules";
  options.session.pipeline_cache_dir = "";
  std::map<std::string, HostTensor> in{{"x", random_f32({2, 3, 4}, 1)}, {"x2", random_f32({2, 3, 3}, 2)}};
  HostTensor first;
  {
    ModelSession model(device(), path, options);
    first = model.run(in).at("y");
    EXPECT_EQ(model.last_specialization().origin, ModuleOrigin::Compiled);
  }
  ModelSession again(device(), path, options);
  HostTensor second = again.run(in).at("y");
  EXPECT_EQ(again.last_specialization().origin, ModuleOrigin::Cached);
  EXPECT_TRUE(again.last_specialization().new_now);
  EXPECT_EQ(first, second);
  in["x"] = random_f32({2, 9, 4}, 3);
  in["x2"] = random_f32({2, 9, 3}, 4);
  again.run(in);
  EXPECT_EQ(again.last_specialization().origin, ModuleOrigin::Compiled);  // a shape not seen before
}

// Runs are serialized: eight threads with two shapes get the right results and two compiles.
TEST_F(ModelSessionApi, ThreadsShareOneModelSession) {
  std::string path = symbolic_model(scratch_dir("model_session_threads"));
  ModelSession model(device(), path);
  std::vector<std::map<std::string, HostTensor>> ins;
  std::vector<HostTensor> refs;
  for (int k = 0; k < 2; ++k) {
    ins.push_back({{"x", random_f32({1, 4 + k, 4}, 10 + k)}, {"x2", random_f32({1, 4 + k, 3}, 20 + k)}});
    refs.push_back(reference(path, ins.back()));
  }
  std::vector<int> ok(8, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 3; ++i) ok[size_t(t)] += test::compare(model.run(ins[size_t(t % 2)]).at("y"), refs[size_t(t % 2)]).ok;
    });
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(ok[size_t(t)], 3) << "thread " << t;
  EXPECT_EQ(model.specialization_count(), 2u);
}

}  // namespace
}  // namespace vkc::api_test
