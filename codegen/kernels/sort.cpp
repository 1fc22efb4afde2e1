// Sort, TopK: plans the passes that compute every row's sorted positions (`order`), then gathers
// the used results from them, except those the last pass writes itself: it holds the sorted keys,
// so the workgroup pass and the radix plan's last scatter write the sorted values (and one
// payload) directly, and `order` is only written when a gather still needs it. On long rows a
// gather costs about as much as a whole radix digit pass.
//
// Plans, chosen against the target's workgroup memory so they fit every profile:
//  - rows that fit one chunk: one bitonic pass in workgroup memory (several rows per workgroup
//    when rows are short), the steps of a few strides at a time in registers;
//  - topk of long rows ("select", sort_select.cpp): radix selection keeps the best k of every
//    segment of a row without sorting it (segments so even one row fills the GPU), levels of
//    candidates shrink until one segment per row is left, whose picks are sorted in workgroup
//    memory and written straight to the results (no `order`, no gathers);
//  - topk of long rows with small k when select does not fit the target: each chunk keeps its
//    best k (rounded up to a power of two) as candidates in scratch; merge passes sort chunks of
//    candidates until one list per row is left, so no invocation ever walks a whole row;
//  - full sorts of longer rows ("radix", sort_radix.cpp): an LSD radix sort through global
//    memory, three dispatches (count, scan, stable scatter) per 8-bit digit; the scatter ranks
//    with subgroup ballots where the target has them ("radix_portable" forces the other way);
//  - anything else (or forced "global"): a global bitonic sort on padded scratch rows:
//    chunk-sized runs presorted in workgroup memory, then for every larger stage one dispatch per
//    global stride and one workgroup-memory pass for the strides inside a chunk.
#include <bit>

#include "codegen/glsl_types.h"
#include "codegen/kernels/kernels.h"
#include "codegen/kernels/sort_common.h"
#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen::kernels {
namespace {

int64_t pow2_ceil(int64_t x) { return int64_t(std::bit_ceil(uint64_t(std::max<int64_t>(x, 1)))); }
// Rows sorted whole in one chunk: padded to a power of two, and to at least 2 so the network has
// a stage (a pass without one would let the compiler drop the unread key array, changing the
// workgroup memory the plan declares).
int64_t whole_row_slots(int64_t len) { return std::max<int64_t>(2, pow2_ceil(len)); }

// Collects the passes and the scratch tensors they use.
struct SortPlanner {
  const KernelContext& ctx;
  const std::string what;
  const std::string prefix;  // unique scratch name prefix for this op
  std::vector<ScratchTensor>& scratch;
  std::vector<EmittedKernel> kernels;

  std::string add_scratch(const std::string& suffix, int64_t elements) {
    std::string name = prefix + suffix;
    check(uint64_t(elements) * 4 <= ctx.target.max_storage_buffer_range, what, ": sort scratch '",
          name, "' needs ", elements * 4, " bytes, above target '", ctx.target.name,
          "' maxStorageBufferRange ", ctx.target.max_storage_buffer_range);
    scratch.push_back({name, DType::i32, {elements}});
    return name;
  }

  // Rows that fit a chunk: the whole sort is one pass.
  void sort_in_workgroups(const KeySource& keys, uint32_t capacity, const SortDirect& direct,
                          int64_t out_len) {
    BlockPass p;
    p.keys = &keys;
    p.rows = keys.rows.rows();
    p.in_len = keys.rows.n;
    p.in_pad = whole_row_slots(keys.rows.n);
    p.chunk = uint32_t(std::min<int64_t>(capacity, std::max<int64_t>(2, pow2_ceil(p.rows * p.in_pad))));
    p.k_hi = uint32_t(p.in_pad);
    p.row_mask = uint32_t(p.in_pad - 1);
    p.out_indices = direct.order;
    p.out_period = p.in_pad;
    p.out_len = out_len;
    p.values = direct.values;
    p.payload_source = direct.payload_source;
    p.payload = direct.payload;
    p.strategy = "bitonic in workgroup memory";
    kernels.push_back(emit_sort_block(p, ctx, what));
  }

