#include "codegen/gemm_planner.h"

#include <algorithm>
#include <sstream>

#include "codegen/kernels/gemm_coopmat.h"
#include "codegen/kernels/gemm_core.h"
#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen {
namespace {

constexpr uint64_t kMaxIndex = UINT32_MAX;  // kernels index with 32-bit unsigned integers
// Occupancy target: two workgroups per compute unit, so that one workgroup's barrier and load
// stalls overlap another's math and a last partial wave costs at most half the run; and at least
// kInvocationsPerUnit invocations per unit, because small workgroups fill nothing: 392 workgroups
// of 32 invocations (ResNet-18 layer1 at batch 1) left 3 warps per SM on the H200 and ran at
// 2.7 TFLOP/s.
constexpr uint64_t kWorkgroupsPerUnit = 2;
constexpr uint64_t kInvocationsPerUnit = 256;
// A tile may waste at most a quarter of its products on padding (of M, N and K together).
constexpr double kMinEfficiency = 0.75;
// Split K only when the reduction is deep enough that the S x output partial sums (written once
// and read once more) stay small next to the operand traffic and products of the GEMM itself.
constexpr int64_t kSplitMinK = 512;
// Each slice of a planner-chosen split keeps at least this many TK steps of products.
constexpr uint64_t kMinSliceSteps = 4;
// Matmul (plain matrices) splits K until the grid holds this many 128-invocation workgroups per
// compute unit, in at most kMaxMatrixSplit slices; tiles of at most kMaxSplitTileArea with slices
// of kMinSliceSteps, larger ones with slices of kLargeTileMinSliceSteps (below).
// Measured on the H200 on transformer shapes (bench/RESULTS.md, session 15): 64x64 tiles (8x4
// blocks) in 8 slices ran 197x768x3072 in 0.056 ms against 0.205 unsplit on 16x16 tiles, and
// 128x2304x768 in 0.031 ms where 128x64 tiles in 8 slices took 0.098 (128x64 split was 1.8-3.9x
// slower than 64x64 split on every 128-row shape, 10% faster on the 1576-row ones); splits beyond
// 8 were not measured.
constexpr uint64_t kMatrixSplitWorkgroupsPerUnit = 4;
constexpr uint64_t kMaxMatrixSplit = 8;
constexpr uint64_t kMaxSplitTileArea = 64 * 64;
// Larger tiles (128x64) split too, but only into slices of at least kLargeTileMinSliceSteps TK
// steps (768-deep at TK 16): on the H200 (bench/RESULTS.md, session 17) 128x64 8x8 tiles in 4
// slices ran 1576x768x3072 in 0.267 ms and 1024x768x3072 in 0.168, against 0.306 and 0.209 for
// the 64x64 splits; with shallower slices (K 768, or 6 slices of 3072) they lost to 64x64, and on
// 128-row shapes their few workgroups lost 1.8-3.9x (session 15). The largest tiles never split.
constexpr uint64_t kLargeTileMinSliceSteps = 48;
// The largest tiles (256x128: one workgroup per SM, whether 256 invocations of 222 registers or
// 512 of 8x8 blocks) pay only with several waves of their own: unsplit they lost to 128x64 at 312
// tiles on 132 SMs (2.4 waves; 0.298 against 0.262 ms, 1576x3072x768) and won at 512 (3.9 waves,
// the 4096^3 matmul); split they lost everywhere (same runs). On convs (H200, bench/RESULTS.md
// session 33) they won at 392 tiles (3.0 waves: ResNet-50's batch-128 layer-2 3x3, 0.893 ms
// against 1.008 on the tile it had) and lost at 196 (1.5 waves, layer 3: 1.181 against 1.016);
// hence a bound between 2.4 and 3.0.
constexpr uint64_t kLargestTileM = 256, kLargestTileN = 128, kLargestTileArea = kLargestTileM * kLargestTileN;
constexpr double kLargestTileMinWaves = 2.75;
// On convs (one tap per slice) the largest tile has been measured to pay only with a deep K:
// the seed conv (K 576, 2048 tiles) ran 2.49 ms on 256x128x8 against 2.70 on 128x128x16, while
// ResNet's 8x256x56x56 3x3 (196 tiles, under 3 waves) lost 9% (H200, bench/RESULTS.md, session 23).
// Shallower convs (1x1 expansions, K 64-256: a handful of slices per tile to fill the two-stage
// pipeline and a 256x128 epilogue to pay) keep their tiles until measured.
constexpr int64_t kLargestTileMinConvK = 512;
// Convs whose results do not leave in quads (an image's positions not a multiple of 4, as in
// ResNet's 7x7 layer 4, or 64 KiB planes) store through workgroup memory. With K under
// kNonQuadLargestTileMinK they give up the largest tile (one workgroup per SM) where its last
// round of workgroups would be under kNonQuadMinRoundFill full, for 128x64 with 8x8 blocks (128
// invocations, two stages) where that one's grid holds kNonQuadConvMinTargets occupancy targets
// (about four workgroups per SM over three waves): ResNet-50's batch-128 layer-4 1x1 expansions
// (K 512, the residual added in the epilogue; 400 tiles of 256x128, four rounds on 132 SMs of
// which the last holds 4 tiles, against 1568 of 128x64) 0.667 -> 0.514 ms each, the model 33.38
// -> 32.94 ms (H200, bench/RESULTS.md session 42). Where the largest tile's rounds are full it
// stays (the seed conv, K 576, 16 rounds 97% full: 2.32 ms against 2.55 on 128x64, session 32), as
// it does with a deep K (the batch-128 layer-4 downsample, K 1024, the same 400 tiles: 0.675 ms,
// 39 TFLOP/s; not measured on 128x64). With fewer tiles 128x64 lost: the expansions at batch 32
// (416 tiles) cost the model 1.2% (session 42) and 12-15% each (session 32).
constexpr int64_t kNonQuadLargestTileMinK = 1024;
constexpr double kNonQuadMinRoundFill = 0.9;
constexpr uint64_t kNonQuadConvMinTargets = 2;
// Tensor-core tiles of 128 x 128 (one or two workgroups per SM at 159-247 registers) on plain
// matrices pay only with kLargestTileMinWaves waves too: ViT-B/16 b8's first MLP product in the fp16
// mode (1576x3072x768, 312 such tiles on 132 SMs) took 0.115 ms on 128 x 128 with 2 x 2 subgroups,
// 0.089 with 2 x 4 and 0.066 on 64 x 64 (in the model, H200, bench/RESULTS.md session 28), where the
// 4096^3 product (1024 tiles) is fastest on 128 x 128 2 x 2 (session 20). Measured on NVIDIA only,
// so only there; convs keep them (not measured at these grid sizes; their larger grids are
// unaffected).
constexpr uint64_t kLargeCoopTileArea = 128 * 128;
// Deep one-tap convs (K >= kDeepFmaConvMinK) whose results leave in quads have two more FMA tiles
// on NVIDIA, measured on ResNet-50's shapes forced on the H200 (bench/RESULTS.md session 33):
// - 256x64x16 (8x8 blocks, 256 invocations, two stages), where its grid fills the device: at
//   batch 128 the layer-3 3x3 (K 2304) 0.924 ms against 1.016 on 128x64 8x8 (the tile it had),
//   the layer-3 1x1 reduction (K 1024) 0.375 against 0.389 and the layer-2 3x3 (K 1152) 0.933
//   against 1.008. With a short K it lost: 1x1 K 64 / 128 at batch 128 0.522 / 0.444 against
//   0.477 / 0.429, the seed conv (K 576) 2.490 against 2.320; layer 1's 3x3 (K 576) was even.
//   In r3d_18 at batch 32 its layer-1 3x3x3 convs (K 1728, N 64) lost 2-10% (9.53 -> 9.73 ms,
//   and 9.58 -> 10.59 where the epilogue adds the residual), so it needs N >= kDeepFmaConvMinN: it
//   was measured winning at N 128 and 256 only.
// - 128x32x16 (8x4 blocks, 128 invocations, two stages), for grids that 128x64 does not fill:
//   layer 3's 3x3 at batch 32 (392 tiles of it against 196) 0.299 ms against 0.405 for 128x128
//   split in 3 slices (the plan it had) and 0.309 for 256x64 unsplit (100 tiles).
// In the models (same card, old and new binary alternating) less was left: ResNet-50 b32 10.34 ->
// 10.07 ms, b128 34.56 -> 34.36 (its layer-3 3x3 0.84 -> 0.81 ms each), DenseNet-121 b32 -1.6%,
// ResNeXt-50, Inception-v3 b32 and FCN-ResNet50 b1 within noise.
constexpr int64_t kDeepFmaConvMinK = 1024;
constexpr int64_t kDeepFmaConvMinN = 128;
// Convs with a short K (at most kShortConvMaxK) skip the 128x128 FMA tile on NVIDIA: their few K
// steps leave the epilogue's stores, eight passes of them per 128x128 tile, to set the time.
// ResNet-50 in the model (H200, bench/RESULTS.md session 29): the 1x1 expansions whose epilogue
// adds the residual took 0.49 / 0.30 / 0.20 / 0.70 ms at K 64 / 128 / 256 / 512 on 128x128 against
// 0.30 / 0.20 / 0.15 / 0.48 on 128x64 (batch 32 for the first three, 128 for the last), the K 64
// downsample without it 0.68 against 0.60 (batch 128), the whole model at batch 32 / 128 13.35 /
// 44.96 ms against 12.21 / 39.52 with every conv on 128x64. The one K 512 conv that lost (ResNet's
// layer3.0 1x1 reduction at batch 128, 0.775 against 0.845) lost 9%; the 3x3 convs (K 576 and more)
// keep 128x128, which won their deeper loops by up to 10%.
// Since results leave in 16-byte stores (session 30, gemm_core.glsl's STORE_QUADS) the epilogue costs
// less, and the bound was measured again over the whole models (H200, two rounds each, resident ms,
// bound 0 / 128 / 256 / 512): ResNet-50 b32 10.87 / 10.83 / 10.79 / 10.84, b128 36.10 / 36.13 /
// 36.22 / 36.38, ResNeXt-50 b32 11.98 / 11.88 / 11.93 / 12.19, FCN-ResNet50 b1 5.48 / 5.49 / 5.41 /
// 5.45. 256 is never behind 512 and is best or within 0.3% of the best on three of the four.
constexpr int64_t kShortConvMaxK = 256;
constexpr uint64_t kShortConvSkippedArea = 128 * 128;
// Tensor-core convs with 16-byte staging on NVIDIA: 128 x 128 x 32 on 2 x 2 subgroups (64 x 64
// each) with two copies (243 registers x 128 invocations, two workgroups per SM) against the
// 2 x 4 tile the others take (64 x 32 each, 159-190 registers x 256, one per SM), forced on the H200
// (vkc_bench --force, bench/RESULTS.md session 32): the seed conv 1x64x512x512 * 256x64x3x3 (K 576,
// 4096 tiles) 0.484 ms against 0.524; 1x256x512x512 * 256x256x3x3 (K 2304, 4096 tiles) 1.618
// against 1.837; ggml's 16x256x19x19 * 4096x256x4x4 (K 4096, 1600 tiles) 0.631 against 0.665. With
// fewer tiles it lost: ResNet's 8x256x56x56 3x3 (K 2304, 392 tiles, 1.5 rounds of two per SM) 0.214
// against 0.194, an 8x64x56x56 1x1 to 256 (K 64, 392) 0.078 against 0.035. So only where K and the
// grid are both large; 64-deep slices spilled (255 registers) and lost on the seed conv (0.678).
constexpr int64_t kDeepConvMinK = 512;
constexpr uint64_t kDeepConvMinTilesPerUnit = 8;
// Balance (choose_gemm): a rated tile or split replaces the occupancy rule's only where the work of
// the busiest compute unit drops by at least this much. The model leaves out what it cannot see:
// the partial sums of more slices (L2-resident at the sizes that split; their cost did not show in
// the measurements below) and the occupancy of smaller workgroups.
constexpr double kBalanceMargin = 0.05;

std::vector<GemmTileEntry> make_table() {
  std::vector<GemmTileEntry> t;
  auto simt = [&](uint32_t tm, uint32_t tn, uint32_t tk, uint32_t rm, uint32_t rn, uint32_t stages = 1,
                  Vendor v = Vendor::unknown, bool matrices = false) {
    t.push_back({SimtTile{tm, tn, tk, rm, rn, stages}, v, matrices});
  };
  // FMA tiles. Largest reuse first: bigger output tiles read each staged element more times.
  // 16x8 accumulators with two stages: the 4096^3 fp32 matmul took 3.75 ms on the H200 where
  // 128x128 took 3.95 (bench/RESULTS.md, session 9). 222 registers leave one workgroup per SM,
  // and it is the second stage, which saves a barrier per slice, that pays: one stage was 3.91.
  // Not measured elsewhere; 128 accumulators per invocation would spill on smaller register files.
  // Plain matrices only: on the conv's gathered operands (rolled multiply loop) the seed conv
  // 1x64x512x512 * 256x64x3x3 ran 3.32 ms with it against 3.16 with 128x128 on the H100 (185
  // registers, no spill; bench/RESULTS.md, 2026-11-25).
  // With 16-deep slices the same tile runs on 512 invocations of 8x8 blocks: on every matrix that
  // plans it, 1.1-2.4% faster than 256 invocations of 16x8 (H200, one binary, two rounds;
  // bench/RESULTS.md session 39: 4096^3 3.67 -> 3.62 ms, 8192x4096x4096 7.34 -> 7.24,
  // 4096x11008x4096 10.10 -> 9.92, 2048x8192x2048 1.85 -> 1.82, 8192x8192x2048 7.35 -> 7.27,
  // 4096x4096x512 0.488 -> 0.477), twice as many warps per SM to hide latency for a third more
  // workgroup-memory reads per multiply-add. Not on convs: with 8-deep one-tap slices it lost
  // 6-31% (the seed conv 2.175 -> 2.481, ResNet-50's batch-128 3x3s).
  simt(256, 128, 16, 8, 8, 2, Vendor::nvidia, true);  // 512 invocations, 48 KiB
  simt(256, 128, 8, 16, 8, 2, Vendor::nvidia, true);   // 256 invocations, 24 KiB (3.82 ms)
  // Since convs load one tap per slice (session 19), their loads are as short as a matrix's, and
  // on the seed conv the 8-deep slices won: 2.49 ms against 2.58 with 16-deep ones and 2.70 with
  // 128x128x16 (H200, session 23; see kLargestTileMinConvK for where it is offered).
  t.back().one_tap_convs = true;
  t.back().one_tap_conv_min_k = kLargestTileMinConvK;
  // 128 invocations with 8x8 and 8x4 blocks and two stages: on the transformer shapes (M 128-1576,
  // N 768-3072, K 768-3072) the fastest of 11 candidates on the H200, alone or split (RESULTS.md,
  // session 15: 1576x3072x768 0.262 ms against 0.294 for 128x128 8x8; 1576x768x768 0.095 against
  // 0.111 for 64x64 4x4). Measured on plain matrices only.
  // Their rates: ViT-B/16 b8's in-projection (1576x2304x768) took 0.210 ms on 128x64 (468
  // workgroups, the busiest of 132 SMs doing 4 tiles of 128 x 64 x 768) and 0.195 on 64x64 (900,
  // 7 tiles of 64 x 64 x 768), so 64x64 does 0.94 of 128x64's work per unit time (H200, in the
  // model, bench/RESULTS.md session 28 call 3). The same call ran its output projection
  // (1576x768x768, 64x64) in 0.098 ms over 2 slices and 0.087 over 3 (7 against 5 workgroups of
  // 384- and 256-deep slices on the busiest SM: 7% less work, 11% less time).
  // On convs whose 16-deep slices hold one tap it won too, 11-14% over the tiles they had (forced,
  // H200, bench/RESULTS.md session 32): ResNet's 8x256x56x56 3x3 1.025 ms against 1.154 on 128x128,
  // and ResNet-50's batch-128 shapes: 3x3 128x128x28x28 1.008 against 1.143 and 128x256x14x14 1.017
  // against 1.152, 1x1 K 64 / 128 / 1024 0.477 / 0.427 / 0.390 against 0.548 / 0.494 / 0.443. The
  // seed conv (1x64x512x512, 2.548 against 2.321) keeps 256x128x8, which comes first. In ResNet-50
  // (per-dispatch profiles, same call) every conv of layers 1-3 gained 4-16%, but those whose
  // results do not leave in quads lost: layer 4's 7x7 outputs (3x3 at batch 128 +15-22%, 1x1
  // expansions at batch 32 +12-15%) and split-K partial sums (+2-36%). So convs take it only where
  // their results leave in quads and its grid fills the device unsplit.
  auto deep_convs_only = [&] {  // see kDeepFmaConvMinK
    t.back().one_tap_convs = t.back().one_tap_convs_only = t.back().conv_quads_full_grid = true;
    t.back().one_tap_conv_min_k = kDeepFmaConvMinK;
  };
  simt(256, 64, 16, 8, 8, 2, Vendor::nvidia, true);  // 256 invocations, 40 KiB
  deep_convs_only();
  t.back().one_tap_conv_min_n = kDeepFmaConvMinN;
  simt(128, 64, 16, 8, 8, 2, Vendor::nvidia, true);  // 128 invocations, 24 KiB
  t.back().rate = 1.0;
  t.back().one_tap_convs = true;
  t.back().conv_quads_full_grid = true;
  t.back().non_quad_for_short_rounds = true;  // see kNonQuadLargestTileMinK
  simt(128, 32, 16, 8, 4, 2, Vendor::nvidia, true);  // 128 invocations, 20 KiB
  deep_convs_only();
  simt(64, 64, 16, 8, 4, 2, Vendor::nvidia, true);  // 128 invocations, 16 KiB
  t.back().rate = 0.94;
  // Register blocks of 4x4 (8x8 on the largest tile) keep 16-64 accumulators per invocation.
  simt(128, 128, 16, 8, 8);  // 256 invocations, 16 KiB
  simt(128, 64, 16, 8, 4);   // 256 invocations, 12 KiB
  simt(64, 128, 16, 4, 8);   // 256 invocations, 12 KiB
  simt(64, 64, 16, 4, 4);    // 256 invocations, 8 KiB
  simt(64, 32, 16, 4, 4);    // 128 invocations, 6 KiB
  simt(32, 64, 16, 4, 4);    // 128 invocations, 6 KiB
  simt(32, 32, 16, 4, 4);    // 64 invocations, 4 KiB
  simt(32, 32, 16, 2, 4);    // 128 invocations, 4 KiB
  simt(32, 16, 16, 4, 4);    // 32 invocations, 3 KiB
  simt(16, 32, 16, 4, 4);    // 32 invocations, 3 KiB
  simt(16, 16, 16, 2, 2);    // 64 invocations, 2 KiB
  simt(16, 16, 8, 2, 2);     // 64 invocations, 1 KiB
  simt(16, 8, 8, 2, 2);      // 32 invocations, 768 B
  simt(8, 16, 8, 2, 2);      // 32 invocations, 768 B
  // Tensor-core tiles, by measurement on the H200 (bench/RESULTS.md):
  // - 16-byte staging (Run N): 128 x 128 with 2 x 4 subgroups and K slices of 64 ran 4 of the 5
  //   fp16 cases fastest or within 7% of it (0.23-0.87 ms against 0.30-1.27 ms for 64 x 64 x 32);
  //   64 x 64 won where N is 64 (1.17 ms against 2.29 ms: half of each 128-wide tile was padding).
  //   K slices of 64 where the budget allows (0.81 against 0.99 ms for the 4096^3 matmul), else 32.
  // - One-element staging (Run I): 64 x 64 with 2 x 2 subgroups (112 registers, four workgroups
  //   per SM) ran 4 of the 5 cases faster than 128 x 128 (176 registers, one per SM) or 128 x 64;
  //   K slices of 32 (64 was slower at 64 x 64).
  // Smaller tiles follow for small problems and small budgets.
  struct Shape {
    uint32_t tm, tn, wm, wn;
  };
  auto coop = [&](std::initializer_list<Shape> shapes, std::initializer_list<uint32_t> slices, uint32_t vec,
                  Vendor vendor = Vendor::unknown) {
    for (const Shape& s : shapes)
      for (uint32_t tk : slices) t.push_back({CoopTile{s.tm, s.tn, tk, s.wm, s.wn, 0, false, false, vec}, vendor});
  };
  // - Subgroups owning 64 x 64 (session 20, the 4096^3 matmul): 128 x 128 on 2 x 2 subgroups took
  //   0.499 ms (64-deep slices, 247 registers) and 0.536 (32-deep, two copies) against 0.594 for
  //   128 x 128 on 2 x 4 (64 x 32 each); 128 x 256 and 256 x 128 on 2 x 4 / 4 x 2 (one workgroup
  //   per SM at 214 registers) 0.554-0.586. Measured on NVIDIA only: 128 accumulators per
  //   invocation (see instantiate). Two copies of the operand tiles (CoopTile::stages) are for
  //   forced tiles only: 128 x 128 x 64 does not fit them in 48 KiB, and 32-deep slices with two
  //   copies (0.536 ms) lost to 64-deep ones with one.
  // Plain matrices only: on the fp16 convs it lost 10-16% on the seed conv and resnet3x3
  // 8x256x56x56 and resnet50 at batch 32 took 5.31 ms against 4.81, though ggml's
  // 16x256x19x19 * 4096x256x4x4 won 10% (session 20, calls 2 and 5).
  for (uint32_t tk : {64u}) t.push_back({CoopTile{128, 128, tk, 2, 2, 0, false, false, 8}, Vendor::nvidia, true});
  // Deep convs with large grids (kDeepConvMinK): the same 2 x 2 subgroups, 32-deep slices in two copies.
  t.push_back({CoopTile{128, 128, 32, 2, 2, 0, false, false, 8, 16, 16, 16, 2}, Vendor::nvidia});
  t.back().deep_conv_grids_only = true;
  coop({{128, 128, 2, 4}, {64, 64, 2, 2}, {128, 64, 2, 2}, {64, 128, 2, 2}, {64, 32, 2, 1}, {32, 64, 1, 2}, {32, 32, 1, 1}},
       {64, 32}, 8);
  // Intel's subgroups of 8 (Alchemist) hold a 64 x 64 tile within the accumulator bound (see
  // instantiate) only as 4 x 4 of them; not measured, so offered on Intel only.
  coop({{64, 64, 4, 4}}, {64, 32}, 8, Vendor::intel);
  coop({{64, 64, 2, 2}, {128, 128, 2, 4}, {128, 64, 2, 2}, {64, 128, 2, 2}, {64, 32, 2, 1}, {32, 64, 1, 2}, {32, 32, 1, 1}},
       {32}, 1);
  // Row-fast one-element staging needs a multiple of TM invocations: with subgroups of 8 only
  // 4 x 4 of them reach it.
  coop({{64, 64, 4, 4}}, {32}, 1, Vendor::intel);
  // int8 tensor cores (vec 16: shaders/integer_coopmat.glsl), K slices in int8 values. On the H200
  // (bench/RESULTS.md, session 18) the seed QDQ conv's GEMM ran 0.368 ms on 64 x 64 x 64 and 0.385
  // on 64 x 64 x 128 (115 registers, 22 KiB) against 0.475 on 128 x 128 x 128 (174 registers,
  // 44 KiB; the fp16 loop's best shape), 0.481 on 64 x 128, 0.521 on 128 x 64, 0.510 on
  // 128 x 128 x 64, 0.467 on 32 x 64 and 0.527 on 64 x 32 (x 128).
  coop({{64, 64, 2, 2}}, {64, 128}, 16);
  coop({{128, 128, 2, 4}, {64, 128, 2, 2}, {128, 64, 2, 2}, {64, 32, 2, 1}, {32, 64, 1, 2}, {32, 32, 1, 1}}, {128, 64}, 16);
  return t;
}

uint64_t grid_capacity(const TargetLimits& t) {
  return uint64_t(t.max_compute_work_group_count[0]) * t.max_compute_work_group_count[1];
}

uint64_t output_elements(const GemmProblem& p) { return uint64_t(p.batches) * uint64_t(p.m) * uint64_t(p.n); }

// Fraction of the padded tile work that is useful (1.0: the tiles cover M, N, K exactly).
double efficiency(const GemmTile& tile, const GemmProblem& p) {
  auto padded = [](int64_t extent, uint32_t step) { return double(ceil_div(uint64_t(extent), step) * step); };
  if (p.m == 0 || p.n == 0 || p.k == 0) return 1.0;  // an empty problem wastes nothing (and 0 / 0 is NaN)
  return double(p.m) * double(p.n) * double(p.k) /
         (padded(p.m, tile_m(tile)) * padded(p.n, tile_n(tile)) * padded(p.k, tile_k(tile)));
}

// Whether a conv whose results do not leave in quads gives up the largest tile for the rounds it
// would run (see kNonQuadLargestTileMinK): where the tile's other bounds would offer it (K, and
// kLargestTileMinWaves waves of its tiles) with K under kNonQuadLargestTileMinK, and its
// last round of one workgroup per unit is under kNonQuadMinRoundFill full.
bool largest_tile_rounds_short(const GemmProblem& p, const TargetLimits& t) {
  if (p.matrix_operands || p.quad_positions || p.tap_channels <= 0 || t.vendor != Vendor::nvidia ||
      t.compute_units == 0 || p.k < kLargestTileMinConvK || p.k >= kNonQuadLargestTileMinK)
    return false;
  const uint64_t units = uint64_t(t.compute_units);
  const uint64_t tiles = uint64_t(std::max<int64_t>(1, p.batches)) * ceil_div(uint64_t(p.m), kLargestTileM) *
                         ceil_div(uint64_t(p.n), kLargestTileN);
  return double(tiles) >= kLargestTileMinWaves * double(units) &&
         double(tiles) < kNonQuadMinRoundFill * double(ceil_div(tiles, units) * units);
}

// The entry as it would run this problem on this target (a tensor-core tile takes the target's
// subgroup size and the problem's staging order), or nullopt where the problem does not allow its
// loop or the target's vendor is not the one it was measured on.
std::optional<GemmTile> instantiate(const GemmTileEntry& e, const GemmProblem& p, const TargetLimits& t) {
  if (e.vendor != Vendor::unknown && e.vendor != t.vendor) return std::nullopt;
  if (e.one_tap_convs_only && p.matrix_operands) return std::nullopt;
  if (e.matrix_operands_only && !p.matrix_operands &&
      !(e.one_tap_convs && p.tap_channels > 0 && p.tap_channels % int64_t(tile_k(e.tile)) == 0 &&
        p.k >= e.one_tap_conv_min_k && p.n >= e.one_tap_conv_min_n &&
        (!e.conv_quads_full_grid || p.quad_positions ||
         (e.non_quad_for_short_rounds && largest_tile_rounds_short(p, t)))))
    return std::nullopt;
  if (e.deep_conv_grids_only && (p.matrix_operands || p.tap_channels <= 0 ||
                                 p.tap_channels % int64_t(tile_k(e.tile)) != 0 || p.k < kDeepConvMinK))
    return std::nullopt;
  if (const CoopTile* c = std::get_if<CoopTile>(&e.tile)) {
    if (p.coop_vec == 0 || c->vec != p.coop_vec) return std::nullopt;
    CoopTile tile = coop_tile_for(*c, p, t);
    if (tile.split && (tile.vec != 8 || tile.stages != 1)) return std::nullopt;
    // Float accumulators each invocation holds: at most 64 (the largest tile measured on every
    // vendor's plan), 128 for the tiles measured on NVIDIA (subgroups of 32, 255 registers).
    // Narrower subgroups spread a tile over fewer lanes (Intel Xe2: 16, Alchemist: 8), where the
    // same tile would hold 128-256 per lane, beyond their register files.
    const uint32_t max_accumulators = e.vendor == Vendor::nvidia ? 128 : 64;
    if (tile.subgroup != 0 && (tile.tm / tile.wm) * (tile.tn / tile.wn) / tile.subgroup > max_accumulators)
      return std::nullopt;
    return tile;
  }
  if (!p.simt) return std::nullopt;
  return e.tile;
}

// A tile that fits, as instantiated for the problem, with its entry's rate.
struct Candidate {
  GemmTile tile;
  double rate = 0;
};

// Workgroups of `tile` that make up the occupancy target.
uint64_t occupancy_target(const GemmTile& tile, const TargetLimits& t) {
  return std::max(kWorkgroupsPerUnit * t.compute_units, ceil_div(kInvocationsPerUnit * t.compute_units, invocations(tile)));
}

// The fewest TK steps each slice of a planner-chosen matrix split keeps (see kLargeTileMinSliceSteps).
uint64_t matrix_slice_min_steps(const GemmTile& tile) {
  return uint64_t(tile_m(tile)) * tile_n(tile) <= kMaxSplitTileArea ? kMinSliceSteps : kLargeTileMinSliceSteps;
}

// The work of the busiest compute unit (in multiply-adds, over the entry's rate) when `split`
// slices of `tile` run `p`: ceil(workgroups / units) tiles of TM x TN x slice depth.
double busiest_unit_work(const GemmTile& tile, double rate, uint64_t split, const GemmProblem& p,
                         const TargetLimits& t) {
  const uint64_t rounds = ceil_div(tiles_of(tile, p) * split, uint64_t(t.compute_units));
  const uint64_t depth = ceil_div(k_steps_of(tile, p), split) * tile_k(tile);
  return double(rounds) * double(tile_m(tile)) * double(tile_n(tile)) * double(depth) / rate;
}

// The balance step (see choose_gemm in the header): `chosen` (rated `rate`) or a rated tile and
// split that fills the device with less work on its busiest unit, by kBalanceMargin: tiles in
// table order, each with 1, 2, ... slices, each taken only where it beats the best so far by the
// margin.
GemmChoice balance(const GemmChoice& chosen, double rate, const std::vector<Candidate>& efficient, bool may_split,
                   const GemmProblem& p, const TargetLimits& t) {
  if (!p.matrix_operands || t.compute_units == 0 || rate <= 0) return chosen;
  GemmChoice best = chosen;
  double least = busiest_unit_work(chosen.tile, rate, chosen.split, p, t) * (1.0 - kBalanceMargin);
  for (const Candidate& c : efficient) {
    if (c.rate <= 0) continue;
    const uint64_t most = may_split ? std::min(kMaxMatrixSplit, split_limit(c.tile, p, t, matrix_slice_min_steps(c.tile))) : 1;
    for (uint64_t split = 1; split <= std::max<uint64_t>(1, most); ++split) {
      if (tiles_of(c.tile, p) * split < occupancy_target(c.tile, t)) continue;
      const double work = busiest_unit_work(c.tile, c.rate, split, p, t);
      // Each step must clear the margin again: fewer slices and earlier tiles win what the model
      // cannot tell apart (without it, 1576x2304x768 went to 6 slices of 64x64 for 2% less work).
      if (work < least) {
        least = work * (1.0 - kBalanceMargin);
        best = GemmChoice{c.tile, split};
      }
    }
  }
  return best;
}

// The occupancy rule over the tiles of one loop (see the header).
std::optional<GemmChoice> choose_among(const std::vector<Candidate>& fitting, const GemmProblem& p,
                                       const TargetLimits& t) {
  std::vector<Candidate> efficient;
  std::optional<GemmChoice> least_waste;
  double best_efficiency = -1;
  for (const Candidate& c : fitting) {
    double e = efficiency(c.tile, p);
    if (e >= kMinEfficiency) efficient.push_back(c);
    if (e > best_efficiency) {
      best_efficiency = e;
      least_waste = GemmChoice{c.tile, 1};
    }
  }
  if (efficient.empty()) return least_waste;
  const bool may_split = p.allow_split && p.k >= kSplitMinK;
  std::optional<GemmChoice> most;
  uint64_t most_invocations = 0, most_workgroups = 0;
  for (const Candidate& c : efficient) {
    const GemmTile& tile = c.tile;
    const uint64_t want = occupancy_target(tile, t);
    uint64_t tiles = tiles_of(tile, p), split = 1;
    const bool largest = uint64_t(tile_m(tile)) * tile_n(tile) >= kLargestTileArea;
    const bool large_coop = is_coop(tile) && p.matrix_operands && t.vendor == Vendor::nvidia &&
                            uint64_t(tile_m(tile)) * tile_n(tile) >= kLargeCoopTileArea;
    if ((largest || large_coop) && double(tiles) < kLargestTileMinWaves * double(t.compute_units)) continue;
    if (largest && !is_coop(tile) && largest_tile_rounds_short(p, t)) continue;
    if (!is_coop(tile) && !p.matrix_operands && t.vendor == Vendor::nvidia && p.k <= kShortConvMaxK &&
        uint64_t(tile_m(tile)) * tile_n(tile) == kShortConvSkippedArea)
      continue;
    if (may_split && tiles > 0 && p.matrix_operands) {
      const uint64_t deep = std::max(kMatrixSplitWorkgroupsPerUnit * t.compute_units,
                                     ceil_div(kMatrixSplitWorkgroupsPerUnit * 128 * t.compute_units, invocations(tile)));
      if (tiles < deep && !largest)
        split = std::max<uint64_t>(1, std::min({ceil_div(deep, tiles), kMaxMatrixSplit,
                                                split_limit(tile, p, t, matrix_slice_min_steps(tile))}));
    } else if (may_split && tiles > 0 && tiles < t.compute_units) {
      // Conv: split K only where the output's tiles do not fill even one wave of the device: a
      // grid that does gains less from more workgroups than the partial sums cost.
      split = std::max<uint64_t>(1, std::min(ceil_div(want, tiles), split_limit(tile, p, t, kMinSliceSteps)));
    }
    if (tiles * split >= want) return balance(GemmChoice{tile, split}, c.rate, efficient, may_split, p, t);
    // A matmul split as far as it goes that fills one wave: smaller tiles would only trade the
    // 8x4 blocks' reuse for workgroups (128x768x3072: 64x64 in 8 slices, 192 workgroups, 0.041 ms).
    if (p.matrix_operands && split == kMaxMatrixSplit && tiles * split >= t.compute_units)
      return GemmChoice{tile, split};
    // Otherwise the most invocations; among equals (4x4 blocks all give M x N / 16), the most
    // workgroups.
    const uint64_t inv = tiles * split * invocations(tile), workgroups = tiles * split;
    if (!most || inv > most_invocations || (inv == most_invocations && workgroups > most_workgroups)) {
      most_invocations = inv;
      most_workgroups = workgroups;
      most = GemmChoice{tile, split};
    }
  }
  return most;
}

}  // namespace

