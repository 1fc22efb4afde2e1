// Dispatch formation: which ops share a kernel.
//
//  * Constants and reshape views cost nothing: they name existing bytes. So do the slices and
//    concats the storage plan makes views (StoragePlan::zero_copy: contiguous slices, concats
//    written in place); nothing fuses through them, since their operands and results are bytes
//    in memory by definition.
//  * Elementwise chains whose intermediates have one use fuse into one elementwise kernel; reshape
//    views between them are members of the group (element i of a reshape is element i of its
//    operand), so "elementwise -> collapse_shape -> elementwise" is one kernel.
//  * Index maps (transpose, slice, reverse, broadcast) with reshape views between them, whose
//    intermediates have one use, are one gather kernel when the chain composes into one strided
//    view of its source (codegen/strided_view.h): each element is read once, where a stored
//    intermediate would be written and read again.
//  * With a target, anchor kernels absorb their neighbours (codegen/fusion.h):
//      - prologue: the producers of an operand that are index maps or per-element functions
//        (views, pad, reverse, transpose, cast, dequantize) fuse into conv, matmul, pooling and
//        reduction kernels; elementwise math (relu, exp, add of a same-shaped tensor, ...) fuses
//        into them too (into conv: its input only), unless the kernel reads each operand element
//        so often that recomputing the math per read costs more than storing it once
//        (codegen/fusion_budget.h);
//      - epilogue: elementwise consumers of the result, up to a final quantize, fuse into conv,
//        matmul, pooling, reductions and softmax with float results (not argmax/argmin, whose
//        result is an index); also diamonds that rejoin into one value (SiLU: x * sigmoid(x)).
//    Fusion never changes a kernel's tiling or workgroup memory: prologues run where the operand
//    was read (the matmul's workgroup tiles hold the prologue's f32 results, as they held the
//    operand's) and epilogues on registers before the store. What fusion can exceed is the target's
//    storage-buffer bindings; then the last fused ops are split off again. Every refusal goes into
//    the group's notes, which `vk-compile --report` prints.
#include <algorithm>
#include <map>
#include <set>

#include "codegen/dispatch_group.h"
#include "codegen/fusion.h"
#include "codegen/fusion_budget.h"
#include "codegen/op_codegen.h"
#include "codegen/strided_view.h"
#include "ir/use_index.h"
#include "support/error.h"

