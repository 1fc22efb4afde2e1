#include "codegen/kernels/gemm_coopmat.h"

#include <algorithm>
#include <vector>

#include "codegen/shader_library.h"
#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen::kernels {
namespace {

// Tile shapes, best first, by measurement on the H200 (bench/RESULTS.md):
// - 16-byte staging (Run N): 128 x 128 with 2 x 4 subgroups and K slices of 64 ran 4 of the 5 fp16
//   cases fastest or within 7% of it (0.23-0.87 ms against 0.30-1.27 ms for 64 x 64 x 32); 64 x 64
//   won where N is 64 (1.17 ms against 2.29 ms: half of each 128-wide tile was padding).
// - One-element staging (Run I): 64 x 64 with 2 x 2 subgroups (112 registers, four workgroups per
//   SM) ran 4 of the 5 cases faster than 128 x 128 (176 registers, one per SM) or 128 x 64.
// Smaller tiles follow for small problems and small budgets.
struct Shape {
  uint32_t tm, tn, wm, wn;
};
const Shape kVec8Shapes[] = {{128, 128, 2, 4}, {64, 64, 2, 2}, {128, 64, 2, 2}, {64, 128, 2, 2},
                             {64, 32, 2, 1},   {32, 64, 1, 2}, {32, 32, 1, 1}};
const Shape kScalarShapes[] = {{64, 64, 2, 2}, {128, 128, 2, 4}, {128, 64, 2, 2}, {64, 128, 2, 2},
                               {64, 32, 2, 1}, {32, 64, 1, 2},   {32, 32, 1, 1}};
// K slices: 64 where the budget allows with 16-byte staging (Run N: 0.81 against 0.99 ms for the
// 4096^3 matmul at 128 x 128), else 32; one-element staging keeps 32 (Run I: 64 was slower at 64 x 64).
const uint32_t kVec8TileK[] = {64, 32};
const uint32_t kScalarTileK[] = {32};

// The loop's own requirements on a tile (see shaders/gemm_coopmat.glsl).
bool loop_supports(const CoopTile& c) {
  uint32_t threads = c.invocations();
  if (threads == 0 || c.tm % (c.wm * 16) != 0 || c.tn % (c.wn * 16) != 0 || c.tk % 16 != 0) return false;
  if (c.vec != 1 && c.vec != 8) return false;
  if ((c.tm * c.tk) % (threads * c.vec) != 0 || (c.tn * c.tk) % (threads * c.vec) != 0) return false;
  if (c.vec == 8) return true;  // tm, tn and tk are multiples of 16, so each run of 8 lies in a row
  if (!c.a_kfast && threads % c.tm != 0) return false;  // row-fast staging keeps a row per invocation
  if (!c.b_kfast && threads % c.tn != 0) return false;
  return true;
}

}  // namespace

uint32_t CoopTile::workgroup_memory_bytes() const {
  uint32_t a = a_kfast ? tm * (tk + 8) : tk * (tm + 8);
  uint32_t b = b_kfast ? tn * (tk + 8) : tk * (tn + 8);
  return 2 * (a + b) + 4 * 256 * wm * wn;
}

std::string CoopTile::str() const {
  return cat(tm, "x", tn, "x", tk, " fp16 tensor cores, ", wm, "x", wn, " subgroups, ",
             vec == 8 ? "16-byte" : "2-byte", " staging loads");
}

std::string coopmat_misfit(const TargetLimits& t) {
  if (!t.cooperative_matrix_nv) return cat("target '", t.name, "' has no cooperative matrices (cooperative_matrix_nv)");
  if (!t.shader_float16) return cat("target '", t.name, "' has no float16 arithmetic (shaderFloat16)");
  if (t.min_subgroup_size == 0 || t.min_subgroup_size != t.max_subgroup_size)
    return cat("target '", t.name, "' has no single fixed subgroup size");
  return "";
}

std::optional<CoopTile> plan_coop_tile(int64_t m, int64_t n, const TargetLimits& t, int64_t batches,
                                       bool a_kfast, bool b_kfast, uint32_t vec) {
  if (!coopmat_misfit(t).empty()) return std::nullopt;
  std::vector<Shape> shapes = vec == 8 ? std::vector<Shape>(std::begin(kVec8Shapes), std::end(kVec8Shapes))
                                       : std::vector<Shape>(std::begin(kScalarShapes), std::end(kScalarShapes));
  std::vector<uint32_t> slices = vec == 8 ? std::vector<uint32_t>(std::begin(kVec8TileK), std::end(kVec8TileK))
                                          : std::vector<uint32_t>(std::begin(kScalarTileK), std::end(kScalarTileK));
  std::optional<CoopTile> best;
  uint64_t best_groups = 0;
  for (const Shape& s : shapes)
    for (uint32_t tk : slices) {
      CoopTile c{s.tm, s.tn, tk, s.wm, s.wn, t.min_subgroup_size, a_kfast, b_kfast, vec};
      uint32_t threads = c.invocations();
      if (!loop_supports(c) || threads > t.max_compute_work_group_invocations ||
          threads > t.max_compute_work_group_size[0] || c.workgroup_memory_bytes() > t.max_compute_shared_memory_size)
        continue;
      uint64_t tiles_m = ceil_div(uint64_t(m), c.tm), tiles_n = ceil_div(uint64_t(n), c.tn);
      uint64_t groups = uint64_t(std::max<int64_t>(1, batches)) * tiles_m * tiles_n;
      // Taken when it fills the device and pads M and N by at most half again.
      bool snug = 2 * tiles_m * c.tm <= 3 * uint64_t(m) && 2 * tiles_n * c.tn <= 3 * uint64_t(n);
      if (snug && (t.compute_units == 0 || groups >= t.compute_units)) return c;
      if (!best || groups > best_groups) {
        best = c;
        best_groups = groups;
      }
      break;  // the largest K slice that fits stands for this shape
    }
  return best;
}

std::string gemm_coopmat_glsl(const CoopTile& c, bool store_m_fast) {
  check(loop_supports(c), "internal: the fp16 GEMM loop does not support tile ", c.str());
  // Constant accumulator indices only (shaders/gemm_coopmat.glsl says why).
  std::string fragments;
  for (uint32_t i = 0; i < c.tm / c.wm / 16; ++i)
    for (uint32_t j = 0; j < c.tn / c.wn / 16; ++j)
      fragments += cat("  coopMatStoreNV(acc[", i, "][", j, "], c_tile, scratch, 16u, false);\n",
                       "  store_fragment(m0 + row0 + ", i * 16, "u, n0 + col0 + ", j * 16, "u, scratch, lane);\n");
  return instantiate_shader("gemm_coopmat.glsl", {{"STORE_FRAGMENTS", fragments},
                                                  {"TM", std::to_string(c.tm)},
                                                  {"TN", std::to_string(c.tn)},
                                                  {"TK", std::to_string(c.tk)},
                                                  {"WM", std::to_string(c.wm)},
                                                  {"WN", std::to_string(c.wn)},
                                                  {"SG", std::to_string(c.subgroup)},
                                                  {"VEC", std::to_string(c.vec)},
                                                  {"A_KFAST", c.a_kfast ? "1" : "0"},
                                                  {"B_KFAST", c.b_kfast ? "1" : "0"},
                                                  {"STORE_M_FAST", store_m_fast ? "1" : "0"}});
}

}  // namespace vkc::codegen::kernels
