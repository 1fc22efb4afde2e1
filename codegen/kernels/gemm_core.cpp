#include "codegen/kernels/gemm_core.h"

#include "codegen/shader_library.h"
#include "support/error.h"

namespace vkc::codegen::kernels {
namespace {

std::string unsupported(const GemmCoreShape& shape) {
  const SimtTile& s = shape.tile;
  auto tile = [&] { return cat(s.tm, "x", s.tn, "x", s.tk, " (", s.rm, "x", s.rn, ")"); };
  if (s.rm == 0 || s.rn == 0 || s.tm % s.rm != 0 || s.tn % s.rn != 0)
    return cat("register block does not divide the tile ", tile());
  if (s.tm % 4 != 0 || s.tn % 4 != 0) return cat("tile ", tile(), " is not a multiple of 4 in M and N");
  if ((s.rm % 4 != 0 && s.rm > 2) || (s.rn % 4 != 0 && s.rn > 2))
    return cat("register block of tile ", tile(), " is neither a multiple of 4 nor at most 2");
  if (s.stages != 1 && s.stages != 2) return cat(s.stages, " stages for tile ", tile(), " (the loop has 1 or 2)");
  if (shape.kk_unroll != 0 && s.tk % shape.kk_unroll != 0)
    return cat("unroll ", shape.kk_unroll, " does not divide TK of tile ", tile());
  if (shape.store_m_fast && !shape.store_m_fast_fits())
    return cat("results of tile ", tile(), " do not fit workgroup memory column by column");
  if (shape.store_quads == GemmCoreShape::Quads::rows && (s.rm % 4 != 0 || shape.store_m_fast))
    return cat("results of tile ", tile(), " do not leave in quads of rows");
  if (shape.store_quads == GemmCoreShape::Quads::columns && (s.rn % 4 != 0 || shape.store_m_fast))
    return cat("results of tile ", tile(), " do not leave in quads of columns");
  if (shape.a_4x4 && (!shape.a_kfast || !shape.stages_in_4x4_blocks()))
    return cat("A of tile ", tile(), " does not stage evenly in 4x4 blocks");
  if (!shape.stages_evenly(s.tm, shape.a_kfast))
    return cat("A does not stage evenly over ", shape.threads(), " invocations, tile ", tile());
  if (shape.a_finish && (shape.a_kfast || shape.a_4x4))
    return cat("A of tile ", tile(), " is finished at its store but staged K-fast");
  if (shape.b_vec && shape.b_kfast) return cat("B of tile ", tile(), " is vectorized N-fast and staged K-fast");
  if (!shape.stages_evenly(s.tn, shape.b_kfast, shape.b_vec))
    return cat("B does not stage evenly over ", shape.threads(), " invocations, tile ", tile());
  return "";
}

}  // namespace

bool GemmCoreShape::stages_evenly(uint32_t outer, bool kfast, bool vec) const {
  uint32_t n = threads();
  if (n == 0) return false;
  if (kfast) return tile.tk % 4 == 0 && (outer * tile.tk / 4) % n == 0;
  if (vec) return outer % 4 == 0 && (outer / 4 * tile.tk) % n == 0;
  return n % outer == 0 && (outer * tile.tk) % n == 0;
}

bool GemmCoreShape::stages_in_4x4_blocks() const {
  const uint32_t n = threads();
  return n != 0 && tile.tm % 4 == 0 && tile.tk % 4 == 0 && (tile.tm / 4 * (tile.tk / 4)) % n == 0;
}

bool GemmCoreShape::store_m_fast_fits() const {
  const uint32_t tx = tile.tn / tile.rn, n = threads();
  // The scratch of one pass, tx columns of tm words (rows swizzled within 32), inside the A tiles
  // (stages x tk x tm words); every invocation reads the same number of its tx x tm values.
  return n != 0 && tile.tm % 32 == 0 && uint64_t(tx) <= uint64_t(tile.stages) * tile.tk &&
         (uint64_t(tx) * tile.tm) % n == 0;
}

bool gemm_core_supports(const GemmCoreShape& s) { return unsupported(s).empty(); }

std::string gemm_core_glsl(const GemmCoreShape& shape) {
  std::string why = unsupported(shape);
  const SimtTile& s = shape.tile;
  check(why.empty(), "internal: the GEMM loop does not support this tile: ", why);
  return instantiate_shader("gemm_core.glsl", {{"TM", std::to_string(s.tm)},
                                               {"TN", std::to_string(s.tn)},
                                               {"TK", std::to_string(s.tk)},
                                               {"RM", std::to_string(s.rm)},
                                               {"RN", std::to_string(s.rn)},
                                               {"THREADS", std::to_string(s.invocations())},
                                               {"STAGES", std::to_string(s.stages)},
                                               {"A_KFAST", shape.a_kfast ? "1" : "0"},
                                               {"B_KFAST", shape.b_kfast ? "1" : "0"},
                                               {"B_VEC", shape.b_vec ? "1" : "0"},
                                               {"A_4X4", shape.a_4x4 ? "1" : "0"},
                                               {"STORE_M_FAST", shape.store_m_fast ? "1" : "0"},
                                               {"STORE_QUADS", std::to_string(int(shape.store_quads))},
                                               {"SLICE_BEGIN", shape.slice_hook ? "k_slice(k0);" : ""},
                                               {"A_FINISH", shape.a_finish ? "1" : "0"},
                                               {"KK_UNROLL", std::to_string(shape.kk_unroll ? shape.kk_unroll : s.tk)},
                                               {"LAG", shape.kk_unroll == 0 || shape.kk_unroll == s.tk ? "1" : "0"}});
}

}  // namespace vkc::codegen::kernels