namespace vkc::codegen {

bool is_view_op(ir::OpKind kind) {
  return kind == ir::OpKind::ExpandShape || kind == ir::OpKind::CollapseShape ||
         kind == ir::OpKind::Reshape;
}

std::string DispatchGroup::describe() const {
  if (ops.empty()) return "copy -> " + copy_to;
  std::string s;
  for (const ir::Op* op : ops) {
    if (!s.empty()) s += " + ";
    s += op->describe();
  }
  return s;
}

namespace {

// Quantize/dequantize are elementwise too, but change element types and need byte-packed storage:
// they fuse into conv and matmul kernels (codegen/fusion.h), not into elementwise chains.
bool fusible_elementwise(const ir::Op* op) { return op_codegen(op->kind).glsl != nullptr; }

FusionAnchor family_of(const ir::Op* op) { return op_codegen(op->kind).anchor; }

bool is_anchor(const ir::Op* op) { return family_of(op) != FusionAnchor::None; }

// Operands whose producers may fuse: conv's input and filter, matmul's A and B (gemm's C is read
// by the kernel's own epilogue), the single input of pooling and reductions.
// attention's q, k and v (its mask is read as it is).
int prologue_operands(FusionAnchor f) {
  if (f == FusionAnchor::Attention) return 3;
  return f == FusionAnchor::Conv || f == FusionAnchor::Contraction ? 2 : 1;
}

// The epilogue takes the anchor's f32 accumulator (store_result(i, float acc)): integer results
// (an i32 sum, an i8 max pool) and argmax indices would lose bits through it.
bool takes_epilogue(const ir::Op* anchor) {
  // Attention with its rows' log-sum-exp (a piece over a block of keys): combined after it.
  if (anchor->kind == ir::OpKind::Attention && anchor->results.size() != 1) return false;
  switch (family_of(anchor)) {
    case FusionAnchor::Conv:
    case FusionAnchor::Contraction:
    case FusionAnchor::Attention: return true;
    case FusionAnchor::Pool:
    case FusionAnchor::Reduction: return is_float(anchor->result()->type.dtype);
    case FusionAnchor::ArgReduction:
    case FusionAnchor::None: return false;
  }
  return false;
}

// Index maps that run as a gather kernel of their own (codegen/kernels/data_movement.cpp). A
// chain of them whose intermediates have one use each is one gather through the composed strided
// view (index_map_chain): ShuffleNet's channel shuffle, transpose -> slice, runs as one pass
// instead of a stored transpose and a slice of it.
bool is_gather_map(ir::OpKind kind) {
  return kind == ir::OpKind::Transpose || kind == ir::OpKind::Slice || kind == ir::OpKind::Reverse ||
         kind == ir::OpKind::Broadcast;
}

bool single_internal_use(const ir::UseIndex& uses, const ir::Value* v) {
  return uses.users(v).size() == 1 && !uses.is_output(v);
}

std::string join_ops(const std::vector<ir::Op*>& ops) {
  std::string s;
  for (const ir::Op* op : ops)
    if (!is_view_op(op->kind)) s += (s.empty() ? "" : ", ") + op->describe();
  return s;
}

void add_note(std::string& notes, const std::string& note) { notes += (notes.empty() ? "" : "; ") + note; }

// Drops trailing reshape views from an epilogue: they are storage views of whatever it stores.
void trim_views(std::vector<ir::Op*>& epilogue) {
  while (!epilogue.empty() && is_view_op(epilogue.back()->kind)) epilogue.pop_back();
}

void refresh_ops(DispatchGroup& g, const std::map<const ir::Op*, size_t>& position) {
  g.ops = g.prologue;
  g.ops.push_back(g.anchor);
  g.ops.insert(g.ops.end(), g.epilogue.begin(), g.epilogue.end());
  std::sort(g.ops.begin(), g.ops.end(),
            [&](const ir::Op* a, const ir::Op* b) { return position.at(a) < position.at(b); });
}

struct PrologueSearch {
  const ir::UseIndex& uses;
  const ir::Op* anchor;
  const std::set<const ir::Op*>& claimed;
  bool math_allowed;  // elementwise math may join (not into conv's filter)
  int64_t reads;      // how often the anchor's kernel reads each element of the operand
  std::string& notes;

  // Values whose several users are not all in the chain: stored (collect_all fills it).
  std::set<const ir::Value*> stored;

  // Appends the producers of `v` that fuse into the prologue to `chain`, sources first. A
  // producer whose result has other users stays materialized (fusing it would compute it twice),
  // unless it is an index map (a view, transpose, slice, broadcast, reversal) whose users all end
  // up in this chain: then the chain reads it twice, which costs a second load of the same element
  // and saves the dispatch that stored it (rotary embeddings read q as q * cos and, through
  // rotate_half's reversal, * sin). `depth` counts the producers between `v` and the anchor;
  // kMaxFusedOps bounds it.
  void collect(ir::Value* v, std::vector<ir::Op*>& chain, int64_t depth = 0) {
    ir::Op* p = v->producer;
    if (p == nullptr || claimed.count(p)) return;
    if (std::find(chain.begin(), chain.end(), p) != chain.end()) return;  // reached again: in already
    if (!single_internal_use(uses, v) && (uses.is_output(v) || stored.count(v) || !index_map(*p))) return;
    if ((prologue_fusible(*p) || (math_allowed && elementwise_prologue_fusible(*p))) && depth >= kMaxFusedOps) {
      add_note(notes, cat(p->describe(), " not fused: the prologue already holds ", kMaxFusedOps, " ops"));
      return;
    }
    if (prologue_fusible(*p)) {
      collect(p->operand(0), chain, depth + 1);  // index maps, cast and dequantize: the data operand
    } else if (math_allowed && elementwise_prologue_fusible(*p)) {
      if (reads > kMaxPrologueRecompute) {
        add_note(notes, cat(p->describe(), " not fused: ", anchor->describe(), " reads each element of its operand ",
                            reads, " times and would recompute it on every read"));
        return;
      }
      // Same-shaped operands fuse too; a broadcast operand's producer would run once per element
      // of the larger result, so it stays a dispatch of its own.
      for (ir::Value* x : p->operands)
        if (x->type.numel() == v->type.numel()) collect(x, chain, depth + 1);
    } else {
      return;
    }
    chain.push_back(p);
  }