CoopTile coop_tile_for(CoopTile tile, const GemmProblem& p, const TargetLimits& t) {
  tile.subgroup = kernels::coopmat_subgroup_size(t);
  const std::array<uint32_t, 3> fragment = tile.int8() ? kernels::coopmat_int8_fragment(t) : kernels::coopmat_fragment(t);
  tile.fm = fragment[0], tile.fn = fragment[1], tile.fk = fragment[2];
  tile.a_kfast = p.a_kfast;
  tile.b_kfast = p.b_kfast;
  tile.split = p.coop_split;
  return tile;
}

CoopTile parse_coop_tile(const std::string& text, const std::string& what) {
  CoopTile c;
  char x1 = 0, x2 = 0, s1 = 0, x3 = 0, s2 = '/', st = 's';
  std::istringstream in(text);
  in >> c.tm >> x1 >> c.tn >> x2 >> c.tk >> s1 >> c.wm >> x3 >> c.wn;
  // (peek at the end sets failbit: test eof first)
  if (in && !in.eof() && in.peek() == '/') in >> s2 >> st >> c.stages;
  check(!in.fail() && in.eof() && x1 == 'x' && x2 == 'x' && s1 == '/' && x3 == 'x' && s2 == '/' && st == 's' &&
            c.tm > 0 && c.tn > 0 && c.tk > 0 && c.wm > 0 && c.wn > 0 && c.stages > 0,
        what, ": tensor-core tile '", text, "' is not TMxTNxTK/WMxWN[/sSTAGES] (e.g. 128x128x32/2x4 or 128x128x32/2x4/s2)");
  return c;
}

