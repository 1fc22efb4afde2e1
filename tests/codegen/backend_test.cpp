// The compiler back end: GLSL -> SPIR-V, SPIRV-Tools passes, SPIR-V reflection
// and the shader template library.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "codegen/glsl_compiler.h"
#include "codegen/shader_library.h"
#include "codegen/spirv_tools.h"
#include "common/test_util.h"
#include "module/target_profiles.h"
#include "support/error.h"
#include "support/file_io.h"

namespace vkc::codegen {
namespace {

using test::error_of;

std::vector<uint32_t> build(const std::string& glsl, const std::string& target = "lavapipe") {
  const TargetLimits& t = find_target(target).limits;
  auto spirv = compile_glsl(glsl, "test_kernel", t);
  validate_spirv(spirv, t, "test_kernel");
  auto opt = optimize_spirv(spirv, t, "test_kernel");
  validate_spirv(opt, t, "test_kernel");
  return opt;
}

const char* kTwoSharedArrays = R"(#version 450
layout(local_size_x = 64, local_size_y = 2, local_size_z = 1) in;
layout(set = 0, binding = 0) buffer Data { float data[]; };
shared float a[256];
shared vec4 b[16];
void main() {
  uint i = gl_LocalInvocationIndex;
  a[i] = data[i];
  b[i % 16] = vec4(data[i + 1]);
  barrier();
  data[i] = a[255 - i] + b[(i + 3) % 16].y;
}
)";

const char* kSpecSizedShared = R"(#version 450
layout(local_size_x_id = 0, local_size_y = 4) in;
layout(constant_id = 3) const uint N = 64;
layout(set = 0, binding = 0) buffer Data { float data[]; };
shared float t[N];
void main() {
  uint i = gl_LocalInvocationIndex;
  t[i % N] = data[i];
  barrier();
  data[i] = t[(i + 1) % N];
}
)";

// ---- Glsl ----

TEST(Glsl, CompilesForEveryVulkanVersion) {
  for (const char* target : {"lavapipe", "vulkan-min", "nvidia"}) {
    auto words = build(kTwoSharedArrays, target);
    ASSERT_GT(words.size(), 5u);
    EXPECT_EQ(words[0], 0x07230203u);
  }
  TargetLimits v11;
  v11.name = "v11";
  v11.vulkan_version = "1.1";
  auto words = compile_glsl(kTwoSharedArrays, "k", v11);
  EXPECT_EQ(words[1], 0x00010300u);  // SPIR-V 1.3 for Vulkan 1.1
  EXPECT_EQ(compile_glsl(kTwoSharedArrays, "k", find_target("vulkan-min").limits)[1], 0x00010500u);
  // Vulkan 1.3 targets are capped at SPIR-V 1.5 (codegen/spirv_env.h).
  EXPECT_EQ(compile_glsl(kTwoSharedArrays, "k", find_target("nvidia").limits)[1], 0x00010500u);
}

