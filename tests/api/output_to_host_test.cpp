// RunOptions::output_to_host (vkc issue 21): outputs read straight into host memory the caller owns,
// with no allocation per execution. The caller's buffer is poisoned with NaN before every run, so an
// output not written there shows up; results must equal the ordinary path's and the reference
// interpreter's, through mapped storage and through staging buffers, with the threaded copy for
// outputs above 1 MiB. Bad spans are one-line errors raised at submit, before any GPU work.
#include <cmath>
#include <cstring>
#include <limits>

#include "api/api_helpers.h"
#include "api/impl.h"
#include "common/copy_setting.h"
#include "common/test_util.h"
#include "onnx/onnx_model_builder.h"
#include "runtime/context_internal.h"
#include "runtime/host_copy.h"

namespace vkc::api_test {
namespace {

using OutputToHostApi = ApiTest;
const SessionOptions kNoDiskCache{std::string()};

std::vector<float> nan_buffer(int64_t n) {
  return std::vector<float>(size_t(n), std::numeric_limits<float>::quiet_NaN());
}

void poison(std::vector<float>& v) { std::fill(v.begin(), v.end(), std::numeric_limits<float>::quiet_NaN()); }

// The caller's buffer as a tensor, to compare (a copy, made after the run).
HostTensor tensor_of(const std::vector<float>& v, const Shape& shape) {
  HostTensor t(DType::f32, shape);
  EXPECT_EQ(t.size_bytes(), v.size() * sizeof(float));
  std::memcpy(t.data(), v.data(), t.size_bytes());
  return t;
}

HostTensor random_f32(const Shape& shape, unsigned seed) {
  std::mt19937 rng(seed);
  return test::random_tensor(DType::f32, shape, rng);
}

TEST_F(OutputToHostApi, WritesIntoTheCallersMemoryAndReusesIt) {
  // y = relu(2x + b) over 2 MiB + 12 bytes: above the threaded copy's threshold, not a whole number
  // of its chunks.
  const int64_t n = (int64_t(1) << 19) + 3;
  ASSERT_GT(size_t(n) * sizeof(float), rt::kParallelCopyMinBytes);
  Module m = Module::compile(small_graph(n), device());
  for (bool staging : {false, true}) {
    SCOPED_TRACE(staging ? "staging buffers" : "mapped storage");
    test::CopySetting setting(*device().impl()->context, 4, staging);
    Session s(device(), m, kNoDiskCache);
    std::vector<float> buffer = nan_buffer(n);
    const float* const where = buffer.data();
    RunOptions into;
    into.output_to_host = {{"y", HostTensorSpan(DType::f32, {n}, buffer.data())}};
    for (unsigned step = 0; step < 3; ++step) {
      SCOPED_TRACE(cat("step ", step));
      std::map<std::string, HostTensor> in{{"x", random_f32({n}, 40 + step)}};
      poison(buffer);
      Outputs o = s.run(in, into);
      EXPECT_TRUE(o.host.empty()) << "the output went into a new HostTensor too";
      ASSERT_TRUE(o.host_spans.count("y"));
      EXPECT_EQ(o.host_spans.at("y").data, static_cast<void*>(buffer.data()));
      EXPECT_EQ(buffer.data(), where);
      HostTensor written = tensor_of(buffer, {n});
      test::Comparison r = test::compare(written, m.reference(in).at("y"));
      EXPECT_TRUE(r.ok) << r.message;
      EXPECT_EQ(written, s.run(in).at("y")) << "differs from the ordinary path's output";
    }
    EXPECT_NE(device().impl()->context->impl().host_copy.pool(), nullptr) << "the threaded copy was not used";
  }
}

TEST_F(OutputToHostApi, ValuesChangeWithTheInputsInTheSameBuffer) {
  // Repeated runs write each result over the last in the one buffer (no stale values kept).
  Module m = Module::compile(small_graph(256), device());
  Session s(device(), m, kNoDiskCache);
  std::vector<float> buffer = nan_buffer(256);
  RunOptions into;
  into.output_to_host = {{"y", HostTensorSpan(DType::f32, {256}, buffer.data())}};
  HostTensor previous;
  for (unsigned step = 0; step < 3; ++step) {
    std::map<std::string, HostTensor> in{{"x", random_f32({256}, 7 + step)}};
    s.run(in, into);  // not poisoned in between: the old values must all be overwritten
    HostTensor now = tensor_of(buffer, {256});
    EXPECT_TRUE(test::compare(now, m.reference(in).at("y")).ok) << "step " << step;
    if (step > 0) {
      EXPECT_FALSE(now == previous) << "step " << step << ": the buffer did not change";
    }
    previous = now;
  }
}

TEST_F(OutputToHostApi, AnUnwaitedExecutionIsWrittenByTheNextSubmit) {
  // submit() completes the execution in flight, so its caller memory is written then (docs/api.md).
  Module m = Module::compile(small_graph(256), device());
  Session s(device(), m, kNoDiskCache);
  std::map<std::string, HostTensor> in1{{"x", random_f32({256}, 1)}}, in2{{"x", random_f32({256}, 2)}};
  std::vector<float> first = nan_buffer(256), second = nan_buffer(256);
  RunOptions a, b;
  a.output_to_host = {{"y", HostTensorSpan(DType::f32, {256}, first.data())}};
  b.output_to_host = {{"y", HostTensorSpan(DType::f32, {256}, second.data())}};
  Execution e1 = s.submit(in1, a);
  Execution e2 = s.submit(in2, b);
  EXPECT_TRUE(test::compare(tensor_of(first, {256}), m.reference(in1).at("y")).ok);
  EXPECT_TRUE(e1.wait().host_spans.count("y"));
  e2.wait();
  EXPECT_TRUE(test::compare(tensor_of(second, {256}), m.reference(in2).at("y")).ok);
}

TEST_F(OutputToHostApi, OneOfSeveralOutputsBound) {
  // The 4-add chain has outputs second_last and last: only last goes to the caller's memory.
  const int64_t n = 1000;
  Module m = Module::compile(unfusable_chain(4, n), device());
  Session s(device(), m, kNoDiskCache);
  std::map<std::string, HostTensor> in{{"x", random_f32({n}, 3)}};
  std::map<std::string, HostTensor> ref = m.reference(in);
  std::vector<float> last = nan_buffer(n);
  RunOptions into;
  into.output_to_host = {{"last", HostTensorSpan(DType::f32, {n}, last.data())}};
  // Submitted and waited for apart: the buffer is written by wait().
  Execution e = s.submit(in, into);
  Outputs o = e.wait();
  EXPECT_EQ(o.host.size(), 1u);
  ASSERT_TRUE(o.host.count("second_last"));
  EXPECT_TRUE(test::compare(o.at("second_last"), ref.at("second_last")).ok);
  EXPECT_TRUE(test::compare(tensor_of(last, {n}), ref.at("last")).ok);
  EXPECT_EQ(tensor_of(last, {n}), s.run(in).at("last"));
  // Outputs::at names where the output went.
  EXPECT_EQ(test::error_of([&] { o.at("last"); }),
            "output 'last' was written into the caller's memory (RunOptions::output_to_host; Outputs::host_spans), "
            "not into a HostTensor");
  // With another output kept on the device.
  poison(last);
  into.keep_on_device = {"second_last"};
  Outputs kept = s.run(in, into);
  EXPECT_TRUE(kept.host.empty());
  EXPECT_TRUE(test::compare(kept.device.at("second_last").download(), ref.at("second_last")).ok);
  EXPECT_TRUE(test::compare(tensor_of(last, {n}), ref.at("last")).ok);
}

TEST_F(OutputToHostApi, ModelSessionPassesItThrough) {
  test::OnnxModel model;
  model.input_symbolic("x", {"batch", "4"});
  model.node("Relu", {"x"}, {"y"});
  model.output("y");
  ModelSession ms(device(), model.write(scratch_dir("output_to_host_model")));
  HostTensor x = random_f32({3, 4}, 11);
  std::vector<float> y = nan_buffer(12);
  RunOptions into;
  into.output_to_host = {{"y", HostTensorSpan(DType::f32, {3, 4}, y.data())}};
  const Inputs in = Inputs().set("x", x);
  Outputs o = ms.run(in, into);
  EXPECT_TRUE(o.host.empty());
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(y[size_t(i)], std::max(0.0, x.get_f64(i))) << i;
  // A span of another specialization's shape is refused.
  into.output_to_host = {{"y", HostTensorSpan(DType::f32, {2, 4}, y.data())}};
  EXPECT_EQ(test::error_of([&] { ms.run(in, into); }), "output_to_host 'y': expected f32 3x4, found f32 2x4");
}

TEST_F(OutputToHostApi, BadSpansAreOneLineErrorsBeforeAnyGpuWork) {
  const int64_t n = 256;
  Module m = Module::compile(unfusable_chain(4, n), device());
  Session s(device(), m, kNoDiskCache);
  std::map<std::string, HostTensor> in{{"x", random_f32({n}, 5)}};
  std::vector<float> buffer = nan_buffer(n + 1);
  std::vector<int32_t> ints(static_cast<size_t>(n), 0);
  auto error_of = [&](const RunOptions& ro) {
    try {
      s.submit(in, ro);  // refused at submit, not at wait
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no InputError");
  };
  RunOptions bad;
  bad.output_to_host = {{"last", HostTensorSpan(DType::f32, {n + 1}, buffer.data())}};
  EXPECT_EQ(error_of(bad), "output_to_host 'last': expected f32 256, found f32 257");
  bad.output_to_host = {{"last", HostTensorSpan(DType::f32, {16, 16}, buffer.data())}};
  EXPECT_EQ(error_of(bad), "output_to_host 'last': expected f32 256, found f32 16x16");
  bad.output_to_host = {{"last", HostTensorSpan(DType::i32, {n}, ints.data())}};
  EXPECT_EQ(error_of(bad), "output_to_host 'last': expected f32 256, found i32 256");
  bad.output_to_host = {{"nope", HostTensorSpan(DType::f32, {n}, buffer.data())}};
  EXPECT_EQ(error_of(bad), "output_to_host: no output named 'nope' (the module's outputs are: second_last, last)");
  bad.output_to_host = {{"last", HostTensorSpan(DType::f32, {n}, nullptr)}};
  EXPECT_EQ(error_of(bad), "output_to_host 'last': a span with no data");
  bad.output_to_host = {{"last", HostTensorSpan(DType::f32, {n}, buffer.data())}};
  bad.keep_on_device = {"last"};
  EXPECT_EQ(error_of(bad), "output 'last' is named in output_to_host and in keep_on_device: it goes to one place");
  bad.keep_on_device.clear();
  bad.output_into = {{"last", DeviceTensor::upload(device(), random_f32({n}, 6))}};
  EXPECT_EQ(error_of(bad), "output 'last' is named in output_to_host and in output_into: it goes to one place");
  for (float v : buffer) ASSERT_TRUE(std::isnan(v)) << "a refused execution wrote the caller's memory";
  // The session still runs, and refused executions left nothing in flight.
  EXPECT_TRUE(test::compare(s.run(in).at("last"), m.reference(in).at("last")).ok);

  // White box: the runtime refuses the same before submitting anything to the queue.
  Device d = device();
  rt::Program program(*d.impl()->context, m.impl()->image, rt::ProgramOptions{});
  const std::map<std::string, HostTensorView> views = views_of(in);
  auto runtime_error = [&](const std::map<std::string, HostTensorSpan>& targets, const std::set<std::string>& kept) {
    std::string e = test::error_of([&] { program.submit(views, {}, kept, {}, {}, targets); });
    EXPECT_EQ(program.submissions(), 0u) << e;
    return e;
  };
  EXPECT_EQ(runtime_error({{"last", HostTensorSpan(DType::f32, {n + 1}, buffer.data())}}, {}),
            "output to host 'last': expected f32 256, found f32 257");
  EXPECT_EQ(runtime_error({{"nope", HostTensorSpan(DType::f32, {n}, buffer.data())}}, {}),
            "output to host 'nope': no such output (the module's outputs are: second_last, last)");
  EXPECT_EQ(runtime_error({{"last", HostTensorSpan(DType::f32, {n}, buffer.data())}}, {"last"}),
            "output 'last' is both kept on the device and written to host memory");
  EXPECT_EQ(runtime_error({{"last", HostTensorSpan(DType::f32, {n}, nullptr)}}, {}),
            "output to host 'last': a span of 1024 bytes with no data");
  for (float v : buffer) ASSERT_TRUE(std::isnan(v));
  program.submit(views, {}, {}, {}, {}, {{"last", HostTensorSpan(DType::f32, {n}, buffer.data())}});
  EXPECT_TRUE(program.wait().host.count("second_last"));
  EXPECT_EQ(program.submissions(), 1u);
  buffer.pop_back();
  EXPECT_TRUE(test::compare(tensor_of(buffer, {n}), m.reference(in).at("last")).ok);
}

}  // namespace
}  // namespace vkc::api_test
