// Modules of another format version (older, newer, none) are refused with one line that says
// which and how to recompile; the manifest records the writing vkc's version. Written relative to
// kModuleFormatVersion, so a format bump needs no change here.
#include <gtest/gtest.h>

#include <cstring>

#include <nlohmann/json.hpp>

#include "module/module_file.h"
#include "support/error.h"
#include "support/file_io.h"
#include "support/version.h"

namespace vkc {
namespace {

ModuleImage tiny_module() {
  ModuleImage m;
  m.manifest.target.name = "vulkan-min";
  m.manifest.tensors = {{"x", DType::f32, {4}, TensorRole::Input, 0, ""},
                        {"y", DType::f32, {4}, TensorRole::Output, 0, ""}};
  m.manifest.inputs = {"x"};
  m.manifest.outputs = {"y"};
  DispatchDesc d;
  d.name = "d0";
  d.spv = "d0.spv";
  d.bindings = {{0, "x", false}, {1, "y", true}};
  m.manifest.dispatches = {d};
  m.spirv["d0.spv"] = {0x07230203u, 0x00010000u, 0, 1, 0};
  return m;
}

// The manifest JSON with format_version set to `version` (nullopt: removed) and vkc_version to
// `writer`.
std::string manifest_with(std::optional<int> version, const std::string& writer) {
  nlohmann::json j = nlohmann::json::parse(manifest_to_json(tiny_module().manifest));
  if (version) j["format_version"] = *version;
  else j.erase("format_version");
  j["vkc_version"] = writer;
  return j.dump(1);
}

std::string refusal(const std::string& text, const std::string& module = "mod") {
  try {
    manifest_from_json(text, "mod/manifest.json", module);
  } catch (const FormatVersionError& e) {
    return e.what();
  } catch (const Error& e) {
    return std::string("not a FormatVersionError: ") + e.what();
  }
  return "accepted";
}

TEST(FormatVersion, ManifestRecordsVkcVersion) {
  const std::string text = manifest_to_json(tiny_module().manifest);
  EXPECT_EQ(nlohmann::json::parse(text)["vkc_version"], vkc_version());
  EXPECT_EQ(manifest_from_json(text).vkc_version, vkc_version());
  EXPECT_FALSE(std::string(vkc_version()).empty());
  // Informational only: another writer's version with this format loads.
  EXPECT_EQ(manifest_from_json(manifest_with(kModuleFormatVersion, "0.0.1")).vkc_version, "0.0.1");
}

TEST(FormatVersion, NewerIsRefusedSayingSoAndHowToRecompile) {
  const int newer = kModuleFormatVersion + 1;
  std::string e = refusal(manifest_with(newer, "9.9.9"));
  EXPECT_EQ(e, cat("mod/manifest.json: written by a newer vkc (format ", newer, ", this vkc reads ",
                   kOldestModuleFormatVersion, " to ", kModuleFormatVersion, "; vkc 9.9.9 wrote it, this is vkc ", vkc_version(),
                   "): recompile it from its model with vk-compile MODEL -o mod, or from the source graph "
                   "it carries with vk-run mod --recompile"));
}

TEST(FormatVersion, OlderAndZeroAreRefusedAsOlder) {
  for (int older : {kOldestModuleFormatVersion - 1, -3}) {
    std::string e = refusal(manifest_with(older, "0.0.1"));
    EXPECT_NE(e.find(cat("written by an older vkc (format ", older, ", this vkc reads ", kOldestModuleFormatVersion,
                         " to ", kModuleFormatVersion, "; vkc 0.0.1 wrote it")),
              std::string::npos)
        << e;
    EXPECT_NE(e.find("vk-run mod --recompile"), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

TEST(FormatVersion, AbsentIsRefused) {
  std::string e = refusal(manifest_with(std::nullopt, ""));
  EXPECT_NE(e.find("mod/manifest.json: has no format_version"), std::string::npos) << e;
  EXPECT_NE(e.find("vk-compile MODEL -o mod"), std::string::npos) << e;
}

TEST(FormatVersion, ModuleFileNamesItselfAndKeepsItsSourceReadable) {
  std::string dir = ::testing::TempDir();
  ModuleImage m = tiny_module();
  const std::string path = dir + "/newer.vkcm";
  // The writer always writes this format: patch the manifest's version digit and the checksum.
  std::vector<uint8_t> bytes = pack_module_file(m, {{kSourceGraphFile, "graph @g() {}"}});
  std::string s(bytes.begin(), bytes.end());
  const std::string ours = cat("\"format_version\": ", kModuleFormatVersion, ",");
  size_t at = s.find(ours);
  ASSERT_NE(at, std::string::npos);
  bytes[at + ours.size() - 2] = uint8_t('0' + (kModuleFormatVersion + 1) % 10);
  const uint64_t h = module_file_checksum(bytes.data() + 32, bytes.size() - 32);
  std::memcpy(bytes.data() + 24, &h, 8);
  try {
    unpack_module_file(bytes, path);
    ADD_FAILURE() << "accepted";
  } catch (const FormatVersionError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":manifest.json: written by a"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("vk-run " + path + " --recompile"), std::string::npos) << e.what();
  }
  // The source graph is still there for vk-run --recompile.
  write_file(path, bytes.data(), bytes.size());
  const std::map<std::string, std::string> sections = read_module_file_sections(path, {kSourceGraphFile, "nothing.txt"});
  EXPECT_EQ(sections.size(), 1u);
  EXPECT_EQ(sections.count(kSourceGraphFile) ? sections.at(kSourceGraphFile) : "absent", "graph @g() {}");
}

}  // namespace
}  // namespace vkc