  // Topk of long rows: candidate lists of `keep` per chunk, merged until one per row remains.
  void topk_by_candidates(const KeySource& keys, uint32_t capacity, int64_t keep,
                          const std::string& order, int64_t k) {
    int64_t rows = keys.rows.rows();
    int64_t len = keys.rows.n;
    std::string in_keys, in_indices;
    for (int level = 0;; ++level) {
      BlockPass p;
      p.keys = level == 0 ? &keys : nullptr;
      p.in_keys = in_keys;
      p.in_indices = in_indices;
      p.rows = rows;
      p.in_len = len;
      if (len <= capacity && level > 0) {  // the last list per row: sort it whole, keep k
        p.in_pad = whole_row_slots(len);
        p.chunk = uint32_t(std::min<int64_t>(capacity, std::max<int64_t>(2, pow2_ceil(rows * p.in_pad))));
        p.k_hi = uint32_t(p.in_pad);
        p.row_mask = uint32_t(p.in_pad - 1);
        p.out_indices = order;
        p.out_period = p.in_pad;
        p.out_len = k;
        p.strategy = "topk: final merge of candidates";
        kernels.push_back(emit_sort_block(p, ctx, what));
        return;
      }
      p.in_pad = round_up(len, capacity);
      p.chunk = capacity;
      p.k_hi = capacity;
      p.row_mask = capacity - 1;
      int64_t next_len = p.in_pad / capacity * keep;
      p.out_keys = add_scratch(cat("_cand_keys", level), rows * next_len);
      p.out_indices = add_scratch(cat("_cand_indices", level), rows * next_len);
      p.out_period = capacity;
      p.out_len = keep;
      p.strategy = level == 0 ? "topk: candidates per chunk" : "topk: merge candidates";
      kernels.push_back(emit_sort_block(p, ctx, what));
      in_keys = p.out_keys;
      in_indices = p.out_indices;
      len = next_len;
    }
  }

  // Full sort of rows longer than a chunk, through padded scratch rows.
  void sort_globally(const KeySource& keys, uint32_t capacity, const std::string& order,
                     int64_t out_len) {
    int64_t rows = keys.rows.rows();
    int64_t pad = pow2_ceil(keys.rows.n);
    check(rows * pad <= int64_t(1) << 31, what, ": ", rows, " rows of ", pad,
          " padded keys exceed 32-bit indexing");
    std::string pair_keys = add_scratch("_keys", rows * pad);
    std::string pair_indices = add_scratch("_indices", rows * pad);
    BlockPass presort;
    presort.keys = &keys;
    presort.rows = rows;
    presort.in_len = keys.rows.n;
    presort.in_pad = pad;
    presort.chunk = capacity;
    presort.k_hi = capacity;
    presort.row_mask = uint32_t(pad - 1);
    presort.out_keys = pair_keys;
    presort.out_indices = pair_indices;
    presort.out_period = capacity;
    presort.out_len = capacity;
    presort.strategy = "global bitonic: presort chunks";
    kernels.push_back(emit_sort_block(presort, ctx, what));
    for (int64_t stage = int64_t(capacity) * 2; stage <= pad; stage *= 2) {
      for (int64_t stride = stage / 2; stride >= capacity; stride /= 2)
        kernels.push_back(emit_sort_global_step(pair_keys, pair_indices, rows * pad / 2,
                                                uint32_t(pad - 1), uint32_t(stage), uint32_t(stride),
                                                ctx, what));
      BlockPass merge;
      merge.in_keys = pair_keys;
      merge.in_indices = pair_indices;
      merge.rows = rows;
      merge.in_len = pad;
      merge.in_pad = pad;
      merge.chunk = capacity;
      merge.k_lo = uint32_t(stage);
      merge.k_hi = uint32_t(stage);
      merge.row_mask = uint32_t(pad - 1);
      if (stage == pad) {  // last stage: write the row's first out_len positions
        merge.out_indices = order;
        merge.out_period = pad;
        merge.out_len = out_len;
      } else {
        merge.out_keys = pair_keys;
        merge.out_indices = pair_indices;
        merge.out_period = capacity;
        merge.out_len = capacity;
      }
      merge.strategy = "global bitonic: merge inside chunks";
      kernels.push_back(emit_sort_block(merge, ctx, what));
    }
  }
};

}  // namespace

