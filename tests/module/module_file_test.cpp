// The single-file module (.vkcm): round trip and refusal of malformed files, with one-line errors.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "module/module_file.h"
#include "support/error.h"

namespace vkc {
namespace {

ModuleImage tiny_module() {
  ModuleImage m;
  m.manifest.target.name = "vulkan-min";
  m.manifest.tensors = {{"x", DType::f32, {4}, TensorRole::Input, 0, ""},
                        {"y", DType::f32, {4}, TensorRole::Output, 0, ""},
                        {"c", DType::f32, {2}, TensorRole::Constant, 0, ""}};
  m.manifest.inputs = {"x"};
  m.manifest.outputs = {"y"};
  m.manifest.constants_bytes = 8;
  DispatchDesc d;
  d.name = "d0";
  d.spv = "d0.spv";
  d.bindings = {{0, "x", false}, {1, "y", true}, {2, "c", false}};
  m.manifest.dispatches = {d};
  m.spirv["d0.spv"] = {0x07230203u, 0x00010000u, 0, 1, 0};
  m.constants = {1, 2, 3, 4, 5, 6, 7, 8};
  return m;
}

std::string error_of(const std::vector<uint8_t>& bytes) {
  try {
    unpack_module_file(bytes, "m.vkcm");
  } catch (const Error& e) {
    std::string s = e.what();
    EXPECT_EQ(s.find('\n'), std::string::npos) << s;
    return s;
  }
  return "no error";
}

void rehash(std::vector<uint8_t>& b) {
  uint64_t h = module_file_checksum(b.data() + 32, b.size() - 32);
  std::memcpy(b.data() + 24, &h, 8);
}

TEST(ModuleFile, RoundTripWithExtras) {
  ModuleImage m = tiny_module();
  std::vector<uint8_t> bytes = pack_module_file(m, {{"source.vkir", "graph @g() {}"}});
  ModuleExtras extras;
  ModuleImage back = unpack_module_file(bytes, "m.vkcm", &extras);
  // The writer records each .spv's content hash (checked at load); otherwise the manifest is the same.
  EXPECT_EQ(manifest_to_json(back.manifest), manifest_to_json(manifest_with_spirv_hashes(m)));
  EXPECT_FALSE(back.manifest.dispatches.at(0).spv_hash.empty());
  EXPECT_EQ(back.spirv, m.spirv);
  EXPECT_EQ(back.constants, m.constants);
  EXPECT_EQ(extras.at("source.vkir"), "graph @g() {}");
  EXPECT_EQ(bytes.size() % 8, 0u);
}

// Version 1 differs only in its checksum (FNV-1a): such files still load, each version checked
// its own way, so a version-1 header over a version-2 checksum is corruption.
TEST(ModuleFile, VersionOneFilesLoadWithTheirOwnChecksum) {
  ModuleImage m = tiny_module();
  std::vector<uint8_t> b = pack_module_file(m, {{"source.vkir", "graph @g() {}"}});
  b[8] = 1;
  EXPECT_NE(error_of(b).find("checksum mismatch"), std::string::npos) << error_of(b);
  const uint64_t h = module_file_checksum(b.data() + 32, b.size() - 32, 1);
  EXPECT_NE(h, module_file_checksum(b.data() + 32, b.size() - 32));
  std::memcpy(b.data() + 24, &h, 8);
  ModuleExtras extras;
  ModuleImage back = unpack_module_file(b, "old.vkcm", &extras);
  EXPECT_EQ(back.spirv, m.spirv);
  EXPECT_EQ(back.constants, m.constants);
  EXPECT_EQ(extras.at("source.vkir"), "graph @g() {}");
}

// Reading a file whose constants are nearly all of it moves them to the front of the file's own
// buffer instead of copying them out; with a large extra section they are copied. Either way the
// module comes back the same.
TEST(ModuleFile, ConstantsComeBackWhetherTheFileBufferIsReusedOrNot) {
  const std::string dir = ::testing::TempDir() + "/vkc_module_file_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  ModuleImage m = tiny_module();
  m.constants.resize(size_t(1) << 20);
  for (size_t i = 0; i < m.constants.size(); ++i) m.constants[i] = uint8_t(i * 7 + i / 251);
  m.manifest.tensors[2].shape = {int64_t(m.constants.size() / 4)};
  m.manifest.constants_bytes = m.constants.size();
  for (const bool big_extra : {false, true}) {
    const std::string path = dir + (big_extra ? "/extra.vkcm" : "/plain.vkcm");
    ModuleExtras extras;
    if (big_extra) extras["source.bin"] = std::string(m.constants.size() / 2, 'x');
    write_module_file(path, m, extras);
    ModuleExtras back_extras;
    ModuleImage back = read_module_file(path, &back_extras);
    EXPECT_EQ(back.constants, m.constants) << path;
    EXPECT_EQ(back.spirv, m.spirv) << path;
    EXPECT_EQ(back_extras, extras) << path;
    // The reused buffer still has the file's capacity; a copy has only the constants'.
    EXPECT_EQ(back.constants.capacity() > back.constants.size(), !big_extra) << path;
  }
  std::filesystem::remove_all(dir);
}

TEST(ModuleFile, BadMagic) {
  std::vector<uint8_t> b = pack_module_file(tiny_module());
  b[0] = 'X';
  EXPECT_NE(error_of(b).find("bad magic"), std::string::npos) << error_of(b);
  EXPECT_NE(error_of({}).find("bad magic"), std::string::npos);
}

TEST(ModuleFile, WrongVersion) {
  std::vector<uint8_t> b = pack_module_file(tiny_module());
  b[8] = uint8_t(kModuleFileVersion + 1);
  EXPECT_NE(error_of(b).find(cat("module file version ", kModuleFileVersion + 1,
                                 " is not supported: written by a newer vkc")),
            std::string::npos)
      << error_of(b);
  b[8] = 0;
  EXPECT_NE(error_of(b).find("module file version 0 is not supported: written by an older vkc"), std::string::npos)
      << error_of(b);
}

TEST(ModuleFile, Truncated) {
  std::vector<uint8_t> b = pack_module_file(tiny_module());
  for (size_t keep : {size_t(12), size_t(40), b.size() / 2, b.size() - 1}) {
    std::vector<uint8_t> t(b.begin(), b.begin() + long(keep));
    std::string e = error_of(t);
    EXPECT_TRUE(e.find("truncated") != std::string::npos || e.find("bad magic") != std::string::npos) << keep << ": " << e;
  }
}

TEST(ModuleFile, IndexPointingOutsideTheFile) {
  std::vector<uint8_t> b = pack_module_file(tiny_module());
  uint64_t far = b.size() + 100;
  std::memcpy(b.data() + 32, &far, 8);  // first entry's offset
  EXPECT_NE(error_of(b).find("lies outside the file"), std::string::npos) << error_of(b);
  std::vector<uint8_t> c = pack_module_file(tiny_module());
  uint64_t huge = ~0ull;
  std::memcpy(c.data() + 40, &huge, 8);  // first entry's size (offset + size overflows)
  EXPECT_NE(error_of(c).find("lies outside the file"), std::string::npos) << error_of(c);
}

TEST(ModuleFile, CorruptedPayloadAndManifest) {
  std::vector<uint8_t> b = pack_module_file(tiny_module());
  b[b.size() - 1] ^= 0xFF;
  EXPECT_NE(error_of(b).find("checksum mismatch"), std::string::npos) << error_of(b);

  // A structurally valid file whose manifest is not: the manifest's own checks name the field.
  ModuleImage m = tiny_module();
  std::vector<uint8_t> c = pack_module_file(m);
  std::string text = manifest_to_json(m.manifest);
  const std::string ours = cat("\"format_version\": ", kModuleFormatVersion, ",");
  size_t at = std::string(c.begin(), c.end()).find(ours);
  ASSERT_NE(at, std::string::npos);
  c[at + ours.size() - 2] = '7';  // the last digit: another version with the same length
  rehash(c);
  EXPECT_NE(error_of(c).find("m.vkcm:manifest.json: written by a"), std::string::npos) << error_of(c);
}

TEST(ModuleFile, MissingSpirvSection) {
  ModuleImage m = tiny_module();
  m.spirv.clear();
  EXPECT_NE(error_of(pack_module_file(m)).find("section 'd0.spv' is missing"), std::string::npos);
}

}  // namespace
}  // namespace vkc