GemmChoice parse_coop_choice(const std::string& text, const std::string& what) {
  const size_t slash = text.rfind('/');
  uint64_t split = 1;
  std::string tile = text;
  if (slash != std::string::npos && slash + 1 < text.size() && text[slash + 1] == 'k') {
    const std::string digits = text.substr(slash + 2);
    check(!digits.empty() && digits.size() <= 6 && digits.find_first_not_of("0123456789") == std::string::npos &&
              std::stoull(digits) > 0,
          what, ": tensor-core tile '", text, "' is not TMxTNxTK/WMxWN[/sSTAGES][/kSPLIT] (e.g. 128x128x32/2x2/k3)");
    split = std::stoull(digits);
    tile = text.substr(0, slash);
  }
  return GemmChoice{parse_coop_tile(tile, what), split};
}

GemmChoice parse_simt_tile(const std::string& text, const std::string& what) {
  SimtTile t;
  uint64_t split = 1;
  char x1 = 0, x2 = 0, s1 = 0, x3 = 0, s2 = 0, s3 = '/', k = 'k';
  std::istringstream in(text);
  in >> t.tm >> x1 >> t.tn >> x2 >> t.tk >> s1 >> t.rm >> x3 >> t.rn >> s2 >> t.stages;
  // (peek at the end sets failbit: test eof first)
  if (in && !in.eof() && in.peek() == '/') in >> s3 >> k >> split;
  check(!in.fail() && in.eof() && x1 == 'x' && x2 == 'x' && s1 == '/' && x3 == 'x' && s2 == '/' && s3 == '/' &&
            k == 'k' && split > 0 && t.rm > 0 && t.rn > 0 && t.stages > 0 && t.tm % t.rm == 0 && t.tn % t.rn == 0,
        what, ": tile '", text, "' is not TMxTNxTK/RMxRN/STAGES[/kSPLIT] (e.g. 64x64x16/4x4/1 or 64x64x16/8x4/2/k4)");
  return GemmChoice{t, split};
}

