// The NV -> KHR cooperative matrix rewrite (codegen/spirv_coopmat_khr.h), checked word by word on
// kernels glslang 12 compiles here: roles (Use) from the product's operand slots, layouts from the
// NV column-major constants, strides and memory operands kept, signedness of integer products,
// B's specialization-constant scope replaced, and the refusals. Debian 12's SPIRV-Tools cannot
// validate the KHR form, so the structure is checked here and the GPU machine runs it.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "codegen/glsl_compiler.h"
#include "codegen/kernels/gemm_coopmat.h"
#include "codegen/kernels/integer_coopmat.h"
#include "codegen/shader_library.h"
#include "codegen/spirv_coopmat_khr.h"
#include "codegen/spirv_tools.h"
#include "module/target_profiles.h"
#include "support/error.h"

namespace vkc::codegen {
namespace {

namespace khr = spv_khr;

struct Inst {
  uint32_t opcode;
  std::vector<uint32_t> w;  // the whole instruction
};

// Splits a module into instructions, checking that the word counts tile it exactly.
std::vector<Inst> split(const std::vector<uint32_t>& words) {
  std::vector<Inst> out;
  size_t i = 5;
  while (i < words.size()) {
    uint32_t count = words[i] >> 16;
    EXPECT_GE(count, 1u);
    EXPECT_LE(i + count, words.size());
    if (count == 0 || i + count > words.size()) break;
    out.push_back({words[i] & 0xffffu, std::vector<uint32_t>(words.begin() + long(i), words.begin() + long(i + count))});
    i += count;
  }
  EXPECT_EQ(i, words.size());
  return out;
}

std::string text_of(const std::vector<uint32_t>& w, size_t first) {
  std::string s;
  for (size_t i = first; i < w.size(); ++i)
    for (int b = 0; b < 4; ++b) {
      char c = char((w[i] >> (8 * b)) & 0xffu);
      if (c == '\0') return s;
      s += c;
    }
  return s;
}

std::vector<uint32_t> nv_module(const std::string& body_types, const std::string& body) {
  std::string src = "#version 450\n#extension GL_NV_cooperative_matrix : require\n"
                    "#extension GL_NV_integer_cooperative_matrix : require\n"
                    "#extension GL_KHR_memory_scope_semantics : require\n"
                    "#extension GL_EXT_shader_explicit_arithmetic_types : require\n"
                    "layout(local_size_x = 32) in;\nlayout(constant_id = 0) const uint SCOPE_B = 3;\n" +
                    body_types + "void main() {\n" + body + "}\n";
  TargetLimits t = find_target("nvidia").limits;
  std::vector<uint32_t> words = compile_glsl(src, "coopmat_test", t);
  words = optimize_spirv(words, t, "coopmat_test");
  validate_spirv(words, t, "coopmat_test");  // the NV form is valid before the rewrite
  return words;
}

const char* kHalfBuffers =
    "layout(std430, binding = 0) buffer A { float16_t a[]; };\n"
    "layout(std430, binding = 1) buffer B { float16_t b[]; };\n"
    "layout(std430, binding = 2) buffer C { float c[]; };\n";
const char* kHalfProduct =
    "  fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fa;\n"
    "  fcoopmatNV<16, SCOPE_B, 16, 16> fb;\n"
    "  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);\n"
    "  coopMatLoadNV(fa, a, 0, 24, false);\n"
    "  coopMatLoadNV(fb, b, 0, 40, true);\n"
    "  acc = coopMatMulAddNV(fa, fb, acc);\n"
    "  coopMatStoreNV(acc, c, 0, 56, false);\n";

// What a rewritten module says, resolved through its constants.
struct Facts {
  std::map<uint32_t, uint32_t> constant;  // OpConstant id -> value
  std::map<uint32_t, uint32_t> type_use;  // KHR matrix type -> Use value
  std::map<uint32_t, uint32_t> scope;     // KHR matrix type -> scope id
  std::map<uint32_t, uint32_t> type_of;   // load result -> its type
  std::vector<Inst> loads, stores, products;
  std::vector<uint32_t> capabilities;
  std::vector<std::string> extensions;
};

Facts facts_of(const std::vector<uint32_t>& words) {
  Facts f;
  for (const Inst& in : split(words)) {
    EXPECT_FALSE(in.opcode >= 5358 && in.opcode <= 5362) << "NV opcode " << in.opcode << " left";
    switch (in.opcode) {
      case 17: f.capabilities.push_back(in.w[1]); break;
      case 10: f.extensions.push_back(text_of(in.w, 1)); break;
      case 43: f.constant[in.w[2]] = in.w[3]; break;
      case khr::kOpTypeCooperativeMatrixKHR:
        EXPECT_EQ(in.w.size(), 7u);
        EXPECT_TRUE(f.constant.count(in.w[6])) << "Use is not a constant declared before the type";
        f.type_use[in.w[1]] = f.constant[in.w[6]];
        f.scope[in.w[1]] = in.w[3];
        break;
      case 61: f.type_of[in.w[2]] = in.w[1]; break;  // OpLoad (of a matrix variable)
      case khr::kOpCooperativeMatrixLoadKHR: f.loads.push_back(in); f.type_of[in.w[2]] = in.w[1]; break;
      case khr::kOpCooperativeMatrixStoreKHR: f.stores.push_back(in); break;
      case khr::kOpCooperativeMatrixMulAddKHR: f.products.push_back(in); break;
      default: break;
    }
  }
  return f;
}

// A tensor-core loop (`loop`: its GLSL with gemm_tile) in a 128-invocation kernel over 64-wide
// operands A, B (elements `in`) and C (`out`), with the operand functions it calls (`access`),
// compiled for the nvidia profile in NV form, optimized, validated, then rewritten to KHR.
std::vector<uint32_t> khr_words_of_loop(const std::string& in, const std::string& out, const std::string& access,
                                        const std::string& loop, const std::string& name) {
  const std::string src = "#version 450\n#extension GL_KHR_memory_scope_semantics : require\n"
                          "layout(local_size_x = 128) in;\n"
                          "layout(std430, binding = 0) readonly buffer A { " + in + " a[]; };\n"
                          "layout(std430, binding = 1) readonly buffer B { " + in + " b[]; };\n"
                          "layout(std430, binding = 2) writeonly buffer C { " + out + " c[]; };\n" +
                          access + loop + "void main() { gemm_tile(gl_WorkGroupID.x * TM, 0u, 0u, 64u); }\n";
  TargetLimits t = find_target("nvidia").limits;
  std::vector<uint32_t> nv = optimize_spirv(compile_glsl(src, name, t), t, name);
  validate_spirv(nv, t, name);
  return cooperative_matrix_nv_to_khr(nv, name);
}

TEST(CoopMatrixKhrRewrite, HalfProductGetsRolesLayoutsAndStrides) {
  std::vector<uint32_t> nv = nv_module(kHalfBuffers, kHalfProduct);
  std::vector<uint32_t> khr_words = cooperative_matrix_nv_to_khr(nv, "coopmat_test");
  EXPECT_EQ(khr_words[0], 0x07230203u);
  EXPECT_GE(khr_words[3], nv[3]);
  Facts f = facts_of(khr_words);
  EXPECT_NE(std::find(f.capabilities.begin(), f.capabilities.end(), khr::kCapabilityCooperativeMatrixKHR),
            f.capabilities.end());
  EXPECT_EQ(std::find(f.capabilities.begin(), f.capabilities.end(), 5357u), f.capabilities.end());
  EXPECT_NE(std::find(f.extensions.begin(), f.extensions.end(), "SPV_KHR_cooperative_matrix"), f.extensions.end());
  EXPECT_EQ(std::find(f.extensions.begin(), f.extensions.end(), "SPV_NV_cooperative_matrix"), f.extensions.end());

  ASSERT_EQ(f.type_use.size(), 3u);
  ASSERT_EQ(f.products.size(), 1u);
  const Inst& p = f.products[0];
  ASSERT_EQ(p.w.size(), 6u) << "a float product takes no signedness operand";
  EXPECT_EQ(f.type_use.at(p.w[1]), khr::kMatrixAccumulator);
  // The product's A and B are loads of matrix variables, so their types are known.
  ASSERT_TRUE(f.type_of.count(p.w[3]) && f.type_of.count(p.w[4]));
  EXPECT_EQ(f.type_use.at(f.type_of.at(p.w[3])), khr::kMatrixA);
  EXPECT_EQ(f.type_use.at(f.type_of.at(p.w[4])), khr::kMatrixB);
  // Every scope, B's included, is the plain Subgroup constant (3), not the specialization constant.
  for (const auto& [type, scope] : f.scope) {
    ASSERT_TRUE(f.constant.count(scope)) << "type " << type;
    EXPECT_EQ(f.constant.at(scope), 3u);
  }

  // Loads: rt, r, pointer, layout, stride, memory operand. A row-major with stride 24, B column-major 40.
  ASSERT_EQ(f.loads.size(), 2u);
  for (const Inst& l : f.loads) {
    ASSERT_GE(l.w.size(), 6u);
    bool is_a = f.type_use.at(l.w[1]) == khr::kMatrixA;
    EXPECT_EQ(f.constant.at(l.w[4]), is_a ? khr::kRowMajor : khr::kColumnMajor);
    EXPECT_EQ(f.constant.at(l.w[5]), is_a ? 24u : 40u);
  }
  // Store: pointer, object, layout, stride.
  ASSERT_EQ(f.stores.size(), 1u);
  ASSERT_GE(f.stores[0].w.size(), 5u);
  EXPECT_EQ(f.constant.at(f.stores[0].w[3]), khr::kRowMajor);
  EXPECT_EQ(f.constant.at(f.stores[0].w[4]), 56u);
}

TEST(CoopMatrixKhrRewrite, IntegerProductCarriesSignedness) {
  std::vector<uint32_t> nv = nv_module(
      "layout(std430, binding = 0) buffer A { int8_t a[]; };\n"
      "layout(std430, binding = 1) buffer B { int8_t b[]; };\n"
      "layout(std430, binding = 2) buffer C { int c[]; };\n",
      "  icoopmatNV<8, gl_ScopeSubgroup, 16, 32> fa;\n"
      "  icoopmatNV<8, SCOPE_B, 32, 16> fb;\n"
      "  icoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc = icoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0);\n"
      "  coopMatLoadNV(fa, a, 0, 32, false);\n"
      "  coopMatLoadNV(fb, b, 0, 16, true);\n"
      "  acc = coopMatMulAddNV(fa, fb, acc);\n"
      "  coopMatStoreNV(acc, c, 0, 16, false);\n");
  Facts f = facts_of(cooperative_matrix_nv_to_khr(nv, "coopmat_test"));
  ASSERT_EQ(f.products.size(), 1u);
  ASSERT_EQ(f.products[0].w.size(), 7u);
  EXPECT_EQ(f.products[0].w[6], khr::kASigned | khr::kBSigned | khr::kCSigned | khr::kResultSigned);
}

TEST(CoopMatrixKhrRewrite, OneTypeInTwoRolesIsRefused) {
  std::string same_type = kHalfProduct;
  same_type.replace(same_type.find("SCOPE_B"), 7, "gl_ScopeSubgroup");
  std::vector<uint32_t> nv = nv_module(kHalfBuffers, same_type);
  try {
    cooperative_matrix_nv_to_khr(nv, "coopmat_test");
    FAIL() << "a type used as both A and B was rewritten";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("two roles"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("coopmat_test"), std::string::npos) << e.what();
  }
}

// vkc's own tensor-core loop (shaders/gemm_coopmat.glsl) in its KHR form, in a minimal kernel:
// every product's A and B get the A and B roles and every load and store a layout; lagged too
// (its fragments kept from one step to the next in module-scope arrays of both roles' types).
TEST(CoopMatrixKhrRewrite, TheGemmLoopRewrites) {
  for (bool lagged : {false, true})
  for (bool a_kfast : {false, true}) {
    SCOPED_TRACE(lagged ? "lagged" : "not lagged");
    CoopTile tile{64, 64, 32, 2, 2, 32, a_kfast, !a_kfast, 1};
    Facts f = facts_of(khr_words_of_loop("float", "float",
                                         "void a_begin(uint m) {}\nfloat a_load(uint m, uint k) { return a[m * 64u + k]; }\n"
                                         "void b_begin(uint n) {}\nfloat b_load(uint n, uint k) { return b[k * 64u + n]; }\n"
                                         "void store_c(uint m, uint n, float v) { c[m * 64u + n] = v; }\n",
                                         kernels::gemm_coopmat_glsl(tile, false, true, false, false, 1, lagged),
                                         "gemm_loop"));
    ASSERT_EQ(f.type_use.size(), 3u);
    EXPECT_FALSE(f.products.empty());
    for (const Inst& p : f.products) {
      ASSERT_TRUE(f.type_of.count(p.w[3]) && f.type_of.count(p.w[4]));
      EXPECT_EQ(f.type_use.at(f.type_of.at(p.w[3])), khr::kMatrixA);
      EXPECT_EQ(f.type_use.at(f.type_of.at(p.w[4])), khr::kMatrixB);
    }
    // A K-fast A tile ([m][k]) is row-major, an M-fast one column-major; a K-fast B tile
    // ([n][k]) is column-major, an N-fast one row-major (shaders/gemm_coopmat.glsl).
    for (const Inst& l : f.loads) {
      uint32_t use = f.type_use.at(l.w[1]);
      bool column_major = f.constant.at(l.w[4]) == khr::kColumnMajor;
      if (use == khr::kMatrixA) {
        EXPECT_EQ(column_major, !a_kfast);
      } else if (use == khr::kMatrixB) {
        EXPECT_EQ(column_major, !a_kfast);  // b_kfast = !a_kfast
      }
    }
    EXPECT_FALSE(f.stores.empty());
  }
  // The NV kernels are unchanged by the option's existence: one literal scope for A and B.
  CoopTile tile{64, 64, 32, 2, 2, 32, false, false, 1};
  EXPECT_EQ(kernels::gemm_coopmat_glsl(tile, false, false).find("B_SCOPE"), std::string::npos);
}

// The int8 loop (shaders/integer_coopmat.glsl) in its KHR form: A 16 x FK and B FK x 16 of 8-bit
// signed components (FK 32: NVIDIA's 16x16x32; 16: AMD RDNA3/RDNA4's 16x16x16, which no device
// here offers, so this compile, validation and rewrite is its coverage), an int32 accumulator,
// every product marked signed in all four operands (without them KHR multiplies the bytes as
// unsigned), K-fast tiles: A row-major, B column-major; per TK slice TK / FK products per fragment.
class CoopMatrixKhrRewriteInt8 : public ::testing::TestWithParam<uint32_t> {};

TEST_P(CoopMatrixKhrRewriteInt8, RewritesWithSignednessAndTheFragmentK) {
  const uint32_t fk = GetParam();
  CoopTile tile{64, 64, 64, 2, 2, 32, true, true, 16};
  tile.fk = fk;
  const std::string glsl = kernels::integer_coopmat_glsl(tile, false, true);
  EXPECT_NE(glsl.find(cat("FK = ", fk, "u")), std::string::npos);
  std::vector<uint32_t> words =
      khr_words_of_loop("uvec4", "int",
                        "uvec4 a_load16(uint m, uint k) { return a[(m * 64u + k) / 16u]; }\n"
                        "uvec4 b_load16(uint n, uint k) { return b[(n * 64u + k) / 16u]; }\n"
                        "void store_c(uint m, uint n, int v) { c[m * 64u + n] = v; }\n",
                        glsl, "int8_loop");
  Facts f = facts_of(words);
  ASSERT_EQ(f.type_use.size(), 3u);
  // Component widths and shapes per role, from the module's OpTypeInt and the KHR types.
  std::map<uint32_t, uint32_t> int_width;
  for (const Inst& in : split(words)) {
    if (in.opcode == 21) int_width[in.w[1]] = in.w[2];
    if (in.opcode == khr::kOpTypeCooperativeMatrixKHR) {
      const uint32_t use = f.type_use.at(in.w[1]);
      EXPECT_EQ(int_width.at(in.w[2]), use == khr::kMatrixAccumulator ? 32u : 8u);
      const uint32_t rows = f.constant.at(in.w[4]), cols = f.constant.at(in.w[5]);
      EXPECT_EQ(rows, use == khr::kMatrixB ? fk : 16u);
      EXPECT_EQ(cols, use == khr::kMatrixA ? fk : 16u);
    }
  }
  // The K loop is unrolled: (64 / FK) K steps x 2 x 2 fragments per subgroup.
  EXPECT_EQ(f.products.size(), size_t(64 / fk * 4));
  for (const Inst& p : f.products) {
    ASSERT_EQ(p.w.size(), 7u);
    EXPECT_EQ(p.w[6], khr::kASigned | khr::kBSigned | khr::kCSigned | khr::kResultSigned);
    EXPECT_EQ(f.type_use.at(f.type_of.at(p.w[3])), khr::kMatrixA);
    EXPECT_EQ(f.type_use.at(f.type_of.at(p.w[4])), khr::kMatrixB);
  }
  for (const Inst& l : f.loads) {
    const uint32_t use = f.type_use.at(l.w[1]);
    const bool column_major = f.constant.at(l.w[4]) == khr::kColumnMajor;
    if (use == khr::kMatrixA) {
      EXPECT_FALSE(column_major);
    }
    if (use == khr::kMatrixB) {
      EXPECT_TRUE(column_major);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(FragmentK, CoopMatrixKhrRewriteInt8, ::testing::Values(32u, 16u),
                         [](const ::testing::TestParamInfo<uint32_t>& i) { return cat("k", i.param); });

TEST(CoopMatrixKhrRewrite, ModuleWithoutCooperativeMatricesIsUnchanged) {
  TargetLimits t = find_target("nvidia").limits;
  std::vector<uint32_t> words = compile_glsl(
      "#version 450\nlayout(local_size_x = 32) in;\nlayout(std430, binding = 0) buffer A { float a[]; };\n"
      "void main() { a[gl_GlobalInvocationID.x] *= 2.0; }\n",
      "plain", t);
  EXPECT_EQ(cooperative_matrix_nv_to_khr(words, "plain"), words);
}

}  // namespace
}  // namespace vkc::codegen
