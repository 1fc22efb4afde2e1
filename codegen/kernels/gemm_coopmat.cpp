#include "codegen/kernels/gemm_coopmat.h"

#include <cstdio>

#include "codegen/shader_library.h"
#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen::kernels {

std::string coopmat_misfit(const TargetLimits& t) {
  if (t.coopmat_loop_shape().empty()) {
    bool offers_loop_shape = false;
    for (const char* s : kCoopMatLoopShapes) offers_loop_shape |= t.offers_cooperative_matrix_shape(s);
    if (t.cooperative_matrix_shapes.empty() || offers_loop_shape)
      return cat("target '", t.name, "' has no cooperative matrices (cooperative_matrix_khr, cooperative_matrix_nv)");
    std::string offered, loop;
    for (const std::string& s : t.cooperative_matrix_shapes) offered += (offered.empty() ? "" : ", ") + s;
    for (const char* s : kCoopMatLoopShapes) loop += (loop.empty() ? "" : ", ") + std::string(s);
    return cat("target '", t.name, "' has none of the cooperative-matrix shapes vkc's loop runs (", loop, "; it offers ",
               offered, ")");
  }
  if (!t.shader_float16) return cat("target '", t.name, "' has no float16 arithmetic (shaderFloat16)");
  if (coopmat_subgroup_size(t) == 0)
    return cat("target '", t.name, "' has neither one fixed subgroup size nor a way to pin one (subgroupSizeControl)");
  return "";
}

uint32_t coopmat_subgroup_size(const TargetLimits& t) {
  if (t.min_subgroup_size == 0 || t.max_subgroup_size < t.min_subgroup_size) return 0;
  if (t.min_subgroup_size == t.max_subgroup_size) return t.min_subgroup_size;
  return t.subgroup_size_control ? t.min_subgroup_size : 0;
}

bool coopmat_uses_khr(const TargetLimits& t) { return t.cooperative_matrix_khr; }

std::array<uint32_t, 3> coopmat_fragment(const TargetLimits& t) {
  const std::string shape = t.coopmat_loop_shape();
  unsigned m = 16, n = 16, k = 16;
  if (!shape.empty()) check(std::sscanf(shape.c_str(), "%ux%ux%u", &m, &n, &k) == 3, "internal: shape '", shape, "'");
  return {m, n, k};
}

std::string coopmat_int8_shape(const TargetLimits& t) {
  for (const char* shape : kCoopMatInt8Shapes)
    if (t.offers_cooperative_matrix_shape(shape)) return shape;
  return "";
}

std::array<uint32_t, 3> coopmat_int8_fragment(const TargetLimits& t) {
  const std::string shape = coopmat_int8_shape(t);
  unsigned m = 16, n = 16, k = 32;
  if (!shape.empty()) check(std::sscanf(shape.c_str(), "%ux%ux%u", &m, &n, &k) == 3, "internal: shape '", shape, "'");
  return {m, n, k};
}

std::string coopmat_int8_misfit(const TargetLimits& t) {
  if (!t.cooperative_matrix_khr && !t.cooperative_matrix_nv)
    return cat("target '", t.name, "' has no cooperative matrices (cooperative_matrix_khr, cooperative_matrix_nv)");
  if (coopmat_int8_shape(t).empty())
    return cat("target '", t.name, "' lists neither the ", kCoopMatInt8Shapes[0], " nor the ", kCoopMatInt8Shapes[1],
               " cooperative-matrix shape");
  if (!t.shader_int8 || !t.storage_buffer_8bit)
    return cat("target '", t.name, "' has no 8-bit arithmetic and storage (shaderInt8, storageBuffer8BitAccess)");
  if (coopmat_subgroup_size(t) == 0)
    return cat("target '", t.name, "' has neither one fixed subgroup size nor a way to pin one (subgroupSizeControl)");
  return "";
}

// The loop's own requirements on a tile (see shaders/gemm_coopmat.glsl).
bool coop_loop_supports(const CoopTile& c) {
  uint32_t threads = c.invocations();
  if (threads == 0 || c.fm % 8 != 0 || c.fn % 8 != 0 || c.fk % 8 != 0) return false;  // 16-byte fragment rows
  if (c.tm % (c.wm * c.fm) != 0 || c.tn % (c.wn * c.fn) != 0 || c.tk % c.fk != 0) return false;
  if (c.stages != 1 && (c.int8() || c.stages != 2)) return false;  // two copies: the fp16 loop only
  if (c.split && (c.int8() || c.vec != 8 || c.stages != 1)) return false;  // pieces: 16-byte staging, one copy
  if (c.int8()) {  // shaders/integer_coopmat.glsl: 16 x FK by FK x 16 fragments (FK 32 or 16), 16-byte runs
    return c.fm == 16 && c.fn == 16 && (c.fk == 32 || c.fk == 16) && (c.tm * c.tk) % (threads * 16) == 0 &&
           (c.tn * c.tk) % (threads * 16) == 0;
  }
  if (c.vec != 1 && c.vec != 8) return false;
  if ((c.tm * c.tk) % (threads * c.vec) != 0 || (c.tn * c.tk) % (threads * c.vec) != 0) return false;
  if (c.vec == 8) return true;  // tm, tn and tk are multiples of 8, so each run of 8 lies in a row
  if (!c.a_kfast && threads % c.tm != 0) return false;  // row-fast staging keeps a row per invocation
  if (!c.b_kfast && threads % c.tn != 0) return false;
  return true;
}