const std::vector<GemmTileEntry>& gemm_tile_table() {
  static const std::vector<GemmTileEntry> table = make_table();
  return table;
}

std::string tile_misfit(const GemmTile& tile, const TargetLimits& t) {
  if (const CoopTile* c = std::get_if<CoopTile>(&tile)) {
    std::string why = c->int8() ? kernels::coopmat_int8_misfit(t) : kernels::coopmat_misfit(t);
    if (!why.empty()) return why;
    if (!kernels::coop_loop_supports(*c)) return cat("the tensor-core loop cannot stage ", c->str(), " evenly");
  } else {
    const SimtTile& s = std::get<SimtTile>(tile);
    if (!kernels::gemm_core_supports(kernels::GemmCoreShape{s}))
      return cat("the GEMM loop cannot stage ", s.str(), " evenly");
  }
  if (workgroup_memory_bytes(tile) > t.max_compute_shared_memory_size)
    return cat(workgroup_memory_bytes(tile), " bytes of workgroup memory > ", t.max_compute_shared_memory_size);
  if (invocations(tile) > t.max_compute_work_group_invocations || invocations(tile) > t.max_compute_work_group_size[0])
    return cat(invocations(tile), " invocations > ",
               std::min(t.max_compute_work_group_invocations, t.max_compute_work_group_size[0]));
  return "";
}

