// Host inputs reach the device with no host-side copy: HostTensorView inputs (a caller's buffer,
// as the Python module passes numpy arrays) are uploaded straight from that memory, and owned
// HostTensor inputs are viewed, not copied, on their way through Session and ModelSession (a
// caller's std::map of them through Inputs::view). vkc::host_tensor_copies() counts every
// HostTensor copy in the process.
#include <cstring>

#include "api/api_helpers.h"
#include "common/test_util.h"
#include "onnx/onnx_model_builder.h"

namespace vkc::api_test {
namespace {

using HostViewApi = ApiTest;

std::vector<float> ramp(int64_t n, float scale) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = float(i % 17) * scale - 1.0f;
  return v;
}

TEST_F(HostViewApi, CopiesAreCounted) {
  // The counter the other tests rely on sees a copy (so they can fail).
  HostTensor a = iota_f32({8});
  const uint64_t before = host_tensor_copies();
  HostTensor b = a;
  HostTensor c;
  c = b;
  HostTensor d = std::move(c);  // moves are not copies
  EXPECT_EQ(host_tensor_copies() - before, 2u);
  EXPECT_EQ(d, a);
}

TEST_F(HostViewApi, SessionUploadsAViewWithNoHostCopy) {
  Module module = Module::compile(small_graph(64), device());
  Session session(device(), module);
  std::vector<float> x = ramp(64, 0.125f);
  const uint64_t before = host_tensor_copies();
  Inputs in;
  in.set("x", HostTensorView(DType::f32, {64}, x.data()));
  Outputs out = session.run(in);
  EXPECT_EQ(host_tensor_copies(), before) << "a host input or output was copied on the way";
  HostTensor owned(DType::f32, {64});
  std::memcpy(owned.data(), x.data(), owned.size_bytes());
  test::Comparison r = test::compare(out.at("y"), module.reference({{"x", owned}}).at("y"));
  EXPECT_TRUE(r.ok) << r.message;
  // An owned tensor goes the same way: viewed, not copied.
  Inputs owned_in;
  owned_in.set("x", std::move(owned));
  const uint64_t before_owned = host_tensor_copies();
  Outputs again = session.run(owned_in);
  EXPECT_EQ(host_tensor_copies(), before_owned);
  EXPECT_EQ(again.at("y"), out.at("y"));
}

// A std::map of tensors the caller keeps converts to Inputs by copying them, once per tensor per
// run; Inputs::view(map) borrows them (vk-run's host-to-host benchmark runs through it: the copy
// of a 77 MB input cost 42-45 ms a run on lavapipe's host, session 42). Both give the same results.
TEST_F(HostViewApi, InputsViewOfAMapMakesNoHostCopy) {
  Module module = Module::compile(small_graph(64), device());
  Session session(device(), module);
  HostTensor x(DType::f32, {64});
  const std::vector<float> values = ramp(64, 0.5f);
  std::memcpy(x.data(), values.data(), x.size_bytes());
  const std::map<std::string, HostTensor> in{{"x", x}};
  const uint64_t before = host_tensor_copies();
  Outputs copied = session.run(in);
  EXPECT_EQ(host_tensor_copies() - before, 1u);
  const Inputs viewed = Inputs::view(in);
  EXPECT_TRUE(viewed.host.empty());
  EXPECT_EQ(viewed.views.at("x").data, static_cast<const void*>(in.at("x").data()));
  const uint64_t before_view = host_tensor_copies();
  Outputs out = session.run(viewed);
  EXPECT_EQ(host_tensor_copies(), before_view) << "a host input or output was copied on the way";
  EXPECT_EQ(out.at("y"), copied.at("y"));
  test::Comparison r = test::compare(out.at("y"), module.reference(in).at("y"));
  EXPECT_TRUE(r.ok) << r.message;
}

TEST_F(HostViewApi, ModelSessionRunsMakeNoHostCopy) {
  test::OnnxModel m;
  m.input_symbolic("x", {"batch", "4"});
  m.node("Relu", {"x"}, {"y"});
  m.output("y");
  ModelSession model(device(), m.write(scratch_dir("host_view_model")));
  std::vector<float> x = ramp(8, 0.25f);
  Inputs in;
  in.set("x", HostTensorView(DType::f32, {2, 4}, x.data()));
  model.run(in);  // compiles the specialization (which may copy what it compiles in)
  const uint64_t before = host_tensor_copies();
  Outputs out = model.run(in);
  EXPECT_EQ(host_tensor_copies(), before) << "a host input or output was copied on the way";
  for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(out.at("y").get_f64(i), std::max(0.0f, x[size_t(i)])) << i;
  Inputs owned_in;
  owned_in.set("x", in.views.at("x").copy());
  const uint64_t before_owned = host_tensor_copies();
  Outputs again = model.run(owned_in);
  EXPECT_EQ(host_tensor_copies(), before_owned);
  EXPECT_EQ(again.at("y"), out.at("y"));
}

TEST_F(HostViewApi, BadViewsAreInputErrors) {
  Module module = Module::compile(small_graph(64), device());
  Session session(device(), module);
  std::vector<float> x = ramp(64, 0.125f);
  auto error_of = [&](const Inputs& in) {
    try {
      session.run(in);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no InputError");
  };
  Inputs wrong_shape;
  wrong_shape.set("x", HostTensorView(DType::f32, {32}, x.data()));
  EXPECT_NE(error_of(wrong_shape).find("input 'x': expected shape 64, found 32"), std::string::npos)
      << error_of(wrong_shape);
  Inputs wrong_dtype;
  wrong_dtype.set("x", HostTensorView(DType::i32, {64}, x.data()));
  EXPECT_NE(error_of(wrong_dtype).find("input 'x': expected dtype f32, found i32"), std::string::npos);
  Inputs both;
  both.host["x"] = iota_f32({64});
  both.views["x"] = HostTensorView(DType::f32, {64}, x.data());
  EXPECT_NE(error_of(both).find("input 'x' is given both as a host tensor and as a view"), std::string::npos);
  EXPECT_NE(error_of(Inputs()).find("missing input 'x'"), std::string::npos);
}

}  // namespace
}  // namespace vkc::api_test
