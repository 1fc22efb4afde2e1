// Topk by radix selection (shaders/topk_select.comp): the first pass streams each row once,
// split into segments so that even a single row fills the GPU, and keeps the best k pairs of
// every segment as candidates; further levels select from the candidates until one segment per
// row is left, whose k picks are sorted in workgroup memory and written to `order`.
//
// This replaces sorting whole chunks just to keep k of them: a segment is read into registers
// once and costs a few histogram passes over 8-bit digits (usually the four key bytes), whatever
// its length, and segments are far longer than a workgroup-memory chunk.
#include <algorithm>
#include <bit>
#include <set>

#include "codegen/glsl_types.h"
#include "codegen/grid.h"
#include "codegen/kernels/sort_common.h"
#include "codegen/shader_library.h"
#include "support/error.h"

namespace vkc::codegen::kernels {
namespace {

constexpr uint32_t kPreferredWorkgroup = 1024;
// Elements per invocation held in registers: keys only when read from the tensor (indices are
// positions), key + index pairs when read from candidates.
constexpr uint32_t kPerFromTensor = 32;
constexpr uint32_t kPerFromPairs = 16;
// Split rows of levels with at least kSplitMinElements into segments until the pass has about
// kTargetGroups workgroups (a few per SM of a large GPU), but never below kMinSegment elements or
// 8 k per segment, where the candidates would stop shrinking the data much.
constexpr int64_t kTargetGroups = 512;
constexpr int64_t kMinSegment = 512;
constexpr int64_t kSplitMinElements = 65536;
constexpr uint32_t kHistWords = 257;  // one copy of the 256-bin histogram, padded (see the shader)
constexpr uint32_t kFixedWords = 16 + 5;  // s_group + s_state

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t pow2_ceil(int64_t x) { return int64_t(std::bit_ceil(uint64_t(std::max<int64_t>(x, 1)))); }

struct SelectLevel {
  int64_t rows = 0, in_len = 0, segments = 1, k = 1, keep_pad = 2;
  uint32_t wg = 1, per = 1, copies = 1;
  bool from_tensor = false, final = false;
  uint32_t memory_bytes() const {
    return 4 * (copies * kHistWords + kFixedWords) + (final ? uint32_t(keep_pad) * 8 : 0);
  }
};

// Most histogram copies that fit next to the level's other workgroup memory; 0 when none does.
uint32_t fit_copies(SelectLevel level, const TargetLimits& target) {
  for (uint32_t copies = std::min<uint32_t>(8, level.wg); copies >= 1; copies /= 2) {
    level.copies = copies;
    if (level.memory_bytes() <= target.max_compute_shared_memory_size) return copies;
  }
  return 0;
}

// Levels from the tensor down to one segment per row, or empty when the target cannot hold one.
std::vector<SelectLevel> plan_levels(const SortRows& r, int64_t k, bool small_segments,
                                     const TargetLimits& target) {
  uint32_t wg_max = fit_workgroup_size_x(kPreferredWorkgroup, target);
  int64_t keep_pad = std::max<int64_t>(2, pow2_ceil(k));
  // Tests: tiny segments and workgroups so small rows take several levels and many segments.
  if (small_segments) wg_max = std::min<uint32_t>(wg_max, uint32_t(std::max<int64_t>(16, keep_pad / 2)));
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
    int64_t seg_max = int64_t(wg_max) * per_max;
    int64_t seg_min = std::max<int64_t>(8 * k, kMinSegment);
    int64_t segments = ceil_div(len, seg_max);
    // Few rows of much data: split further, as long as the candidates still fit one final
    // workgroup (a level more costs a dispatch, which small problems feel most).
    if (!small_segments && rows * segments < kTargetGroups && rows * len >= kSplitMinElements)
      segments = std::max(segments, std::min({ceil_div(kTargetGroups, rows), len / seg_min,
                                              int64_t(wg_max) * kPerFromPairs / k}));
    int64_t seg_len = ceil_div(len, segments);
    // Workgroups of at least a quarter of the segment (loads in flight) and, for the final sort,
    // half the padded picks (one compare-exchange per invocation and stage). With wg_max the
    // segment is at most seg_max, else per <= 4: per never exceeds per_max.
    int64_t want = std::max<int64_t>(ceil_div(seg_len, 4), segments == 1 ? keep_pad / 2 : 1);
    l.wg = uint32_t(std::min<int64_t>(wg_max, std::max<int64_t>(32, pow2_ceil(want))));
    l.per = uint32_t(ceil_div(seg_len, l.wg));
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

std::string uint_buffer(uint32_t binding, const char* access, const std::string& instance) {
  return cat("layout(std430, set = 0, binding = ", binding, ") restrict ", access, "buffer Buffer",
             binding, " { uint data[]; } ", instance, ";\n");
}

EmittedKernel emit_level(const SelectLevel& l, const KeySource& src, const std::string& in_keys,
                         const std::string& in_indices, const std::string& out_keys,
                         const std::string& out_indices, const KernelContext& ctx, const std::string& what) {
  EmittedKernel k;
  k.kernel = "topk_select";
  k.strategy = l.final ? (l.from_tensor ? "topk: select + sort rows" : "topk: final select + sort")
                       : (l.from_tensor ? "topk: select per segment" : "topk: select candidates");
  std::string buffers, load, index_decl, index_keep, index_of, store;
  std::set<DType> types;
  uint32_t binding = 0;
  if (l.from_tensor) {
    DType t = src.value->type.dtype;
    types.insert(t);
    buffers += glsl_buffer(binding++, t, false, "source");
    k.bindings.push_back({src.tensor, false});
    const SortRows& r = src.rows;
    std::string addr = r.inner == 1 ? cat("row * ", r.n, "u + i")
                                    : cat("(row / ", r.inner, "u) * ", r.n * r.inner, "u + i * ",
                                          r.inner, "u + row % ", r.inner, "u");
    // The same key images as every other sort pass (shaders/sort_keys.glsl).
    std::string convert = is_float(t) ? "vkc_sort_key_float(float(" : "vkc_sort_key_int(int(";
    load = cat("      key = ", convert, "source.data[", addr, "]));\n",
               src.descending ? "      key = ~key;  // descending: reversed order, NaN first\n" : "",
               "      index = i;\n");
    index_of = "(seg_base + e * WG + lid)";
  } else {
    buffers += uint_buffer(binding++, "readonly ", "in_keys");
    buffers += uint_buffer(binding++, "readonly ", "in_indices");
    k.bindings.push_back({in_keys, false});
    k.bindings.push_back({in_indices, false});
    load = "      key = in_keys.data[row * LEN + i];\n      index = in_indices.data[row * LEN + i];\n";
    index_decl = "uint indices[PER];";
    index_keep = "indices[e] = index;";
    index_of = "indices[e]";
  }
  if (l.final) {
    buffers += uint_buffer(binding++, "writeonly ", "order");
    k.bindings.push_back({out_indices, true});
    store = "      s_key[slot] = key;\n      s_index[slot] = index;\n";
  } else {
    buffers += uint_buffer(binding++, "writeonly ", "out_keys");
    buffers += uint_buffer(binding++, "writeonly ", "out_indices");
    k.bindings.push_back({out_keys, true});
    k.bindings.push_back({out_indices, true});
    store = "      out_keys.data[group * K + slot] = key;\n      out_indices.data[group * K + slot] = index;\n";
  }
  // Index digits cover the positions of the original row.
  uint32_t index_bits = std::max<uint32_t>(1, uint32_t(std::bit_width(uint64_t(src.rows.n - 1))));
  uint32_t index_top = (index_bits + 7) / 8 * 8;
  int64_t groups = l.rows * l.segments;
  k.workgroup_size = {l.wg, 1, 1};
  k.workgroup_count = linear_grid(uint64_t(groups) * l.wg, l.wg, ctx.target, what);
  k.workgroup_memory_bytes = l.memory_bytes();
  k.glsl = instantiate_shader("topk_select", {{"EXTENSIONS", glsl_extensions(types)},
                                              {"WG_SIZE", std::to_string(l.wg)},
                                              {"BUFFERS", buffers},
                                              {"KEYS", shader_source("sort_keys.glsl")},
                                              {"FINAL", l.final ? "1" : "0"},
                                              {"PER", std::to_string(l.per)},
                                              {"SEGMENTS", std::to_string(l.segments)},
                                              {"GROUPS", std::to_string(groups)},
                                              {"IN_LEN", std::to_string(l.in_len)},
                                              {"K", std::to_string(l.k)},
                                              {"DIGITS", std::to_string(4 + index_top / 8)},
                                              {"INDEX_TOP", std::to_string(index_top)},
                                              {"COPIES", std::to_string(l.copies)},
                                              {"KEEP_PAD", std::to_string(l.keep_pad)},
                                              {"INDEX_DECL", index_decl},
                                              {"LOAD", load},
                                              {"INDEX_KEEP", index_keep},
                                              {"INDEX_OF", index_of},
                                              {"STORE_PICK", store}});
  k.tiles["segment"] = int64_t(l.wg) * l.per;
  k.tiles["per_invocation"] = l.per;
  k.tiles["histogram_copies"] = l.copies;
  if (l.final) k.tiles["keep_pad"] = l.keep_pad;
  double in_bytes = l.from_tensor ? double(l.rows) * l.in_len * dtype_size(src.value->type.dtype)
                                  : double(l.rows) * l.in_len * 8;
  k.bytes = in_bytes + double(groups) * l.k * (l.final ? 4 : 8);
  return k;
}

}  // namespace

bool topk_select_fits(const SortRows& rows, int64_t k, const TargetLimits& target) {
  return rows.rows() * rows.n <= int64_t(UINT32_MAX) && !plan_levels(rows, k, false, target).empty();
}

std::vector<EmittedKernel> emit_topk_select(const KeySource& keys, int64_t k, const std::string& order,
                                            bool small_segments, const AddScratch& add_scratch,
                                            const KernelContext& ctx, const std::string& what) {
  std::vector<SelectLevel> levels = plan_levels(keys.rows, k, small_segments, ctx.target);
  check(!levels.empty(), what, ": strategy 'select' cannot hold k = ", k, " in the workgroup memory (",
        ctx.target.max_compute_shared_memory_size, " bytes) of target '", ctx.target.name, "'");
  check(keys.rows.rows() * keys.rows.n <= int64_t(UINT32_MAX) && keys.rows.n < (int64_t(1) << 31), what,
        ": ", keys.rows.rows(), " rows of ", keys.rows.n, " keys exceed 32-bit indexing");
  std::vector<EmittedKernel> kernels;
  std::string in_keys, in_indices;
  for (size_t i = 0; i < levels.size(); ++i) {
    const SelectLevel& l = levels[i];
    std::string out_keys, out_indices = order;
    if (!l.final) {
      int64_t slots = l.rows * l.segments * l.k;
      out_keys = add_scratch(cat("_select_keys", i), slots);
      out_indices = add_scratch(cat("_select_indices", i), slots);
    }
    kernels.push_back(emit_level(l, keys, in_keys, in_indices, out_keys, out_indices, ctx, what));
    in_keys = out_keys;
    in_indices = out_indices;
  }
  return kernels;
}

}  // namespace vkc::codegen::kernels
