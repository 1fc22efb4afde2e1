// The one GEMM planner: every kernel that runs a tiled GEMM (matmul, batch_matmul and gemm; conv
// and conv_transpose as an implicit GEMM, after im2col, grouped, split over K; the tensor-core
// loops) asks choose_gemm for its tile.
//
// One candidate table (gemm_tile_table) lists the FMA tiles and the tensor-core tiles, best first,
// each offered only where the target has the vendor and the features it was measured for. One
// occupancy rule decides among those that fit: the first tile, best first, that wastes at most a
// quarter of its work on padding and whose grid fills the device (two workgroups and 256
// invocations per compute unit); when no tile's output grid fills even one wave, K may be split
// over several workgroups per tile (conv's split_k, if the caller allows it). On plain matrices,
// tiles rated by measurement are then weighed by the work of the busiest compute unit (choose_gemm).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "codegen/gemm_tiles.h"
#include "module/target_limits.h"

namespace vkc::codegen {

// A batched GEMM: `batches` independent M x N x K products (conv groups, matmul batch entries).
struct GemmProblem {
  int64_t m = 0, n = 0, k = 0, batches = 1;
  // Which loops may run it. FMA tiles unless `simt` is false; tensor-core tiles when coop_vec is
  // 1 or 8 (float16 values per staged load; 8 needs both operands' fast dim contiguous and a
  // multiple of 8), preferred over FMA tiles where one fits; 16: the int8 loop's tiles only
  // (codegen/kernels/integer_coopmat.h).
  bool simt = true;
  uint32_t coop_vec = 0;
  // float32 operands on the fp16 loop as two float16 pieces each (CoopTile::split; coop_vec 8).
  bool coop_split = false;
  // Tensor-core staging order: K-fast for an operand whose k is contiguous in memory.
  bool a_kfast = false, b_kfast = false;
  // Whether K may be split over several workgroups per tile (the caller then adds the partial
  // sums in a second dispatch).
  bool allow_split = false;
  // Whether A and B are plain strided matrices whose multiply loop the kernel unrolls (matmul),
  // rather than gathered through index math in a rolled loop (conv): some tiles were measured, and
  // only pay, on the former.
  bool matrix_operands = false;
  // A forward conv's input channels per group (0 for other problems): its K slices hold one tap
  // each where TK divides them, so that its loads, like a matrix's, are short and unrolled
  // (conv_slices_hold_one_tap; the tensor-core loop's row hooks), and tiles measured on such convs
  // are offered.
  int64_t tap_channels = 0;
  // A forward conv whose FMA results leave 4 output positions at a time (an image's positions dense,
  // the last spatial dim fastest, a multiple of 4 of them: kernels/conv_gemm.cpp's quads).
  bool quad_positions = false;
};

struct GemmChoice {
  GemmTile tile;
  uint64_t split = 1;  // K slices per tile (1: not split)
};

// One row of the candidate table.
struct GemmTileEntry {
  GemmTile tile;  // a CoopTile's subgroup size and staging order come from the target and problem
  Vendor vendor = Vendor::unknown;  // unknown: every vendor
  bool matrix_operands_only = false;  // offered only to GemmProblem::matrix_operands problems
  bool one_tap_convs = false;         // ... and to convs whose slices of this TK hold one tap
  int64_t one_tap_conv_min_k = 0;     // ... and whose K is at least this
  int64_t one_tap_conv_min_n = 0;     // ... and whose N is at least this
  bool one_tap_convs_only = false;    // not to plain matrices (measured on convs only)
  // ... and, if set, only to those whose results leave in quads (GemmProblem::quad_positions) and
  // whose grid of this tile fills the device unsplit (the occupancy target).
  bool conv_quads_full_grid = false;
  // With conv_quads_full_grid: also to convs whose results do not leave in quads where the largest
  // tile's last round of workgroups would run nearly empty (gemm_planner.cpp kNonQuadMinRoundFill)
  // and this tile's grid fills kNonQuadConvMinTargets occupancy targets.
  bool non_quad_for_short_rounds = false;
  // Offered only to forward convs whose slices of this TK hold one tap, with K >= kDeepConvMinK
  // and a grid of at least kDeepConvMinTilesPerUnit tiles per compute unit (a known count).
  bool deep_conv_grids_only = false;
  // Work per unit time relative to the other rated entries (tile work: TM x TN x slice depth), as
  // measured on the vendor's hardware; 0 where not measured. Rated tiles of plain matrices are
  // compared by the busiest compute unit's work (see choose_gemm).
  double rate = 0;
};

// Every candidate, best first within each loop (exposed for tests and docs).
const std::vector<GemmTileEntry>& gemm_tile_table();

// Why `tile` cannot run on `t` at all ("" when it can): the loop's own constraints, workgroup
// memory, invocations, and for tensor cores the target's cooperative-matrix support.
std::string tile_misfit(const GemmTile& tile, const TargetLimits& t);

// A tensor-core tile's shape (tm, tn, tk, wm, wn, vec, stages) as it runs `p` on `t`: the target's
// subgroup size and fragment, the problem's staging order. Check it with tile_misfit.
CoopTile coop_tile_for(CoopTile shape, const GemmProblem& p, const TargetLimits& t);
// A forced tensor-core tile as a user writes it, "TMxTNxTK/WMxWN[/sSTAGES]" (e.g. 128x128x32/2x4/s2);
// throws naming `what` where it is not of that form.
CoopTile parse_coop_tile(const std::string& text, const std::string& what);
// The same with an optional K split, "TMxTNxTK/WMxWN[/sSTAGES][/kSPLIT]" (matmul's "coopmat=...";
// e.g. 128x128x32/2x2/k3).
GemmChoice parse_coop_choice(const std::string& text, const std::string& what);
// A forced FMA tile and K split as a user writes it, "TMxTNxTK/RMxRN/STAGES[/kSPLIT]" (e.g.
// 64x64x16/4x4/1 or 128x64x16/8x8/2/k4): matmul's "tiled=...", conv's "implicit_gemm=...";
// throws naming `what` where it is not of that form.
GemmChoice parse_simt_tile(const std::string& text, const std::string& what);

// Output tiles of `tile` over the problem (batches x M tiles x N tiles).
uint64_t tiles_of(const GemmTile& tile, const GemmProblem& p);
// K steps of `tile` (ceil(K / TK)).
uint64_t k_steps_of(const GemmTile& tile, const GemmProblem& p);

// The tile (and split) for `p` on `t` by the occupancy rule above; nullopt when no allowed tile
// fits the target. A target of unknown compute units takes the first efficient tile, unsplit.
// Plain matrices whose chosen tile is rated (GemmTileEntry::rate) then weigh every rated tile and
// split that also fills the device by the work of its busiest compute unit (workgroups are handed
// out as units free up, so that unit gets ceil(workgroups / units) of them) and take the least,
// where that is at least 5% less (kBalanceMargin) than the occupancy rule's choice's.
std::optional<GemmChoice> choose_gemm(const GemmProblem& p, const TargetLimits& t);

// Whether a float32 product (GemmProblem::coop_split) takes float16 pieces unforced: on NVIDIA only
// where one of the tiles measured with them applies (large grids; elsewhere the FMA loop was
// faster: Swin-T b8 5.46 -> 6.07 ms with pieces on every product, H200, session 35); on other
// vendors, unmeasured, wherever a tile fits.
bool pieces_planned_unforced(const GemmProblem& p, const TargetLimits& t);

// The most K slices (each at least `min_steps` TK steps) a split of `tile` may have on `t`, with
// the grid holding tiles x slices workgroups and the f32 partial sums within 32-bit indexing and
// maxStorageBufferRange.
uint64_t split_limit(const GemmTile& tile, const GemmProblem& p, const TargetLimits& t, uint64_t min_steps);
// Why `tile` cannot split K into `split` slices on `t` ("" when it can).
std::string split_misfit(const GemmTile& tile, const GemmProblem& p, const TargetLimits& t, uint64_t split);

}  // namespace vkc::codegen
