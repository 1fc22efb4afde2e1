// Modules planned for limits the device does not have are refused, naming the limit; modules that
// carry their source graph can be recompiled for the device instead.
#include <nlohmann/json.hpp>

#include <filesystem>

#include "api/api_helpers.h"
#include "common/test_util.h"
#include "support/file_io.h"

namespace vkc::api_test {
namespace {

using LimitsApi = ApiTest;

// Saves `m` as a directory and rewrites its manifest so that its first dispatch uses more
// workgroup memory than any device has, as a module compiled for a bigger GPU may.
std::string too_big_module(const Module& m, const std::string& dir, bool keep_source) {
  m.save(dir);
  nlohmann::json j = nlohmann::json::parse(read_text_file(dir + "/manifest.json"));
  j["target"]["name"] = "bigger-gpu";
  j["dispatches"][0]["workgroup_memory_bytes"] = 1u << 30;
  write_text_file(dir + "/manifest.json", j.dump(1));
  if (!keep_source) std::filesystem::remove(dir + "/source.vkir");
  return dir;
}

TEST_F(LimitsApi, RefusedNamingTheLimit) {
  Module big = Module::load(too_big_module(Module::compile(small_graph(), device()), scratch_dir("m") + "/m", false));
  std::vector<std::string> unmet = big.unmet_limits(device());
  ASSERT_EQ(unmet.size(), 1u);
  EXPECT_NE(unmet[0].find("maxComputeSharedMemorySize"), std::string::npos) << unmet[0];
  EXPECT_NE(unmet[0].find(cat("uses ", 1u << 30, " bytes of workgroup memory")), std::string::npos) << unmet[0];
  try {
    Session s(device(), big, {std::string()});
    FAIL() << "the module was not refused";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("maxComputeSharedMemorySize"), std::string::npos) << msg;
    EXPECT_NE(msg.find("bigger-gpu"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("recompile"), std::string::npos) << "no source to recompile: " << msg;
  }
  SessionOptions so{std::string(), true};
  EXPECT_THROW(Session(device(), big, so), Error) << "no source graph: nothing to recompile";
}

TEST_F(LimitsApi, RecompiledForTheDeviceWhenTheSourceTravels) {
  Module big = Module::load(too_big_module(Module::compile(small_graph(), device()), scratch_dir("m") + "/m", true));
  try {
    Session s(device(), big, {std::string()});
    FAIL() << "the module was not refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("recompile_if_unmet"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("vk-run --recompile"), std::string::npos) << e.what();
  }
  SessionOptions so{std::string(), true};
  Session s(device(), big, so);
  EXPECT_EQ(s.module().target(), "host");
  std::map<std::string, HostTensor> in{{"x", iota_f32({64})}};
  EXPECT_TRUE(test::compare(s.run(in).at("y"), big.reference(in).at("y")).ok);
}

// The profile a module was planned for is no requirement: only what its dispatches use.
TEST_F(LimitsApi, ABiggerProfileAloneIsNoRefusal) {
  std::string dir = scratch_dir("m") + "/m";
  Module::compile(small_graph(), device()).save(dir);
  nlohmann::json j = nlohmann::json::parse(read_text_file(dir + "/manifest.json"));
  j["target"]["name"] = "bigger-gpu";
  j["target"]["max_compute_shared_memory_size"] = 1u << 30;
  j["target"]["max_compute_work_group_invocations"] = 1u << 20;
  j["target"]["subgroup_size"] = j["target"]["min_subgroup_size"] = j["target"]["max_subgroup_size"] = 1024;
  write_text_file(dir + "/manifest.json", j.dump(1));
  Module m = Module::load(dir);
  EXPECT_TRUE(m.unmet_limits(device()).empty());
  Session s(device(), m, {std::string()});
  std::map<std::string, HostTensor> in{{"x", iota_f32({64})}};
  EXPECT_TRUE(test::compare(s.run(in).at("y"), m.reference(in).at("y")).ok);
}

// A manifest of format version 1 records no "requires": the usage is read from its .spv files.
TEST_F(LimitsApi, FormatOneManifestsAreJudgedByTheirSpirv) {
  std::string dir = scratch_dir("m") + "/m";
  Module::compile(small_graph(), device()).save(dir);
  nlohmann::json j = nlohmann::json::parse(read_text_file(dir + "/manifest.json"));
  j["format_version"] = 1;
  for (nlohmann::json& d : j["dispatches"]) {
    ASSERT_TRUE(d.contains("requires"));
    d.erase("requires");
  }
  write_text_file(dir + "/manifest.json", j.dump(1));
  Module m = Module::load(dir);
  EXPECT_TRUE(m.unmet_limits(device()).empty());
  Session s(device(), m, {std::string()});
  std::map<std::string, HostTensor> in{{"x", iota_f32({64})}};
  EXPECT_TRUE(test::compare(s.run(in).at("y"), m.reference(in).at("y")).ok);
}

}  // namespace
}  // namespace vkc::api_test