SortRows sort_rows(const Shape& shape, int64_t axis) {
  SortRows r;
  r.n = shape[size_t(axis)];
  for (size_t d = 0; d < size_t(axis); ++d) r.outer *= shape[d];
  for (size_t d = size_t(axis) + 1; d < shape.size(); ++d) r.inner *= shape[d];
  return r;
}

std::vector<EmittedKernel> emit_sort(const DispatchGroup& group, const KernelContext& ctx,
                                     std::vector<ScratchTensor>& scratch) {
  const ir::Op& op = *group.anchor;
  const std::string what = op.describe();
  bool is_topk = op.kind == ir::OpKind::TopK;
  const ir::Value* keys = op.operand(0);
  int64_t rank = int64_t(keys->type.shape.size());
  check(rank >= 1, what, ": sorting a rank-0 tensor is not supported on the GPU yet");
  int64_t axis = op.attr_int("axis");
  if (axis < 0) axis += rank;
  check(axis >= 0 && axis < rank, what, ": axis ", op.attr_int("axis"), " is out of range");
  DType key_type = keys->type.dtype;
  check(key_type != DType::i64, what, ": i64 sort keys are not supported on the GPU yet");
  require_storable(key_type, ctx.target, what);

  KeySource src;
  src.value = keys;
  src.tensor = ctx.tensor(keys);
  src.rows = sort_rows(keys->type.shape, axis);
  src.descending = is_topk ? op.attr_bool("largest") : op.attr_bool("descending");
  int64_t out_len = is_topk ? op.attr_int("k") : src.rows.n;
  if (src.rows.rows() * out_len == 0) return {};  // nothing to write

  SortPlanner plan{ctx, what, cat("sort", op.result(0)->id, "_scratch"), scratch, {}};
  uint32_t capacity = sort_chunk_capacity(ctx.target);
  std::string forced = ctx.forced(op);
  int64_t keep = pow2_ceil(out_len);
  bool fits = pow2_ceil(src.rows.n) <= capacity;
  bool candidates_ok = is_topk && !fits && keep * 4 <= capacity;
  bool select_ok = is_topk && !fits && topk_select_fits(src.rows, out_len, ctx.target);
  if (forced.empty() && !is_topk && !fits && radix_sort_fits(src.rows, ctx.target)) forced = "radix";
  if (forced.empty())
    forced = fits ? "workgroup" : select_ok ? "select" : candidates_ok ? "candidates" : "global";
  // "radix_portable": radix with the scatter's portable ranking even where subgroups would do (tests).
  bool portable_ranking = forced == "radix_portable";
  if (portable_ranking) forced = "radix";
  // A forced multi-pass strategy on rows that would fit uses small chunks, so tests exercise the
  // global steps and several candidate merge levels on small data.
  int64_t padded = pow2_ceil(src.rows.n);
  if (forced == "global" && fits) capacity = uint32_t(std::max<int64_t>(2, padded / 16));
  check(forced != "candidates" || (is_topk && keep * 4 <= capacity), what,
        ": strategy 'candidates' needs topk with k <= ", capacity / 4, " on target '",
        ctx.target.name, "'");
  if (forced == "candidates" && fits)
    capacity = uint32_t(std::max<int64_t>(keep * 4, std::min<int64_t>(capacity, padded / 64)));
  if (forced == "global" && padded <= capacity) forced = "workgroup";  // rows of 1 or 2 keys

  // Results the last pass writes itself (sorted values, one payload), so no gather reads `order`
  // for them: the workgroup pass and the radix plan's last scatter hold the sorted keys.
  const ir::Value* values = ctx.graph.has_uses(op.result(0)) ? op.result(0) : nullptr;
  std::vector<int> payloads;  // sort operands >= 1 whose sorted results something uses
  for (int i = 1; !is_topk && i < op.num_operands(); ++i)
    if (ctx.graph.has_uses(op.result(i))) payloads.push_back(i);
  bool indices = is_topk && ctx.graph.has_uses(op.result(1));
  SortDirect direct;
  if (forced == "workgroup") {
    direct.values = values;
    // The payload is read at the index in the same pass; with `order` too, five buffers.
    if (payloads.size() == 1 && !indices && ctx.target.max_per_stage_descriptor_storage_buffers >= 4) {
      direct.payload_source = op.operand(payloads[0]);
      direct.payload = op.result(payloads[0]);
    }
  } else if (forced == "radix" && radix_writes_values(key_type)) {
    direct.values = values;
    if (payloads.size() == 1 && radix_carries_payload(key_type, op.operand(payloads[0])->type.dtype)) {
      direct.payload_source = op.operand(payloads[0]);
      direct.payload = op.result(payloads[0]);
    }
  }
  bool gather_values = values != nullptr && direct.values == nullptr;
  bool gather_payloads = payloads.size() > (direct.payload != nullptr ? 1u : 0u);
  std::string order;
  // Select writes the used topk results itself (sort_select.cpp): no `order`, no gathers.
  if (forced != "select" &&
      (gather_values || gather_payloads || indices || (forced != "workgroup" && forced != "radix")))
    order = plan.add_scratch("_order", src.rows.rows() * out_len);
  direct.order = order;

  if (forced == "workgroup") {
    check(fits, what, ": strategy 'workgroup' needs rows of at most ", capacity, " keys on target '",
          ctx.target.name, "'");
    plan.sort_in_workgroups(src, capacity, direct, out_len);
  } else if (forced == "select") {
    check(is_topk, what, ": strategy 'select' is for topk only");
    if (!values && !indices) return {};
    // Forced on rows that would fit a chunk (tests): tiny segments, so several levels run.
    return emit_topk_select(src, out_len, SelectOutputs{values, indices ? op.result(1) : nullptr}, fits,
                            [&](const std::string& suffix, int64_t n) { return plan.add_scratch(suffix, n); },
                            ctx, what);
  } else if (forced == "candidates") {
    plan.topk_by_candidates(src, capacity, keep, order, out_len);
  } else if (forced == "global") {
    plan.sort_globally(src, capacity, order, out_len);
  } else if (forced == "radix") {
    // Forced on rows that would fit a chunk (tests): small tiles, so each row spans several.
    std::vector<EmittedKernel> passes = emit_sort_radix(
        src, direct, out_len, fits, portable_ranking,
        [&](const std::string& suffix, int64_t n) { return plan.add_scratch(suffix, n); }, ctx, what);
    plan.kernels.insert(plan.kernels.end(), passes.begin(), passes.end());
  } else {
    throw Error(cat(what, ": unknown sort strategy '", forced,
                    "' (expected workgroup, select, candidates, global, radix or radix_portable)"));
  }

  // Gathers for the used results the last pass did not write.
  if (gather_values)
    plan.kernels.push_back(emit_sort_gather_values(order, src.rows, out_len, keys, op.result(0), ctx, what));
  if (indices)
    plan.kernels.push_back(emit_sort_gather_indices(order, src.rows, out_len, op.result(1), ctx, what));
  for (int i : payloads)
    if (op.result(i) != direct.payload)
      plan.kernels.push_back(
          emit_sort_gather_values(order, src.rows, out_len, op.operand(i), op.result(i), ctx, what));
  return std::move(plan.kernels);
}

}  // namespace vkc::codegen::kernels
