// Public API: asynchronous execution, device tensors chaining modules, and the record-once,
// submit-once contract on a 50-dispatch chain (validation-clean, including synchronization).
#include "api/api_helpers.h"
#include "common/test_util.h"
#include "api/impl.h"

namespace vkc::api_test {
namespace {

using SessionApi = ApiTest;
const SessionOptions kNoDiskCache{std::string()};

TEST_F(SessionApi, AsyncSubmitThenWait) {
  Module m = Module::compile(small_graph(), device());
  Session s(device(), m, kNoDiskCache);
  std::map<std::string, HostTensor> in1{{"x", iota_f32({64})}}, in2{{"x", iota_f32({64}, -0.03)}};
  Execution e1 = s.submit(in1);
  // A second submission completes the first; each Execution keeps its own outputs.
  Execution e2 = s.submit(in2);
  EXPECT_TRUE(e1.ready());
  Outputs o2 = e2.wait();
  EXPECT_TRUE(e2.ready());
  Outputs o1 = e1.wait();
  EXPECT_THROW(e1.wait(), Error);
  EXPECT_TRUE(test::compare(o1.at("y"), m.reference(in1).at("y")).ok);
  EXPECT_TRUE(test::compare(o2.at("y"), m.reference(in2).at("y")).ok);
}

TEST_F(SessionApi, ReadyPollsUntilDone) {
  Session s(device(), Module::compile(unfusable_chain(8, 1 << 14), device()), kNoDiskCache);
  Execution e = s.submit({{{"x", iota_f32({1 << 14})}}});
  while (!e.ready()) {
  }
  EXPECT_EQ(e.wait().host.size(), 2u);
}

TEST_F(SessionApi, DeviceTensorsChainTwoModules) {
  // a: y = relu(2x + b); b: the 8-add chain on y. The intermediate y never visits the host.
  Module first = Module::compile(small_graph(256), device());
  Module second = Module::compile(unfusable_chain(8, 256), device());
  Session a(device(), first, kNoDiskCache), b(device(), second, kNoDiskCache);
  std::map<std::string, HostTensor> in{{"x", iota_f32({256})}};
  RunOptions keep;
  keep.keep_on_device = {"y"};
  Outputs mid = a.run(in, keep);
  ASSERT_TRUE(mid.device.count("y"));
  EXPECT_TRUE(mid.host.empty());
  DeviceTensor y = mid.device.at("y");
  EXPECT_EQ(y.shape(), Shape{256});
  Outputs out = b.run(Inputs().set("x", y));

  HostTensor y_ref = first.reference(in).at("y");
  std::map<std::string, HostTensor> ref = second.reference({{"x", y_ref}});
  EXPECT_TRUE(test::compare(y.download(), y_ref).ok);
  EXPECT_TRUE(test::compare(out.at("last"), ref.at("last")).ok);

  // Device tensor in, device tensor out, repeatedly, then uploaded ones.
  for (int i = 0; i < 3; ++i) {
    Outputs o = a.run(Inputs().set("x", DeviceTensor::upload(device(), in.at("x"))), keep);
    Outputs p = b.run(Inputs().set("x", o.device.at("y")), keep = RunOptions{false, {"last"}, {}, {}});
    EXPECT_TRUE(test::compare(p.device.at("last").download(), ref.at("last")).ok);
    keep.keep_on_device = {"y"};
  }
  EXPECT_THROW(b.run(Inputs().set("x", DeviceTensor::upload(device(), iota_f32({255})))), Error);
  EXPECT_THROW(a.run(in, RunOptions{false, {"nope"}, {}, {}}), Error);
}

TEST_F(SessionApi, OutputIntoUpdatesADeviceStateInPlace) {
  // A state on the device (as a decoder's key/value cache): each execution reads it as input x and
  // writes the next one, y = relu(2x + b), into the same tensor. No allocation per execution.
  Module m = Module::compile(small_graph(256), device());
  Session s(device(), m, kNoDiskCache);
  HostTensor expected = iota_f32({256}, -0.004);
  DeviceTensor state = DeviceTensor::upload(device(), expected);
  RunOptions into;
  into.output_into = {{"y", state}};
  for (int i = 0; i < 4; ++i) {
    Outputs o = s.run(Inputs().set("x", state), into);
    expected = m.reference({{"x", expected}}).at("y");
    EXPECT_TRUE(o.host.empty());
    ASSERT_TRUE(o.device.count("y"));
    EXPECT_EQ(o.device.at("y").impl()->tensor, state.impl()->tensor) << "the output must be the given tensor";
    EXPECT_TRUE(test::compare(state.download(), expected).ok) << "step " << i;
  }
  // White box: the program allocates no device output for a target.
  Device d = device();
  rt::Program program(*d.impl()->context, m.impl()->image, rt::ProgramOptions{});
  for (int i = 0; i < 3; ++i) {
    program.submit({}, {{"x", state.impl()->tensor}}, {"y"}, {}, {{"y", state.impl()->tensor}});
    program.wait();
  }
  EXPECT_EQ(program.device_output_allocations(), 0u);

  // Wrong shape, another output name, an empty tensor: one-line errors naming the output.
  RunOptions bad;
  bad.output_into = {{"y", DeviceTensor::upload(device(), iota_f32({255}))}};
  EXPECT_NE(test::error_of([&] { s.run(Inputs().set("x", state), bad); }).find("output target 'y': the tensor is f32 255 but the output is f32 256"), std::string::npos);
  bad.output_into = {{"nope", state}};
  EXPECT_NE(test::error_of([&] { s.run(Inputs().set("x", state), bad); }).find("output_into: no output named 'nope'"), std::string::npos);
  bad.output_into = {{"y", DeviceTensor()}};
  EXPECT_NE(test::error_of([&] { s.run(Inputs().set("x", state), bad); }).find("output_into 'y': empty DeviceTensor"), std::string::npos);
}

TEST_F(SessionApi, FiftyDispatchChainRecordsOnceAndSubmitsOnce) {
  Module m = Module::compile(unfusable_chain(50), device());
  ASSERT_EQ(m.dispatch_count(), 50u);
  Session s(device(), m, kNoDiskCache);
  // White box: the rt::Program behind the session.
  Device d = device();
  rt::ProgramOptions po;
  rt::Program program(*d.impl()->context, m.impl()->image, po);
  const size_t recorded = program.recorded_command_buffers();
  std::map<std::string, HostTensor> in{{"x", iota_f32({256}, 0.001)}};
  std::map<std::string, HostTensor> ref = m.reference(in);
  for (int i = 0; i < 5; ++i) {
    std::map<std::string, HostTensor> out = program.execute(in);
    EXPECT_TRUE(test::compare(out.at("last"), ref.at("last"), 1e-5).ok);
  }
  EXPECT_EQ(program.recorded_command_buffers(), recorded) << "executions must replay, not re-record";
  EXPECT_EQ(program.submissions(), 5u);
  Outputs o = s.run(in);
  EXPECT_TRUE(test::compare(o.at("second_last"), ref.at("second_last"), 1e-5).ok);
}

}  // namespace
}  // namespace vkc::api_test
