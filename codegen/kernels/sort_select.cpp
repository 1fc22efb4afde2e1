// Topk by radix selection (shaders/topk_select.comp): the first pass streams each row once,
// split into segments so that even a single row fills the GPU, and keeps the best k pairs of
// every segment as candidates; further levels select from the candidates until one segment per
// row is left, whose k picks are sorted in workgroup memory and written straight to the used
// results (values read back from the source at the picked positions), so no gather pass follows.
//
// This replaces sorting whole chunks just to keep k of them: a segment is read into registers
// once and costs a few histogram passes over 8-bit digits (usually the four key bytes), whatever
// its length, and segments are far longer than a workgroup-memory chunk.
//
// Workgroup size: levels with plenty of segments use small workgroups (256), so an SM holds
// several and one workgroup's barriers (each digit pass has five, three with subgroup scans; the
// final sort ~55 for k = 1024) hide behind another's loads and atomics. A 1024-invocation
// workgroup holding 32 keys per invocation needs more than 32 registers each, so it is alone on
// an SM of 64K registers (NVIDIA), which then idles at every barrier and between load and
// histogram phases (measured: 6.1 ms on the H200 for 4096 x 32768, k = 1024, ~40x off
// bandwidth). Rows this splits into several segments (there: four of 8192) take a second level
// over the candidates. Levels with few segments (few rows) keep up to 1024 invocations, for
// latency.
#include <algorithm>
#include <bit>
#include <set>