uint64_t tiles_of(const GemmTile& tile, const GemmProblem& p) {
  return uint64_t(std::max<int64_t>(1, p.batches)) * ceil_div(uint64_t(p.m), tile_m(tile)) *
         ceil_div(uint64_t(p.n), tile_n(tile));
}

uint64_t k_steps_of(const GemmTile& tile, const GemmProblem& p) { return ceil_div(uint64_t(p.k), tile_k(tile)); }

namespace {

// float32 products as float16 pieces (CoopTile::split) on NVIDIA: the two tiles measured, chosen
// by a wave model. H200, session 35 (bench/RESULTS.md), matmuls M x N x K: 128 x 128 x 32 on 2 x 2
// subgroups (244 registers: two workgroups per SM) and on 2 x 4 (256 invocations, one per SM) took
// 0.105 / 0.125 ms on 1576x2304x768 (234 tiles), 0.092 / 0.064 on 1576x768x768 (78), 0.203 / 0.183
// on 1576x3072x768 (312), 0.424 / 0.266 on 1576x768x3072 (78), 2.645 / 3.061 on 4096^3 (1024):
// per wave of resident workgroups, 1.72 and 1.0 time units per K, which ranks all five right by
// waves x wave time. 64 x 64 x 64 (the general rule's choice on these, whose 128 x 128 tiles need
// kLargestTileMinWaves) took 0.166 / 0.085 / 0.212 / 0.353 / 3.061. The FMA loop: 0.193 / 0.075 /
// 0.229 / 0.238 (split K) / 3.715.
// Grids under one wave may split K (GemmProblem::allow_split): slices x tiles workgroups, each
// over K / slices, plus the reduce dispatch that adds the slices' float32 partial sums (read once
// per slice, written once). One time unit of the 2 x 4 tile is 0.064 ms per 768 of K (the
// 78-tile product above); the reduce is costed at the H200's ~3 bytes per ns plus a dispatch gap.
// Session 36 (H200, against the FMA loop): 1576x768x768 0.052 / 0.076 ms, 1576x768x3072 0.172 /
// 0.238 (2x2 in 3 slices, the best of 8 forms forced), 1024x768x768 0.043 / 0.050 (2x4 in 2),
// 1024x768x3072 0.128 / 0.145 (2x2 in 4); but 512x768x768, 24 tiles, 0.032 / 0.029: splits need
// a quarter wave of tiles (tiles >= compute units / kPiecesSplitWaveDivisor).
constexpr int64_t kPiecesUnsplitMaxK = 1024;
constexpr double kPiecesMsPerUnitK = 0.064 / 768;
constexpr double kReduceBytesPerMs = 3.0e9, kReduceGapMs = 0.003;
constexpr uint64_t kPiecesMaxSplit = 4, kPiecesMinSliceK = 256, kPiecesSplitWaveDivisor = 4;
std::optional<GemmChoice> choose_nvidia_pieces(const GemmProblem& p, const TargetLimits& t) {
  struct Measured {
    CoopTile shape;
    uint64_t resident;  // workgroups per SM
    double wave_time;
  };
  static const Measured measured[] = {{CoopTile{128, 128, 32, 2, 4, 0, false, false, 8}, 1, 1.0},
                                      {CoopTile{128, 128, 32, 2, 2, 0, false, false, 8}, 2, 1.72}};
  std::optional<GemmChoice> best;
  double least = 0;
  for (const Measured& m : measured) {
    const CoopTile tile = coop_tile_for(m.shape, p, t);
    const uint64_t tiles = tiles_of(tile, p), steps = k_steps_of(tile, p);
    if (!tile_misfit(tile, t).empty() || tiles > grid_capacity(t) || efficiency(tile, p) < kMinEfficiency) continue;
    for (uint64_t split = 1; split <= kPiecesMaxSplit; ++split) {
      if (split > 1 && (!p.allow_split || tiles >= t.compute_units || kPiecesSplitWaveDivisor * tiles < t.compute_units ||
                        steps * tile.tk < split * kPiecesMinSliceK || !split_misfit(tile, p, t, split).empty()))
        break;
      // Grids of at least half a wave of SMs, as measured (78 tiles on 132 SMs); fewer take the
      // general rule's smaller tiles. Unsplit under one wave with a deep K, the FMA loop split
      // over K was faster (1576x768x3072: 0.238 ms against 0.266-0.284).
      const uint64_t workgroups = tiles * split;
      if (2 * workgroups < t.compute_units) continue;
      if (split == 1 && tiles < t.compute_units && p.k > kPiecesUnsplitMaxK) continue;
      const double slice_k = double(ceil_div(steps, split) * tile.tk);
      double ms = double(ceil_div(workgroups, m.resident * t.compute_units)) * m.wave_time * slice_k * kPiecesMsPerUnitK;
      if (split > 1) ms += kReduceGapMs + double(split + 1) * 4.0 * double(output_elements(p)) / kReduceBytesPerMs;
      if (!best || ms < least) {
        best = GemmChoice{tile, split};
        least = ms;
      }
    }
  }
  return best;
}

bool nvidia_pieces_apply(const GemmProblem& p, const TargetLimits& t) {
  return p.coop_split && p.matrix_operands && t.vendor == Vendor::nvidia && t.compute_units > 0;
}

}  // namespace