  // collect, then again while some value of the chain has users outside it (and the anchor):
  // each such value is stored, and its producers leave the chain with it.
  std::vector<ir::Op*> collect_all(ir::Value* operand) {
    const std::string notes_before = notes;
    for (;;) {
      notes = notes_before;
      std::vector<ir::Op*> chain;
      collect(operand, chain);
      const ir::Value* outside = nullptr;
      for (const ir::Op* op : chain)
        for (const ir::Op* u : uses.users(op->result()))
          if (u != anchor && std::find(chain.begin(), chain.end(), u) == chain.end()) outside = op->result();
      if (outside == nullptr) return chain;
      stored.insert(outside);
    }
  }

  static bool index_map(const ir::Op& op) {
    switch (op_codegen(op.kind).prologue) {
      case Prologue::View:
      case Prologue::Reverse:
      case Prologue::Transpose:
      case Prologue::Slice:
      case Prologue::Broadcast: return true;
      default: return false;
    }
  }
};

// The most ops a diamond in an epilogue may hold: SiLU is 2, hardswish spelled out about 5.
constexpr size_t kMaxDiamondOps = 8;

// Elementwise users of `v` (which has several) that rejoin into one value, in an order where
// each op follows its operands: [sigmoid, mul] for mul(v, sigmoid(v)). Every value they compute
// but the last is used only among them, and the last is their only value used elsewhere, so the
// group still stores one result. Empty when the users do not close that way.
std::vector<ir::Op*> closing_region(const ir::UseIndex& uses, ir::Value* v, const std::set<const ir::Op*>& claimed,
                                    int64_t total, const std::map<const ir::Op*, size_t>& position) {
  if (uses.is_output(v)) return {};
  std::vector<ir::Op*> region;
  std::set<const ir::Value*> inside{v};
  std::set<const ir::Op*> in_region;
  while (region.size() < kMaxDiamondOps) {
    // The earliest user of an inside value whose operands are all inside or from outside.
    ir::Op* next = nullptr;
    size_t open = 0;
    for (const ir::Value* x : inside) {
      bool x_open = uses.is_output(x);
      for (ir::Op* u : uses.users(x)) {
        if (in_region.count(u)) continue;
        x_open = true;
        bool ready = !claimed.count(u) && epilogue_fusible(*u) && u->kind != ir::OpKind::Quantize &&
                     u->result()->type.numel() == total;
        for (const ir::Value* o : u->operands) {
          // An operand computed from a value of the region would come after it: not ready yet.
          // A constant depends on nothing, wherever the importer put it (ONNX initializers of
          // GELU's erf form, sqrt(2), 1 and 0.5, come after the matmul they follow: BERT's and
          // ViT's GELU went to the next matmul's prologue, recomputed once per column tile).
          if (!inside.count(o) && o->producer != nullptr && o->producer->kind != ir::OpKind::Constant &&
              position.at(o->producer) > position.at(v->producer))
            ready = false;
        }
        if (ready && (next == nullptr || position.at(u) < position.at(next))) next = u;
      }
      if (x_open) ++open;
    }
    if (open == 1 && !region.empty()) {
      // Closed when the one open value is the last op's result.
      const ir::Value* last = region.back()->result();
      bool last_is_open = uses.is_output(last);
      for (ir::Op* u : uses.users(last)) last_is_open = last_is_open || !in_region.count(u);
      if (last_is_open) return region;
    }
    if (next == nullptr) return {};
    region.push_back(next);
    in_region.insert(next);
    inside.insert(next->result());
  }
  return {};
}

// Attention's result transposed before anything else reads it (its heads and tokens swapped back,
// [B, H, S, D] -> [B, S, H, D] or sequence first): the kernel stores each element at its place in
// the transposed result, so the product after it reads its rows contiguous instead of gathering
// them through the transpose (ViT-B/16 and BERT's output projections). Only transposes and views
// from the anchor on, and only where they move elements as a whole permutation.
bool leading_transpose(const ir::Op* anchor, const std::vector<ir::Op*>& epilogue, const ir::Op* u) {
  if (anchor->kind != ir::OpKind::Attention || u->kind != ir::OpKind::Transpose) return false;
  std::vector<const ir::Op*> maps;
  for (const ir::Op* e : epilogue) {
    if (!is_view_op(e->kind) && e->kind != ir::OpKind::Transpose) return false;
    maps.push_back(e);
  }
  maps.push_back(u);
  return epilogue_permutation(anchor->result(), maps).has_value();
}

// The anchor's group with as much prologue and epilogue as `target` allows.
DispatchGroup fuse_around(const ir::UseIndex& uses, ir::Op* anchor, const std::set<const ir::Op*>& claimed,
                          const std::map<const ir::Op*, size_t>& position, const TargetLimits& target) {
  DispatchGroup g;
  g.anchor = anchor;
  std::vector<std::vector<ir::Op*>> chains;  // one prologue chain per operand, source first
  FusionAnchor family = family_of(anchor);
  for (int i = 0; i < prologue_operands(family); ++i) {
    std::vector<ir::Op*> chain;
    // Conv takes elementwise math on its input only (the filter is a constant in models), and
    // only where its kernel reads each input element a few times (1x1 GEMM convs: the squeeze-
    // excite scale of the previous block).
    const bool math = family != FusionAnchor::Conv || i == 0;
    PrologueSearch search{uses, anchor, claimed, math, math ? operand_reads_per_element(*anchor, i, target) : 1,
                          g.notes, {}};
    chain = search.collect_all(anchor->operand(i));
    if (!chain.empty()) chains.push_back(chain);
  }
  int64_t total = anchor->result()->type.numel();
  // Epilogue lengths after which exactly one value leaves the group (the budget below may cut the
  // epilogue only there: a cut inside a diamond would leave two values to store).
  std::vector<size_t> closed{0};
  for (ir::Value* r = anchor->result(); takes_epilogue(anchor);) {
    if (!single_internal_use(uses, r)) {
      // Several users, all elementwise and rejoining into one value (SiLU: x * sigmoid(x)): the
      // whole diamond joins, computed once per element from registers.
      std::vector<ir::Op*> region = closing_region(uses, r, claimed, total, position);
      if (region.empty() || int64_t(g.epilogue.size() + region.size()) > kMaxFusedOps) break;
      g.epilogue.insert(g.epilogue.end(), region.begin(), region.end());
      closed.push_back(g.epilogue.size());
      r = region.back()->result();
      continue;
    }
    ir::Op* u = uses.users(r)[0];
    if (claimed.count(u) || !(epilogue_fusible(*u) || leading_transpose(anchor, g.epilogue, u))) break;
    if (int64_t(g.epilogue.size()) >= kMaxFusedOps) {
      add_note(g.notes, cat(u->describe(), " not fused: the epilogue already holds ", kMaxFusedOps, " ops"));
      break;
    }
    if (u->result()->type.numel() != total) {
      add_note(g.notes, cat(u->describe(), " not fused: it broadcasts the result to more elements"));
      break;
    }
    g.epilogue.push_back(u);
    closed.push_back(g.epilogue.size());
    r = u->result();
    if (u->kind == ir::OpKind::Quantize) break;  // an integer result ends the float chain
  }
  trim_views(g.epilogue);
  while (closed.back() > g.epilogue.size()) closed.pop_back();  // lengths that ended in trimmed views
  if (closed.back() != g.epilogue.size()) closed.push_back(g.epilogue.size());
  for (const auto& c : chains) g.prologue.insert(g.prologue.end(), c.begin(), c.end());
  refresh_ops(g, position);

  // Budget: every fused side operand is one more storage buffer. When the whole fusion binds more
  // than the target allows, keep the largest part that fits: any subset of the operand chains
  // with the longest epilogue prefix that fits beside it, most fused ops first, then the longer
  // epilogue (it saves writing and re-reading the anchor's result). Everything left out becomes
  // dispatches of its own, and the notes say why.
  const uint32_t limit = target.max_per_stage_descriptor_storage_buffers;
  const uint32_t needed = fused_binding_count(g);
  if (needed > limit) {
    const std::vector<ir::Op*> full_epilogue = g.epilogue;
    auto fused_ops = [](const std::vector<ir::Op*>& ops) {
      return std::count_if(ops.begin(), ops.end(), [](const ir::Op* op) { return !is_view_op(op->kind); });
    };
    DispatchGroup best = g;
    long best_score = -1;
    size_t best_epilogue = 0;
    for (uint32_t mask = 0; mask < (1u << chains.size()); ++mask) {
      DispatchGroup c = g;
      c.prologue.clear();
      for (size_t i = 0; i < chains.size(); ++i)
        if (mask & (1u << i)) c.prologue.insert(c.prologue.end(), chains[i].begin(), chains[i].end());
      for (size_t ci = closed.size(); ci-- > 0;) {
        const size_t k = closed[ci];
        c.epilogue.assign(full_epilogue.begin(), full_epilogue.begin() + long(k));
        trim_views(c.epilogue);
        refresh_ops(c, position);
        if (fused_binding_count(c) > limit) continue;
        long score = fused_ops(c.prologue) + fused_ops(c.epilogue);
        if (score > best_score || (score == best_score && c.epilogue.size() > best_epilogue)) {
          best = c;
          best_score = score;
          best_epilogue = c.epilogue.size();
        }
        break;  // shorter epilogues with these chains fuse less
      }
    }
    if (best_score < 0) {  // not even the anchor alone fits: its kernel reports the limit
      best.prologue.clear();
      best.epilogue.clear();
      refresh_ops(best, position);
    }
    auto refuse = [&](const std::string& what) {
      add_note(g.notes, cat(what, " not fused: the fused dispatch would bind ", needed, " storage buffers, target '",
                            target.name, "' allows ", limit));
    };
    for (size_t k = full_epilogue.size(); k-- > best.epilogue.size();)
      if (!is_view_op(full_epilogue[k]->kind)) refuse(full_epilogue[k]->describe());
    for (const auto& chain : chains)
      if (std::find(best.prologue.begin(), best.prologue.end(), chain.back()) == best.prologue.end())
        refuse(join_ops(chain));
    g.prologue = best.prologue;
    g.epilogue = best.epilogue;
    g.ops = best.ops;
  }
  std::string fused;
  // (Views alone are no fusion to report: they name the same bytes.)
  if (!join_ops(g.prologue).empty()) fused = "prologue: " + join_ops(g.prologue);
  if (!join_ops(g.epilogue).empty())
    fused += (fused.empty() ? "" : "; ") + std::string("epilogue: ") + join_ops(g.epilogue);
  if (!fused.empty())
    g.notes = "fused " + fused + " (no extra workgroup memory)" + (g.notes.empty() ? "" : "; " + g.notes);
  return g;
}

void fill_inputs_outputs(const ir::UseIndex& uses, DispatchGroup& g) {
  std::set<const ir::Value*> inside;
  for (ir::Op* op : g.ops)
    for (ir::Value* r : op->results) inside.insert(r);
  const std::set<const ir::Op*> members(g.ops.begin(), g.ops.end());
  std::set<const ir::Value*> seen;  // inputs in first-use order, each once
  for (ir::Op* op : g.ops)
    for (ir::Value* v : op->operands)
      if (!inside.count(v) && seen.insert(v).second) g.inputs.push_back(v);
  for (ir::Op* op : g.ops)
    for (ir::Value* r : op->results) {
      bool used_outside = uses.is_output(r);
      for (ir::Op* u : uses.users(r))
        if (!members.count(u)) used_outside = true;
      if (used_outside) g.outputs.push_back(r);
    }
}

std::vector<DispatchGroup> form(const ir::Graph& graph, const TargetLimits* target,
                                const std::set<const ir::Op*>& zero_copy) {
  std::vector<ir::Op*> ops = graph.ops();
  const ir::UseIndex uses(graph);
  std::map<const ir::Op*, size_t> position;
  for (size_t i = 0; i < ops.size(); ++i) position[ops[i]] = i;

  std::vector<DispatchGroup> groups;
  std::set<const ir::Op*> claimed = zero_copy;  // no kernel, and nothing fuses through them
  if (target != nullptr)
    for (ir::Op* op : ops) {
      if (!is_anchor(op) || claimed.count(op)) continue;
      DispatchGroup g = fuse_around(uses, op, claimed, position, *target);
      claimed.insert(g.ops.begin(), g.ops.end());
      groups.push_back(std::move(g));
    }

  // Walk backwards so each elementwise op (or view) can join the group of its single user, and
  // each index map the gather of its single user (index_map_chain).
  std::map<const ir::Op*, int> group_of;
  std::map<int, int64_t> group_numel;  // elementwise groups: elements of the group's result
  std::map<int, int64_t> group_size;   // elementwise groups: ops other than views
  std::set<int> full;                  // groups that refused an op for holding kMaxFusedOps
  std::map<int, std::vector<const ir::Op*>> map_chain;  // gather groups: their ops, source first
  int next_group = 0;
  for (size_t i = ops.size(); i-- > 0;) {
    ir::Op* op = ops[i];
    if (op->kind == ir::OpKind::Constant || claimed.count(op)) continue;
    bool view = is_view_op(op->kind);
    const bool map = is_gather_map(op->kind);
    int group = -1;
    if ((view || map) && op->results.size() == 1 && single_internal_use(uses, op->result())) {
      auto it = group_of.find(uses.users(op->result())[0]);
      if (it != group_of.end() && map_chain.count(it->second)) {
        std::vector<const ir::Op*> chain{op};
        chain.insert(chain.end(), map_chain[it->second].begin(), map_chain[it->second].end());
        if (compose_index_maps(op->operand(0)->type.shape, chain)) {
          group = it->second;
          map_chain[group] = std::move(chain);
        }
      }
    }
    if (group < 0 && (view || fusible_elementwise(op)) && op->results.size() == 1 &&
        single_internal_use(uses, op->result())) {
      ir::Value* r = op->result();
      ir::Op* user = uses.users(r)[0];
      auto it = group_of.find(user);
      if (it != group_of.end() && group_numel.count(it->second)) {
        int64_t total = group_numel.at(it->second);
        // Into a direct elementwise user, a smaller result is broadcast (recomputed per element);
        // across a view, element indices carry over only when the counts are equal.
        bool ok = is_view_op(user->kind) || view ? r->type.numel() == total
                                                 : r->type.numel() <= user->result()->type.numel();
        if (ok && !view && group_size[it->second] >= kMaxFusedOps) {
          full.insert(it->second);
          ok = false;
        }
        if (ok) group = it->second;
      }
    }
    if (group < 0 && view) continue;  // a view outside any group costs nothing
    if (group < 0) {
      group = next_group++;
      if (fusible_elementwise(op)) group_numel[group] = op->result()->type.numel();
      if (map && op->results.size() == 1) map_chain[group] = {op};
    }
    group_of[op] = group;
    if (!view) ++group_size[group];
  }
  std::map<int, DispatchGroup> by_id;
  for (ir::Op* op : ops)
    if (auto it = group_of.find(op); it != group_of.end()) by_id[it->second].ops.push_back(op);
  for (auto& [id, g] : by_id) {
    g.anchor = g.ops.back();
    int fused = 0, views = 0;
    for (ir::Op* op : g.ops) {
      if (is_view_op(op->kind)) ++views;
      else if (!fusible_elementwise(op)) g.anchor = op;
      else ++fused;
    }
    if (fused > 1) g.notes = cat("fused ", fused, " elementwise ops");
    const bool gather = map_chain.count(id) && map_chain.at(id).size() - size_t(views) > 1;
    if (gather) g.notes = cat("one gather through ", map_chain.at(id).size() - size_t(views), " index maps");
    if (views > 0) g.notes += cat(gather ? " and " : " through ", views, " reshape view", views > 1 ? "s" : "");
    if (full.count(id)) add_note(g.notes, cat("the ops before it start another kernel: at most ", kMaxFusedOps, " fuse into one"));
    groups.push_back(std::move(g));
  }
  for (DispatchGroup& g : groups) fill_inputs_outputs(uses, g);
  // Execution order: by the position of each group's last op. Every external input of a group is
  // produced before the op that reads it, hence before the group's last op.
  std::sort(groups.begin(), groups.end(), [&](const DispatchGroup& a, const DispatchGroup& b) {
    return position.at(a.ops.back()) < position.at(b.ops.back());
  });
  return groups;
}

}  // namespace

std::vector<DispatchGroup> form_dispatch_groups(const ir::Graph& graph) { return form(graph, nullptr, {}); }

std::vector<DispatchGroup> form_dispatch_groups(const ir::Graph& graph, const TargetLimits& target,
                                                const std::set<const ir::Op*>& zero_copy) {
  return form(graph, &target, zero_copy);
}

}  // namespace vkc::codegen
