// Public API: compile, load (directory and .vkcm), execute, reference, input errors.
#include <cstdlib>
#include <filesystem>

#include "api/api_helpers.h"
#include "common/test_util.h"

namespace vkc::api_test {
namespace {

using ModuleApi = ApiTest;

void expect_matches_reference(const Module& module, const Outputs& out, const std::map<std::string, HostTensor>& in) {
  std::map<std::string, HostTensor> ref = module.reference(in);
  for (const auto& [name, r] : ref) {
    test::Comparison c = test::compare(out.at(name), r);
    EXPECT_TRUE(c.ok) << name << ": " << c.message;
  }
}

TEST_F(ModuleApi, CompileRunAndReference) {
  Module m = Module::compile(small_graph(), device());
  ASSERT_EQ(m.inputs().size(), 1u);
  EXPECT_EQ(m.inputs()[0].name, "x");
  EXPECT_EQ(m.outputs()[0].shape, Shape{64});
  EXPECT_TRUE(m.has_source());
  Session s(device(), m, {std::string()});
  std::map<std::string, HostTensor> in{{"x", iota_f32({64})}};
  Outputs out = s.run(in);
  expect_matches_reference(m, out, in);
  // The session replays: a second run gives the same answer.
  Outputs again = s.run(in);
  EXPECT_EQ(again.at("y").bytes(), out.at("y").bytes());
}

TEST_F(ModuleApi, CompileFromVkirFileAndProfile) {
  Module m = Module::compile(test::source_path("examples/small_convnet.vkir"), device());
  Session s(device(), m, {std::string()});
  std::map<std::string, HostTensor> in;
  std::mt19937 rng(3);
  for (const TensorInfo& t : m.inputs()) in[t.name] = test::random_tensor(t.dtype, t.shape, rng);
  RunOptions ro;
  ro.profile = true;
  Outputs out = s.run(in, ro);
  expect_matches_reference(m, out, in);
  ASSERT_EQ(s.last_profile().size(), m.dispatch_count());
  for (const DispatchTiming& t : s.last_profile()) {
    EXPECT_GE(t.ms, 0) << t.name;
    // Driver statistics only when asked for (VKC_PIPELINE_STATS=1, which the tests do not set).
    EXPECT_TRUE(t.statistics.empty()) << t.name;
  }
}

TEST_F(ModuleApi, DirectoryAndSingleFileRoundTrip) {
  Module m = Module::compile(small_graph(), device());
  std::string dir = scratch_dir("m");
  m.save(dir + "/module");
  m.save(dir + "/model.vkcm");
  EXPECT_TRUE(std::filesystem::exists(dir + "/module/manifest.json"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/module/source.vkir"));
  Module from_dir = Module::load(dir + "/module");
  Module from_file = Module::load(dir + "/model.vkcm");
  EXPECT_EQ(from_file.manifest_json(), m.manifest_json());
  EXPECT_EQ(from_dir.manifest_json(), m.manifest_json());
  EXPECT_TRUE(from_file.has_source());
  std::map<std::string, HostTensor> in{{"x", iota_f32({64})}};
  Outputs a = Session(device(), from_dir, {std::string()}).run(in);
  Outputs b = Session(device(), from_file, {std::string()}).run(in);
  EXPECT_EQ(a.at("y").bytes(), b.at("y").bytes());
  expect_matches_reference(from_file, b, in);
}

TEST_F(ModuleApi, InputMismatchesAreNamed) {
  Session s(device(), Module::compile(small_graph(), device()), {std::string()});
  auto message = [&](const Inputs& in) {
    try {
      s.run(in);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({}).find("missing input 'x'"), std::string::npos);
  EXPECT_NE(message({{{"y", iota_f32({64})}, {"x", iota_f32({64})}}}).find("unknown input 'y'"), std::string::npos);
  EXPECT_NE(message({{{"x", iota_f32({65})}}}).find("input 'x': expected shape 64"), std::string::npos);
  EXPECT_NE(message({{{"x", HostTensor(DType::i32, {64})}}}).find("input 'x': expected dtype f32"), std::string::npos);
  // The session still works after user errors.
  EXPECT_NO_THROW(s.run({{{"x", iota_f32({64})}}}));
}

TEST_F(ModuleApi, LoadErrorsAreOneLine) {
  std::string dir = scratch_dir("bad");
  try {
    Module::load(dir + "/nope");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no such module"), std::string::npos) << e.what();
  }
  test::source_path("examples/small_convnet.vkir");
  EXPECT_THROW(Module::load(test::source_path("examples/small_convnet.vkir")), Error);
}

TEST_F(ModuleApi, DeviceEnumerationAndLimits) {
  const char* v = std::getenv("VKC_VALIDATION");
  if (v && std::string(v) == "1") {
    EXPECT_TRUE(device().validation_enabled());
  }
  std::vector<DeviceInfo> all = Device::enumerate();
  ASSERT_FALSE(all.empty());
  EXPECT_FALSE(device().info().name.empty());
  EXPECT_GE(device().limits().max_shared_memory_bytes, 16384u);
  EXPECT_GE(device().limits().max_workgroup_invocations, 128u);
  // Selecting by index and by name substring both find a device.
  Device by_index(DeviceOptions{std::to_string(device().info().index), false});
  EXPECT_EQ(by_index.info().name, device().info().name);
  Device by_name(DeviceOptions{device().info().name.substr(0, 4), false});
  EXPECT_FALSE(by_name.info().name.empty());
  EXPECT_THROW(Device(DeviceOptions{"no-such-gpu-anywhere", false}), Error);
}

}  // namespace
}  // namespace vkc::api_test