bool pieces_planned_unforced(const GemmProblem& p, const TargetLimits& t) {
  return t.vendor != Vendor::nvidia || (nvidia_pieces_apply(p, t) && choose_nvidia_pieces(p, t).has_value());
}

std::optional<GemmChoice> choose_gemm(const GemmProblem& p, const TargetLimits& t) {
  if (nvidia_pieces_apply(p, t))
    if (std::optional<GemmChoice> c = choose_nvidia_pieces(p, t)) return c;
  // Tensor cores first where the problem allows them, then the FMA loop. Only the measured pieces
  // above split K on tensor cores; the general rule's splits were measured on the FMA loop.
  GemmProblem unsplit = p;
  unsplit.allow_split = false;
  for (bool coop : {true, false}) {
    const GemmProblem& q = coop ? unsplit : p;
    std::vector<Candidate> fitting;
    for (const GemmTileEntry& e : gemm_tile_table()) {
      if (is_coop(e.tile) != coop) continue;
      std::optional<GemmTile> tile = instantiate(e, q, t);
      if (!tile || !tile_misfit(*tile, t).empty() || tiles_of(*tile, q) > grid_capacity(t)) continue;
      if (e.deep_conv_grids_only && (t.compute_units == 0 || tiles_of(*tile, q) < kDeepConvMinTilesPerUnit * t.compute_units))
        continue;
      if (e.conv_quads_full_grid && !q.matrix_operands &&
          tiles_of(*tile, q) < occupancy_target(*tile, t) * (q.quad_positions ? 1 : kNonQuadConvMinTargets))
        continue;
      fitting.push_back({*tile, e.rate});
    }
    if (std::optional<GemmChoice> c = choose_among(fitting, q, t)) return c;
  }
  return std::nullopt;
}