namespace {

// store_fragment(m, n, scratch, lane): hands one accumulator fragment, stored from scratch_at(scratch)
// on (the loop's own accessor: float or int), to store_c, at tile row m and column n, walking M or
// N fastest (store_m_fast) to follow the output's contiguous dim.
std::string store_fragment_fn(const CoopTile& c, bool store_m_fast, bool quads) {
  const uint32_t frag = c.fm * c.fn, run = store_m_fast ? c.fm : c.fn;
  std::string body;
  if (quads) {
    // Four consecutive columns of one row per lane, through store_c4 (one epilogue call, side
    // operands read and the result written 8 or 16 bytes at a time): the element-wise form below
    // read an fp16 residual 2 bytes per lane, and ResNet-50's fp16 1x1 expansions that add it took
    // 0.30 ms at batch 32 where the same GEMM without it took 0.11 (H200, session 31).
    check(coop_quads_supported(c) && !store_m_fast, "internal: quad stores for tile ", c.str());
    const uint32_t per_row = c.fn / 4;
    for (uint32_t p = 0; p < frag / 4 / c.subgroup; ++p) {
      const std::string r = cat("(lane / ", per_row, "u + ", p * (c.subgroup / per_row), "u)");
      const std::string col = cat("(lane % ", per_row, "u) * 4u");
      const std::string at = cat("scratch + ", r, " * ", c.fn, "u + ", col);
      body += cat("  store_c4(m + ", r, ", n + ", col, ", vec4(scratch_at(", at, "), scratch_at(", at, " + 1u), scratch_at(",
                  at, " + 2u), scratch_at(", at, " + 3u)));\n");
    }
  } else if (c.subgroup != 0 && c.subgroup % run == 0 && frag % c.subgroup == 0) {
    // A subgroup covers whole columns (M fast) or rows of the fragment: each lane keeps one row
    // (column) for all its elements, unrolled, so the compiler decodes what store_c computes of it
    // (the output position, its offset) once per lane, not per element. H200, session 20, against
    // a rolled loop over the lane's elements: the 4096^3 fp16 matmul 0.500 -> 0.466 ms, the seed
    // conv 0.675 -> 0.605, ggml's 1x32x1536x1536 conv 1.090 -> 0.992.
    const std::string kept = cat("lane % ", run, "u"), other = cat("lane / ", run, "u + ");
    for (uint32_t i = 0; i < frag / c.subgroup; ++i) {
      const std::string o = cat(other, i * (c.subgroup / run), "u");
      const std::string r = store_m_fast ? kept : o, col = store_m_fast ? o : kept;
      body += cat("  store_c(m + ", r, ", n + ", col, ", scratch_at(scratch + (", r, ") * ", c.fn, "u + ", col, "));\n");
    }
  } else {
    body = cat("  for (uint e = lane; e < ", frag, "u; e += ", c.subgroup, "u) {\n",
               "    uint r = ", store_m_fast ? cat("e % ", c.fm, "u") : cat("e / ", c.fn, "u"),
               ", c = ", store_m_fast ? cat("e / ", c.fm, "u") : cat("e % ", c.fn, "u"), ";\n",
               "    store_c(m + r, n + c, scratch_at(scratch + r * ", c.fn, "u + c));\n  }\n");
  }
  return cat("void store_fragment(uint m, uint n, uint scratch, uint lane) {\n",
             "  subgroupMemoryBarrierShared();\n  subgroupBarrier();\n", body,
             "  subgroupMemoryBarrierShared();\n  subgroupBarrier();\n}\n");
}

}  // namespace

bool coop_quads_supported(const CoopTile& c) {
  return c.fn % 4 == 0 && c.subgroup != 0 && c.subgroup % (c.fn / 4) == 0 && (c.fm * c.fn / 4) % c.subgroup == 0;
}