#include "codegen/glsl_types.h"
#include "codegen/grid.h"
#include "codegen/kernels/sort_common.h"
#include "codegen/shader_library.h"
#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen::kernels {
namespace {

// Workgroup sizes: kBusyWorkgroup when the level still has kTargetGroups segments with it, else
// up to kFewGroupsWorkgroup (see the file comment).
constexpr uint32_t kBusyWorkgroup = 256;
constexpr uint32_t kFewGroupsWorkgroup = 1024;
// Elements per invocation held in registers: keys only when read from the tensor (indices are
// positions), key + index pairs when read from candidates.
//
// Read from the tensor, 16 keys per invocation, measured on the H200 (2026-11-24, 256-invocation
// workgroups, NVIDIA's pipeline statistics): 16 keys take 48 registers (5 workgroups per SM), 32
// take 94 (2 per SM). A level's time follows its workgroup count over the workgroups an SM holds,
// since every workgroup pays the same few digit passes (five barriers each) whatever its segment's
// length: n = 2^24, k = 8: 0.248 -> 0.162 ms for the first level; 4096 x 32768, k = 1024: 1.78 ->
// 1.30 ms in all, although segments of 4096 keep a quarter of their keys and take a third level.
// The shader keeps per-element flags in one 32-bit mask: at most 32 elements per invocation.
constexpr uint32_t kPerFromTensor = 16;
constexpr uint32_t kPerFromPairs = 16;
constexpr uint32_t kMaxPer = 32;
// Split rows of levels with at least kSplitMinElements into segments until the pass has about
// kTargetGroups workgroups (a few per SM of a large GPU), but never below kMinSegment elements or
// 8 k per segment, where the candidates would stop shrinking the data much.
constexpr int64_t kTargetGroups = 512;
constexpr int64_t kMinSegment = 512;
constexpr int64_t kSplitMinElements = 65536;
constexpr uint32_t kHistWords = 257;  // one copy of the 256-bin histogram, padded (see the shader)
constexpr uint32_t kFixedWords = 32 + 6;  // s_group + s_state
// In candidate levels, a chosen bin of at most kResolve pairs is settled by ranking its pairs in
// workgroup memory (in the histogram's words) instead of by further digit passes. Each pair of the
// bin compares itself with every other, so this is cheaper than a digit pass (a histogram, three to
// five barriers and a scan of 256 bins) only for small bins. Not in levels that read the tensor:
// there the code took the select from 48 to 62 registers on the H200 (4 workgroups per SM instead
// of 5), which cost more than the passes it saves (bench/RESULTS.md, Run T: 4096 x 32768, k = 1024,
// 1.142 ms settling in candidate levels only, 1.263 ms in every level; 2^24, k = 8: 0.124 / 0.140).
constexpr uint32_t kResolve = 64;
static_assert(2 * kResolve <= kHistWords, "the settled bin's pairs live in one histogram copy");

int64_t pow2_ceil(int64_t x) { return int64_t(std::bit_ceil(uint64_t(std::max<int64_t>(x, 1)))); }

struct SelectLevel {
  int64_t rows = 0, in_len = 0, segments = 1, k = 1, keep_pad = 2;
  uint32_t wg = 1, per = 1, copies = 1;
  bool from_tensor = false, final = false;
  uint32_t memory_bytes() const {
    return 4 * (copies * kHistWords + kFixedWords) + (final ? uint32_t(keep_pad) * 8 : 0);
  }
};

// Subgroup scans rank the histogram bins where the subgroup size is fixed and divides the
// workgroup (shaders/topk_select.comp, SCAN_BINS): three barriers per digit pass instead of five.
// H200, 4096 x 32768, k = 1024: 1.294 -> 1.214 ms (bench/RESULTS.md, Run P).
bool subgroup_bin_scan(const SelectLevel& l, const TargetLimits& target) {
  const uint32_t sgs = target.min_subgroup_size;
  return target.subgroup_arithmetic && sgs >= 8 && sgs == target.max_subgroup_size && sgs <= 256 && l.wg % sgs == 0;
}

// Most histogram copies that fit next to the level's other workgroup memory; 0 when none does.
// Up to 8 (hot bins, such as clustered float exponents, spread their atomics over the copies);
// up to 2 where subgroup scans rank the bins, whose owners then sum and clear every copy (Run P:
// 4096 x 32768, k = 1024, 1.214 / 1.196 / 1.186 ms with 8 / 4 / 2 copies; 1 was no faster).
uint32_t fit_copies(SelectLevel level, const TargetLimits& target) {
  const uint32_t most = subgroup_bin_scan(level, target) ? 2 : 8;
  for (uint32_t copies = std::min<uint32_t>(most, level.wg); copies >= 1; copies /= 2) {
    level.copies = copies;
    if (level.memory_bytes() <= target.max_compute_shared_memory_size) return copies;
  }
  return 0;
}

// Levels from the tensor down to one segment per row, or empty when the target cannot hold one.
std::vector<SelectLevel> plan_levels(const SortRows& r, int64_t k, bool small_segments,
                                     const TargetLimits& target) {
  uint32_t wg_few = fit_workgroup_size_x(kFewGroupsWorkgroup, target);
  uint32_t wg_busy = fit_workgroup_size_x(kBusyWorkgroup, target);
  int64_t keep_pad = std::max<int64_t>(2, pow2_ceil(k));
  // Tests: tiny segments and workgroups so small rows take several levels and many segments.
  if (small_segments)
    wg_few = wg_busy = std::min<uint32_t>(wg_few, uint32_t(std::max<int64_t>(16, keep_pad / 2)));
  std::vector<SelectLevel> levels;
  int64_t rows = r.rows(), len = r.n;
  for (bool from_tensor = true;; from_tensor = false) {
    SelectLevel l;
    l.rows = rows;
    l.in_len = len;
    l.k = k;
    l.keep_pad = keep_pad;
    l.from_tensor = from_tensor;
    uint32_t per_max = small_segments ? 4 : from_tensor ? kPerFromTensor : kPerFromPairs;
    uint32_t wg_max = rows * ceil_div(len, int64_t(wg_busy) * per_max) >= kTargetGroups ? wg_busy : wg_few;
    int64_t seg_max = int64_t(wg_max) * per_max;
    int64_t seg_min = std::max<int64_t>(8 * k, kMinSegment);
    int64_t segments = ceil_div(len, seg_max);
    // Few rows of much data: split further, as long as the candidates still fit one final
    // workgroup (a level more costs a dispatch, which small problems feel most).
    if (!small_segments && rows * segments < kTargetGroups && rows * len >= kSplitMinElements)
      segments = std::max(segments, std::min({ceil_div(kTargetGroups, rows), len / seg_min,
                                              int64_t(wg_few) * kPerFromPairs / k}));
    int64_t seg_len = ceil_div(len, segments);
    // Workgroups of at least a quarter of the segment (loads in flight) and, for the final sort,
    // half the padded picks (one compare-exchange per invocation and stage). With wg_max the
    // segment is at most seg_max, else per <= 4: per never exceeds per_max.
    int64_t want = std::max<int64_t>(ceil_div(seg_len, 4), segments == 1 ? keep_pad / 2 : 1);
    l.wg = uint32_t(std::min<int64_t>(wg_max, std::max<int64_t>(32, pow2_ceil(want))));
    l.per = uint32_t(ceil_div(seg_len, l.wg));
    check(l.per <= kMaxPer, "internal: topk select level of ", l.per, " elements per invocation");
    l.segments = ceil_div(len, int64_t(l.wg) * l.per);
    l.final = l.segments == 1;
    l.copies = fit_copies(l, target);
    if (l.copies == 0) return {};
    levels.push_back(l);
    if (l.final) return levels;
    int64_t next = l.segments * k;
    if (next >= len) return {};  // k too large for this target's segments: no progress
    len = next;
  }
}

// Candidate pairs (key, index) of a non-final level, interleaved so one 8-byte access moves a
// pair and the final level binds one buffer for them (vulkan-min allows four per stage: pairs,
// source, values, indices).
std::string pair_buffer(uint32_t binding, const char* access, const std::string& instance) {
  return cat("layout(std430, set = 0, binding = ", binding, ") restrict ", access, "buffer Buffer",
             binding, " { uvec2 data[]; } ", instance, ";\n");
}

// Offset of element `position` of row `row` in a tensor whose axis has `len` elements.
std::string row_address(const SortRows& r, int64_t len, const std::string& position) {
  if (r.inner == 1) return cat("row * ", len, "u + ", position);
  return cat("(row / ", r.inner, "u) * ", len * r.inner, "u + ", position, " * ", r.inner, "u + row % ",
             r.inner, "u");
}

// The final level's writes of pick q (at input position `index`) to the used results.
std::string store_results(const KeySource& src, const SelectOutputs& out, int64_t k, uint32_t& binding,
                          std::string& buffers, std::set<DType>& types, EmittedKernel& kernel,
                          const KernelContext& ctx) {
  std::string store;
  std::string at = row_address(src.rows, k, "q");
  if (out.values) {
    // The source's own element, not one rebuilt from the key: keys fold -0.0 into 0.0 and every
    // NaN into one, but the values must keep the input's bits.
    DType t = src.value->type.dtype;
    types.insert(t);
    buffers += glsl_buffer(binding++, t, true, "values");
    kernel.bindings.push_back({ctx.tensor(out.values), true});
    store += cat("    values.data[", at, "] = source.data[", row_address(src.rows, src.rows.n, "index"),
                 "];\n");
  }
  if (out.indices) {
    DType t = out.indices->type.dtype;
    if (t == DType::i64 && !ctx.target.shader_int64) {
      // No 64-bit integers in the shader: each index as its (low, high) words; positions are below
      // 2^31, so the high word is zero and the bytes are exactly the little-endian int64.
      buffers += cat("layout(std430, set = 0, binding = ", binding++,
                     ") restrict writeonly buffer Indices { uint data[]; } indices;\n");
      store += cat("    indices.data[2u * (", at, ")] = index;\n", "    indices.data[2u * (", at,
                   ") + 1u] = 0u;\n");
    } else {
      types.insert(t);
      buffers += glsl_buffer(binding++, t, true, "indices");
      store += cat("    indices.data[", at, "] = ", glsl_storage_type(t), "(index);\n");
    }
    kernel.bindings.push_back({ctx.tensor(out.indices), true});
  }
  return store;
}

EmittedKernel emit_level(const SelectLevel& l, const KeySource& src, const std::string& in_pairs,
                         const std::string& out_pairs, const SelectOutputs& out, const KernelContext& ctx,
                         const std::string& what) {
  EmittedKernel k;
  k.kernel = "topk_select";
  k.strategy = l.final ? (l.from_tensor ? "topk: select + sort rows" : "topk: final select + sort")
                       : (l.from_tensor ? "topk: select per segment" : "topk: select candidates");
  std::string buffers, load, index_decl, index_keep, index_of, store, store_result;
  std::set<DType> types;
  uint32_t binding = 0;
  DType t = src.value->type.dtype;
  // The source is read for the keys (first level) or for the values (final level).
  bool binds_source = l.from_tensor || (l.final && out.values);
  if (!l.from_tensor) {
    buffers += pair_buffer(binding++, "readonly ", "in_pairs");
    k.bindings.push_back({in_pairs, false});
    load = "      uvec2 pair = in_pairs.data[row * LEN + i];\n      key = pair.x;\n      index = pair.y;\n";
    index_decl = "uint positions[PER];  // the pairs' indices (the name `indices` is the result)";
    index_keep = "positions[e] = index;";
    index_of = "positions[e]";
  }
  if (binds_source) {
    types.insert(t);
    buffers += glsl_buffer(binding++, t, false, "source");
    k.bindings.push_back({src.tensor, false});
  }
  if (l.from_tensor) {
    // The same key images as every other sort pass (shaders/sort_keys.glsl).
    std::string convert = is_float(t) ? "vkc_sort_key_float(float(" : "vkc_sort_key_int(int(";
    load = cat("      key = ", convert, "source.data[", row_address(src.rows, src.rows.n, "i"), "]));\n",
               src.descending ? "      key = ~key;  // descending: reversed order, NaN first\n" : "",
               "      index = i;\n");
    index_of = "(seg_base + e * WG + lid)";
  }
  if (l.final) {
    store = "      s_key[slot] = key;\n      s_index[slot] = index;\n";
    store_result = store_results(src, out, l.k, binding, buffers, types, k, ctx);
  } else {
    buffers += pair_buffer(binding++, "writeonly ", "out_pairs");
    k.bindings.push_back({out_pairs, true});
    store = "      out_pairs.data[group * K + slot] = uvec2(key, index);\n";
  }
  std::string extensions = glsl_extensions(types);
  const bool scan_bins = subgroup_bin_scan(l, ctx.target);
  const uint32_t sgs = ctx.target.min_subgroup_size;
  if (ctx.target.subgroup_arithmetic)
    extensions += "#extension GL_KHR_shader_subgroup_basic : require\n"
                  "#extension GL_KHR_shader_subgroup_arithmetic : require\n";
  // Index digits cover the positions of the original row.
  uint32_t index_bits = std::max<uint32_t>(1, uint32_t(std::bit_width(uint64_t(src.rows.n - 1))));
  uint32_t index_top = (index_bits + 7) / 8 * 8;
  int64_t groups = l.rows * l.segments;
  const uint32_t resolve = l.from_tensor ? 0 : std::min(l.wg, kResolve);  // see kResolve
  k.workgroup_size = {l.wg, 1, 1};
  k.workgroup_count = linear_grid(uint64_t(groups) * l.wg, l.wg, ctx.target, what);
  k.workgroup_memory_bytes = l.memory_bytes();
  if (scan_bins) k.subgroup_sizes = {sgs, sgs};  // a subgroup's bins are one run of SGS
  k.glsl = instantiate_shader("topk_select", {{"EXTENSIONS", extensions},
                                              {"WG_SIZE", std::to_string(l.wg)},
                                              {"BUFFERS", buffers},
                                              {"KEYS", shader_source("sort_keys.glsl")},
                                              {"FINAL", l.final ? "1" : "0"},
                                              {"SUBGROUP_SLOTS", ctx.target.subgroup_arithmetic ? "1" : "0"},
                                              {"SCAN_BINS", scan_bins ? "1" : "0"},
                                              {"SGS", std::to_string(scan_bins ? sgs : 1)},
                                              {"PER", std::to_string(l.per)},
                                              {"SEGMENTS", std::to_string(l.segments)},
                                              {"GROUPS", std::to_string(groups)},
                                              {"IN_LEN", std::to_string(l.in_len)},
                                              {"K", std::to_string(l.k)},
                                              {"DIGITS", std::to_string(4 + index_top / 8)},
                                              {"INDEX_TOP", std::to_string(index_top)},
                                              {"COPIES", std::to_string(l.copies)},
                                              {"RESOLVE", std::to_string(resolve)},
                                              {"KEEP_PAD", std::to_string(l.keep_pad)},
                                              {"INDEX_DECL", index_decl},
                                              {"LOAD", load},
                                              {"INDEX_KEEP", index_keep},
                                              {"INDEX_OF", index_of},
                                              {"STORE_PICK", store},
                                              {"STORE_RESULT", store_result}});
  k.tiles["segment"] = int64_t(l.wg) * l.per;
  k.tiles["per_invocation"] = l.per;
  k.tiles["histogram_copies"] = l.copies;
  k.tiles["subgroup_bin_scan"] = scan_bins ? 1 : 0;
  k.tiles["resolve_bin_pairs"] = resolve;
  if (l.final) k.tiles["keep_pad"] = l.keep_pad;
  double in_bytes = l.from_tensor ? double(l.rows) * l.in_len * dtype_size(t) : double(l.rows) * l.in_len * 8;
  double out_bytes = double(groups) * l.k * 8;
  if (l.final) {
    out_bytes = 0;
    if (out.values) out_bytes += double(out.values->type.size_bytes()) * 2;  // gather + write
    if (out.indices) out_bytes += double(out.indices->type.size_bytes());
  }
  k.bytes = in_bytes + out_bytes;
  return k;
}

}  // namespace