TEST(Glsl, CompileErrorIsOneLineNamingTheKernel) {
  std::string msg = error_of([] {
    compile_glsl("#version 450\nlayout(local_size_x = 1) in;\nvoid main() { undeclared = 1; }\n",
                 "broken_kernel", find_target("lavapipe").limits);
  });
  EXPECT_EQ(msg.rfind("internal: kernel 'broken_kernel' failed to compile: ", 0), 0u) << msg;
  EXPECT_NE(msg.find("undeclared"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

// ---- Spirv ----

TEST(Spirv, MeasuresWorkgroupMemory) {
  auto words = build(kTwoSharedArrays);
  EXPECT_EQ(measure_workgroup_memory(words), 256u * 4 + 16u * 16);
  // Unoptimized output measures the same.
  auto raw = compile_glsl(kTwoSharedArrays, "k", find_target("lavapipe").limits);
  EXPECT_EQ(measure_workgroup_memory(raw), 256u * 4 + 16u * 16);
}

TEST(Spirv, MeasuresStructsAndMatrices) {
  auto words = build(R"(#version 450
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer Data { float data[]; };
struct S { float x; vec3 v; int k; };  // 0, 16..28, 28..32 -> 32 bytes, align 16
shared S s[4];
shared mat4 m;
shared bool flags[8];
void main() {
  uint i = gl_LocalInvocationIndex;
  s[i % 4].x = data[i]; s[i % 4].v = vec3(data[i]); s[i % 4].k = int(i);
  m[i % 4] = vec4(data[i]);
  flags[i % 8] = data[i] > 0.0;
  barrier();
  data[i] = s[(i + 1) % 4].v.y + float(s[i % 4].k) + m[(i + 2) % 4].x + (flags[(i + 1) % 8] ? 1.0 : 0.0)
            + s[(i + 3) % 4].x;
}
)");
  EXPECT_EQ(measure_workgroup_memory(words), 4u * 32 + 64 + 8 * 4);
}

TEST(Spirv, SpecializationConstantSizedShared) {
  auto words = build(kSpecSizedShared);
  EXPECT_EQ(measure_workgroup_memory(words), 64u * 4);
  EXPECT_EQ(measure_workgroup_memory(words, {{3, 128}}), 128u * 4);
  EXPECT_EQ(measure_workgroup_memory(words, {{7, 999}}), 64u * 4);  // unrelated id: default
}

TEST(Spirv, SpecConstantExpressionSizedShared) {
  auto words = build(R"(#version 450
layout(local_size_x = 64) in;
layout(constant_id = 1) const uint N = 8;
layout(set = 0, binding = 0) buffer Data { float data[]; };
shared float t[N * 2 + 1];
void main() {
  uint i = gl_LocalInvocationIndex;
  t[i % (N * 2 + 1)] = data[i];
  barrier();
  data[i] = t[(i + 1) % (N * 2 + 1)];
}
)");
  EXPECT_EQ(measure_workgroup_memory(words), (8u * 2 + 1) * 4);
  EXPECT_EQ(measure_workgroup_memory(words, {{1, 100}}), (100u * 2 + 1) * 4);
}

TEST(Spirv, ReadsLiteralLocalSize) {
  auto words = build(kTwoSharedArrays);
  EXPECT_EQ(read_local_size(words), (std::array<uint32_t, 3>{64, 2, 1}));
}

TEST(Spirv, ReadsLocalSizeIdWithSpecOverrides) {
  for (const char* target : {"lavapipe", "vulkan-min"}) {  // WorkgroupSize built-in form
    auto words = build(kSpecSizedShared, target);
    EXPECT_EQ(read_local_size(words), (std::array<uint32_t, 3>{1, 4, 1})) << target;
    EXPECT_EQ(read_local_size(words, {{0, 128}}), (std::array<uint32_t, 3>{128, 4, 1})) << target;
  }
}

TEST(Spirv, ValidationRejectsCorruptedModule) {
  const TargetLimits& t = find_target("lavapipe").limits;
  auto words = build(kTwoSharedArrays);
  // Turn the first OpTypeVoid into an opcode that does not exist (keeping its length).
  bool flipped = false;
  for (size_t i = 5; i < words.size(); i += words[i] >> 16) {
    if ((words[i] & 0xffff) == 19 /* OpTypeVoid */) {
      words[i] = (words[i] & 0xffff0000u) | 0xfffeu;
      flipped = true;
      break;
    }
  }
  ASSERT_TRUE(flipped);
  std::string msg = error_of([&] { validate_spirv(words, t, "bad_kernel"); });
  EXPECT_EQ(msg.rfind("internal: kernel 'bad_kernel' failed SPIR-V validation: ", 0), 0u) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  msg = error_of([&] { optimize_spirv(words, t, "bad_kernel"); });
  EXPECT_EQ(msg.rfind("internal: kernel 'bad_kernel' failed SPIR-V optimization: ", 0), 0u) << msg;
}

TEST(Spirv, ReflectionRejectsGarbage) {
  EXPECT_NE(error_of([] { measure_workgroup_memory({1, 2, 3}); }), "(no error)");
  EXPECT_NE(error_of([] { read_local_size({0x07230203u, 0x10000, 0, 10, 0, 0xffff0001u}); }), "(no error)");
}

// ---- ShaderLibrary ----

// A template the library does not ship: its keys are the shared array's type and length.
std::string workgroup_memory_template() {
  return read_text_file(test::source_path("tests/codegen/workgroup_memory.comp"));
}

std::string instantiate_test_template(const std::vector<std::pair<std::string, std::string>>& values) {
  return instantiate_template("test_workgroup_memory", workgroup_memory_template(), values);
}

TEST(ShaderLibrary, FindsTemplatesWithOrWithoutExtension) {
  EXPECT_EQ(&shader_source("elementwise"), &shader_source("elementwise.comp"));
  EXPECT_EQ(&shader_source("gemm_core"), &shader_source("gemm_core.glsl"));
  auto names = shader_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "elementwise"), names.end());
  // Test templates stay out of the library.
  EXPECT_EQ(std::find(names.begin(), names.end(), "test_workgroup_memory"), names.end());
  EXPECT_EQ(error_of([] { shader_source("no_such_kernel"); }),
            "internal: no shader template no_such_kernel");
}

TEST(ShaderLibrary, InstantiatesCompilesAndMeasures) {
  std::string glsl = instantiate_test_template({{"WG", "128"}, {"TYPE", "vec2"}, {"COUNT", "100"}});
  EXPECT_EQ(glsl.find("${"), std::string::npos);
  auto words = build(glsl);
  EXPECT_EQ(measure_workgroup_memory(words), 100u * 8);
  EXPECT_EQ(read_local_size(words), (std::array<uint32_t, 3>{128, 1, 1}));
}

TEST(ShaderLibrary, MissingAndUnknownKeysThrow) {
  EXPECT_EQ(error_of([] { instantiate_test_template({{"WG", "1"}, {"TYPE", "float"}}); }),
            "internal: shader template 'test_workgroup_memory': no value for '${COUNT}'");
  EXPECT_EQ(error_of([] {
              instantiate_test_template({{"WG", "1"}, {"TYPE", "float"}, {"COUNT", "4"}, {"EXTRA", "x"}});
            }),
            "internal: shader template 'test_workgroup_memory': key 'EXTRA' does not occur in the "
            "template");
  // A value containing "${...}" is inserted literally, not expanded again.
  std::string glsl = instantiate_test_template({{"WG", "1"}, {"TYPE", "${TYPE}"}, {"COUNT", "4"}});
  EXPECT_NE(glsl.find("${TYPE}"), std::string::npos);
}

}  // namespace
}  // namespace vkc::codegen
