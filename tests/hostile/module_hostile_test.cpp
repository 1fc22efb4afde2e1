// Hostile compiled modules: a manifest that points outside its directory, a missing or corrupt
// .spv, truncated constants, and a module planned for a target the device does not meet.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "codegen/compiler.h"
#include "common/gpu_harness.h"
#include "hostile/hostile_util.h"
#include "ir/text_format.h"
#include "module/module_file.h"
#include "module/target_profiles.h"

namespace vkc::hostile {
namespace {

ModuleImage relu_module(const std::string& target) {
  codegen::CompileOptions o;
  o.target = find_target(target).limits;
  return codegen::compile_graph(ir::parse_graph("graph @g(%x: tensor<64xf32>) {\n"
                                                "  %y = relu (%x) : tensor<64xf32>\n"
                                                "  return %y as \"y\"\n}\n"),
                                o);
}

std::string read_text(const std::string& path) {
  std::vector<uint8_t> b = read_bytes(path);
  return {b.begin(), b.end()};
}

void replace_once(std::string& text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
}

TEST(HostileModule, SpvPathTraversalIsRefused) {
  ModuleImage m = relu_module("lavapipe");
  std::string json = manifest_to_json(m.manifest);
  const std::string spv = m.manifest.dispatches.at(0).spv;
  for (const char* evil : {"../x.spv", "/etc/passwd", "sub/dir.spv", "..", "a\\\\b.spv"}) {
    std::string bad = json;
    replace_once(bad, "\"" + spv + "\"", "\"" + std::string(evil) + "\"");
    std::string message = error_of([&] { manifest_from_json(bad, "evil/manifest.json"); });
    EXPECT_NE(message.find("must be a plain file name inside the module directory"), std::string::npos)
        << evil << ": " << message;
    EXPECT_NE(message.find("evil/manifest.json"), std::string::npos) << message;
  }
}

TEST(HostileModule, ConstantsPathTraversalIsRefused) {
  std::string json = manifest_to_json(relu_module("lavapipe").manifest);
  replace_once(json, "\"constants.bin\"", "\"../../secret.bin\"");
  EXPECT_NE(error_of([&] { manifest_from_json(json); }).find("constants_file"), std::string::npos);
}

TEST(HostileModule, TraversalInAModuleDirectoryIsRefusedBeforeAnyRead) {
  std::string dir = scratch_dir("module-traversal");
  ModuleImage m = relu_module("lavapipe");
  write_module_dir(dir + "/mod", m);
  // A file outside the module that a traversal would otherwise read.
  write_bytes(dir + "/x.spv", read_bytes(dir + "/mod/" + m.manifest.dispatches[0].spv));
  std::string json = read_text(dir + "/mod/manifest.json");
  replace_once(json, "\"" + m.manifest.dispatches[0].spv + "\"", "\"../x.spv\"");
  std::ofstream(dir + "/mod/manifest.json", std::ios::trunc) << json;
  std::string message = error_of([&] { read_module_dir(dir + "/mod"); });
  EXPECT_NE(message.find("../x.spv"), std::string::npos) << message;
  EXPECT_NE(message.find("inside the module directory"), std::string::npos) << message;
}

TEST(HostileModule, MissingSpvNamesTheFile) {
  std::string dir = scratch_dir("module-missing-spv");
  ModuleImage m = relu_module("lavapipe");
  write_module_dir(dir, m);
  std::filesystem::remove(dir + "/" + m.manifest.dispatches[0].spv);
  std::string message = error_of([&] { read_module_dir(dir); });
  EXPECT_NE(message.find(m.manifest.dispatches[0].spv), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(HostileModule, CorruptSpvIsRefused) {
  std::string dir = scratch_dir("module-corrupt-spv");
  ModuleImage m = relu_module("lavapipe");
  write_module_dir(dir, m);
  write_bytes(dir + "/" + m.manifest.dispatches[0].spv, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20});
  EXPECT_NE(error_of([&] { read_module_dir(dir); }).find("not a SPIR-V module"), std::string::npos);
  write_bytes(dir + "/" + m.manifest.dispatches[0].spv, {3, 2, 0x23});
  EXPECT_NE(error_of([&] { read_module_dir(dir); }), "(no error)");
}

// Issue #24 item 8: a .spv cut short (at a word boundary, so the old size and magic checks pass)
// reached the driver and came back as VK_ERROR_UNKNOWN. Cut mid-instruction, the instruction walk
// names the file; cut at an instruction boundary, only the manifest's content hash can tell.
TEST(HostileModule, TruncatedSpvInADirectoryNamesTheFile) {
  ModuleImage m = relu_module("lavapipe");
  const std::string spv = m.manifest.dispatches[0].spv;
  const std::vector<uint32_t>& words = m.spirv.at(spv);
  ASSERT_GT(words.size(), 40u);
  // Word offsets where instructions start, to cut exactly at one and inside one.
  std::vector<size_t> starts;
  for (size_t at = 5; at < words.size(); at += words[at] >> 16) starts.push_back(at);
  size_t mid = 0;
  for (size_t s : starts)
    if ((words[s] >> 16) > 1 && s > words.size() / 2) { mid = s + 1; break; }
  ASSERT_NE(mid, 0u);
  struct Cut {
    size_t words;
    const char* expect;
  };
  for (Cut cut : {Cut{mid, "truncated or corrupt SPIR-V: the instruction at word "},
                  Cut{starts[starts.size() / 2], "does not match the manifest's"}}) {
    std::string dir = scratch_dir("module-truncated-spv");
    write_module_dir(dir, m);
    std::vector<uint8_t> bytes = read_bytes(dir + "/" + spv);
    bytes.resize(cut.words * 4);
    write_bytes(dir + "/" + spv, bytes);
    std::string message = error_of([&] { read_module_dir(dir); });
    EXPECT_EQ(message.rfind(dir + "/" + spv + ": ", 0), 0u) << message;
    EXPECT_NE(message.find(cut.expect), std::string::npos) << message;
    EXPECT_NE(message.find("recompile the module"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

// A wrong SPIR-V version word (a flipped byte in the header) is named too.
TEST(HostileModule, BadSpirvVersionIsRefused) {
  std::string dir = scratch_dir("module-spv-version");
  ModuleImage m = relu_module("lavapipe");
  m.spirv.begin()->second[1] = 0x00020000u;  // "2.0": recorded in the hash, caught by the header check
  write_module_dir(dir, m);
  EXPECT_NE(error_of([&] { read_module_dir(dir); }).find("SPIR-V version word 0x00020000 is not 1.0 to 1.6"),
            std::string::npos);
}

// Manifests written before spv_hash existed still load (module/manifest.cpp says why).
TEST(HostileModule, ManifestWithoutSpvHashStillLoads) {
  std::string dir = scratch_dir("module-no-hash");
  ModuleImage m = relu_module("lavapipe");
  write_module_dir(dir, m);
  std::string json = read_text(dir + "/manifest.json");
  ASSERT_NE(json.find("\"spv_hash\""), std::string::npos) << "the writer records the hash";
  std::string old_json = manifest_to_json(m.manifest);  // the in-memory manifest has no hashes
  ASSERT_EQ(old_json.find("\"spv_hash\""), std::string::npos);
  std::ofstream(dir + "/manifest.json", std::ios::trunc) << old_json;
  EXPECT_EQ(read_module_dir(dir).spirv.at(m.manifest.dispatches[0].spv), m.spirv.at(m.manifest.dispatches[0].spv));
}

// In a .vkcm the whole-file checksum catches a damaged .spv first (naming the .vkcm); a file whose
// checksum was recomputed after the .spv changed (a careless repack) is caught by the spv hash.
TEST(HostileModule, CorruptSpvInAVkcmNamesTheFile) {
  std::string dir = scratch_dir("module-vkcm-spv");
  ModuleImage m = relu_module("lavapipe");
  const std::string spv = m.manifest.dispatches[0].spv;
  std::vector<uint8_t> bytes = pack_module_file(m);
  std::vector<uint8_t> spv_bytes(reinterpret_cast<const uint8_t*>(m.spirv.at(spv).data()),
                                 reinterpret_cast<const uint8_t*>(m.spirv.at(spv).data()) + m.spirv.at(spv).size() * 4);
  auto at = std::search(bytes.begin(), bytes.end(), spv_bytes.begin(), spv_bytes.end());
  ASSERT_NE(at, bytes.end());
  at[spv_bytes.size() - 4] ^= 0x40;  // the last opcode (not its word count): the walk still passes
  std::string message = error_of([&] { unpack_module_file(bytes, "m.vkcm"); });
  EXPECT_EQ(message.rfind("m.vkcm: ", 0), 0u) << message;
  EXPECT_NE(message.find("checksum"), std::string::npos) << message;
  uint64_t sum = module_file_checksum(bytes.data() + 32, bytes.size() - 32);
  for (int i = 0; i < 8; ++i) bytes[24 + size_t(i)] = uint8_t(sum >> (8 * i));
  message = error_of([&] { unpack_module_file(bytes, "m.vkcm"); });
  EXPECT_EQ(message.rfind("m.vkcm:" + spv + ": content hash ", 0), 0u) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

// Found by fuzz_manifest: json::parse throws out_of_range (not parse_error) for a number no C++
// type holds, which escaped manifest_from_json as a non-vkc exception and aborted vk-run.
TEST(HostileModule, NumberOverflowInTheManifestIsAnError) {
  std::vector<uint8_t> bytes = read_bytes(data_path("manifest_number_overflow.json"));
  std::string message = error_of([&] { manifest_from_json(std::string(bytes.begin(), bytes.end()), "m.json"); });
  EXPECT_EQ(message.rfind("m.json: not valid JSON", 0), 0u) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

// Found by fuzz_manifest: a uint32_t target limit given as 3.3e45 was converted with undefined
// behaviour (UBSan: "outside the range of representable values"); negative and too-large
// integers wrapped silently.
TEST(HostileModule, TargetLimitsMustBeExactIntegersInRange) {
  std::vector<uint8_t> bytes = read_bytes(data_path("manifest_limit_float_overflow.json"));
  std::string message = error_of([&] { manifest_from_json(std::string(bytes.begin(), bytes.end()), "m.json"); });
  EXPECT_NE(message.find("max_per_stage_descriptor_storage_buffers"), std::string::npos) << message;
  std::string json = manifest_to_json(relu_module("lavapipe").manifest);
  size_t at = json.find("\"max_push_constants_size\": ");
  ASSERT_NE(at, std::string::npos);
  at += 27;
  size_t end = json.find_first_of(",\n}", at);
  for (const char* bad : {"3.3e45", "-1", "4294967296", "128.5", "\"128\""}) {
    std::string text = json;
    text.replace(at, end - at, bad);
    message = error_of([&] { manifest_from_json(text, "m.json"); });
    EXPECT_NE(message.find("'max_push_constants_size' has the wrong type or is out of range"), std::string::npos)
        << bad << ": " << message;
  }
}

// Found by fuzz_manifest in CI: a binding number given as 2.3e109 reached nlohmann's get<uint32_t>()
// (undefined behaviour). Every integer field of the manifest itself, not only the target limits,
// must be a JSON integer that fits its C++ type; each bad value is refused with the field's path.
TEST(HostileModule, ManifestIntegersMustBeExactAndInRange) {
  const std::string json = manifest_to_json(relu_module("lavapipe").manifest);
  struct Field {
    const char* key;   // the JSON key whose first occurrence is replaced
    const char* path;  // what the error must name
  };
  for (Field f : {Field{"\"binding\": ", ".binding"}, Field{"\"workgroup_memory_bytes\": ", ".workgroup_memory_bytes"},
                  Field{"\"arena_bytes\": ", ".arena_bytes"}, Field{"\"format_version\": ", "format"}}) {
    size_t at = json.find(f.key);
    ASSERT_NE(at, std::string::npos) << f.key;
    at += std::string(f.key).size();
    const size_t end = json.find_first_of(",\n}", at);
    for (const char* bad : {"2.3e109", "-1", "18446744073709551616", "3.5", "\"7\"", "true"}) {
      std::string text = json;
      text.replace(at, end - at, bad);
      std::string message = error_of([&] { manifest_from_json(text, "m.json"); });
      EXPECT_NE(message.find(f.path), std::string::npos) << f.key << bad << ": " << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }
}

TEST(HostileModule, MissingManifest) {
  std::string dir = scratch_dir("module-empty");
  std::string message = error_of([&] { read_module_dir(dir); });
  EXPECT_NE(message.find("manifest.json"), std::string::npos) << message;
}

TEST(HostileModule, DispatchTheDeviceCannotRun) {
  rt::Context& ctx = test::shared_context();
  // A dispatch that claims a workgroup larger than the device allows: refused before any GPU work,
  // naming the dispatch, both numbers and the way out.
  ModuleImage m = relu_module("lavapipe");
  m.manifest.target.name = "beyond-this-device";
  DispatchDesc& d = m.manifest.dispatches.at(0);
  d.workgroup_size = {ctx.limits().max_compute_work_group_invocations + 1, 1, 1};
  std::string message = error_of([&] { rt::Program p(ctx, m); });
  EXPECT_EQ(message.rfind("module compiled for target 'beyond-this-device' does not fit device '", 0), 0u) << message;
  EXPECT_NE(message.find(cat("dispatch '", d.name, "' uses ", ctx.limits().max_compute_work_group_invocations + 1,
                             " invocations per workgroup, the device allows ",
                             ctx.limits().max_compute_work_group_invocations, " (maxComputeWorkGroupInvocations)")),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("vk-run --recompile"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_TRUE(ctx.validation_messages().empty());
}

}  // namespace
}  // namespace vkc::hostile