bool topk_select_fits(const SortRows& rows, int64_t k, const TargetLimits& target) {
  return rows.rows() * rows.n <= int64_t(UINT32_MAX) && !plan_levels(rows, k, false, target).empty();
}

std::vector<EmittedKernel> emit_topk_select(const KeySource& keys, int64_t k, const SelectOutputs& out,
                                            bool small_segments, const AddScratch& add_scratch,
                                            const KernelContext& ctx, const std::string& what) {
  check(out.values || out.indices, "internal: ", what, ": topk select with no used result");
  std::vector<SelectLevel> levels = plan_levels(keys.rows, k, small_segments, ctx.target);
  check(!levels.empty(), what, ": strategy 'select' cannot hold k = ", k, " in the workgroup memory (",
        ctx.target.max_compute_shared_memory_size, " bytes) of target '", ctx.target.name, "'");
  check(keys.rows.rows() * keys.rows.n <= int64_t(UINT32_MAX) && keys.rows.n < (int64_t(1) << 31), what,
        ": ", keys.rows.rows(), " rows of ", keys.rows.n, " keys exceed 32-bit indexing");
  std::vector<EmittedKernel> kernels;
  std::string in_pairs;
  for (size_t i = 0; i < levels.size(); ++i) {
    const SelectLevel& l = levels[i];
    std::string out_pairs;
    // Two words per candidate pair.
    if (!l.final) out_pairs = add_scratch(cat("_select_pairs", i), 2 * l.rows * l.segments * l.k);
    kernels.push_back(emit_level(l, keys, in_pairs, out_pairs, out, ctx, what));
    in_pairs = out_pairs;
  }
  return kernels;
}

}  // namespace vkc::codegen::kernels