uint64_t split_limit(const GemmTile& tile, const GemmProblem& p, const TargetLimits& t, uint64_t min_steps) {
  uint64_t tiles = tiles_of(tile, p), out = output_elements(p);
  if (tiles == 0 || out == 0) return 0;  // an empty output has nothing to split
  return std::min({k_steps_of(tile, p) / min_steps, grid_capacity(t) / tiles, kMaxIndex / out,
                   t.max_storage_buffer_range / (4 * out)});
}

std::string split_misfit(const GemmTile& tile, const GemmProblem& p, const TargetLimits& t, uint64_t split) {
  if (split < 2) return cat("split_k needs at least 2 slices, got ", split);
  if (k_steps_of(tile, p) < split)
    return cat("K = ", p.k, " has ", k_steps_of(tile, p), " steps of the ", tile_k(tile), "-deep tile, fewer than ",
               split, " slices");
  if (tiles_of(tile, p) * split > grid_capacity(t))
    return cat(tiles_of(tile, p) * split, " workgroups exceed the grid limit");
  uint64_t partials = output_elements(p) * split;
  if (partials > kMaxIndex) return cat("its partial sums have ", partials, " elements, above 32-bit indexing");
  if (partials * 4 > t.max_storage_buffer_range)
    return cat("its partial sums need ", partials * 4, " bytes, above maxStorageBufferRange ",
               t.max_storage_buffer_range);
  return "";
}

}  // namespace vkc::codegen