std::vector<std::pair<std::string, std::string>> coopmat_loop_values(const CoopTile& c, bool store_m_fast, bool for_khr,
                                                                     bool quads) {
  // Constant accumulator indices only (shaders/gemm_coopmat.glsl says why).
  std::string fragments;
  for (uint32_t i = 0; i < c.tm / c.wm / c.fm; ++i)
    for (uint32_t j = 0; j < c.tn / c.wn / c.fn; ++j)
      fragments += cat("  STORE_SCRATCH(acc[", i, "][", j, "]);\n",
                       "  store_fragment(m0 + row0 + ", i * c.fm, "u, n0 + col0 + ", j * c.fn, "u, scratch, lane);\n");
  // For the KHR rewrite B needs a type of its own: its scope through a specialization constant
  // (codegen/spirv_coopmat_khr.h). The NV kernels keep the plain literal.
  std::string b_scope_declaration = for_khr ? "layout(constant_id = 0) const uint B_SCOPE = 3u;" : "";
  return {{"STORE_FRAGMENTS", fragments},
          {"STORE_FRAGMENT_FN", store_fragment_fn(c, store_m_fast, quads)},
          {"B_SCOPE_DECLARATION", b_scope_declaration},
          {"B_SCOPE", for_khr ? "B_SCOPE" : "3"},
          {"TM", std::to_string(c.tm)},
          {"TN", std::to_string(c.tn)},
          {"TK", std::to_string(c.tk)},
          {"WM", std::to_string(c.wm)},
          {"WN", std::to_string(c.wn)},
          {"SG", std::to_string(c.subgroup)},
          {"A_KFAST", c.a_kfast ? "1" : "0"},
          {"B_KFAST", c.b_kfast ? "1" : "0"},
          {"STORE_M_FAST", store_m_fast ? "1" : "0"}};
}

// The fragment products of each FRAG_K-deep step run one step late (shaders/gemm_coopmat.glsl, LAG)
// on tiles of at least 128 x 128 (one or two workgroups per SM, so no other workgroup's work fills
// the gap a barrier leaves), float16 operands only. H200, session 38 (bench/RESULTS.md), planned
// tiles: the 4096^3 matmul 0.478 -> 0.441 ms (128 x 128 x 64, 2 x 2), ggml's 16x256x19x19 conv
// 0.659 -> 0.624, ResNet's 8x256x56x56 3x3 0.192 -> 0.185, the seed conv 0.482 -> 0.475. Smaller
// tiles lost 1-3% (ViT's fp16 MLP product on 64 x 64 x 64, 0.232 -> 0.240; forced 128 x 64 and
// 64 x 128 two-stage tiles), where the registers it takes cost workgroups per SM. Measured on
// NVIDIA only, so only there (elsewhere tiles are planned for at most 64 accumulators per
// invocation, and the fragments it keeps would come on top).
bool coop_lagged(const CoopTile& c, const TargetLimits& t) {
  return t.vendor == Vendor::nvidia && !c.split && c.tm * c.tn >= 128 * 128;
}

uint32_t coop_register_sets(const CoopTile& c, const TargetLimits& t) {
  return t.vendor == Vendor::nvidia && c.stages == 1 && c.vec == 8 && !c.split && c.invocations() >= 256 ? 2 : 1;
}

std::string gemm_coopmat_glsl(const CoopTile& c, bool store_m_fast, bool for_khr, bool a_rows, bool quads,
                              uint32_t register_sets, bool lagged) {
  check(coop_loop_supports(c), "internal: the fp16 GEMM loop does not support tile ", c.str());
  check(register_sets == 1 || (register_sets == 2 && c.stages == 1), "internal: ", register_sets,
        " register sets for tile ", c.str());
  check(!lagged || !c.split, "internal: the float16 pieces' loop is not lagged, tile ", c.str());
  check(!a_rows || (c.vec == 8 && c.a_kfast && !c.split), "internal: row hooks need 16-byte K-fast float16 staging of A");
  std::vector<std::pair<std::string, std::string>> values = coopmat_loop_values(c, store_m_fast, for_khr, quads);
  values.insert(values.end(), {{"VEC", std::to_string(c.vec)},
                               {"STAGES", std::to_string(c.stages)},
                               {"PREFETCH", std::to_string(register_sets)},
                               {"A_ROWS", a_rows ? "1" : "0"},
                               {"SPLIT", c.split ? "1" : "0"},
                               {"LAG", lagged ? "1" : "0"},
                               {"C_IN_A", c.c_scratch_in_a_tiles() ? "1" : "0"},
                               {"FRAG_M", std::to_string(c.fm)},
                               {"FRAG_N", std::to_string(c.fn)},
                               {"FRAG_K", std::to_string(c.fk)}});
  return instantiate_shader("gemm_coopmat.glsl", values);
}

}  // namespace vkc::codegen::kernels
