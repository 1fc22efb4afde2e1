// Dispatch formation: which ops share a kernel.
//
//  * Constants and reshape views cost nothing: they name existing bytes.
//  * Elementwise chains whose intermediates have one use fuse into one elementwise kernel; reshape
//    views between them are members of the group (element i of a reshape is element i of its
//    operand), so "elementwise -> collapse_shape -> elementwise" is one kernel.
//  * With a target: conv / conv_transpose absorb their operands' producer chains (views, pad,
//    reverse, transpose, cast, dequantize) as a prologue, and conv / matmul / gemm absorb the
//    elementwise consumers of their result, up to a final quantize, as an epilogue. Fusion never
//    changes a kernel's tiling or workgroup memory (codegen/fusion.h); what it can exceed is the
//    target's storage-buffer bindings, and then the last fused ops are split off again, with the
//    reason in the group's notes.
#include <algorithm>
#include <map>
#include <set>

#include "codegen/dispatch_group.h"
#include "codegen/fusion.h"
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

bool fusible_elementwise(const ir::Op* op) {
  // Quantize/dequantize change element types and need byte-packed storage: they fuse into conv
  // and matmul kernels (codegen/fusion.h), not into elementwise chains.
  return ir::is_elementwise(op->kind) && op->kind != ir::OpKind::Quantize &&
         op->kind != ir::OpKind::Dequantize;
}

bool is_anchor(const ir::Op* op) {
  switch (op->kind) {
    case ir::OpKind::Conv:
    case ir::OpKind::ConvTranspose:
    case ir::OpKind::MatMul:
    case ir::OpKind::BatchMatMul:
    case ir::OpKind::Gemm: return true;
    default: return false;
  }
}

bool single_internal_use(const ir::Graph& g, const ir::Value* v) {
  return g.users(v).size() == 1 && !g.is_output(v);
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

// The anchor's group with as much prologue and epilogue as `target` allows.
DispatchGroup fuse_around(const ir::Graph& graph, ir::Op* anchor, const std::set<const ir::Op*>& claimed,
                          const std::map<const ir::Op*, size_t>& position, const TargetLimits& target) {
  DispatchGroup g;
  g.anchor = anchor;
  std::vector<std::vector<ir::Op*>> chains;  // one prologue chain per operand, source first
  bool conv = anchor->kind == ir::OpKind::Conv || anchor->kind == ir::OpKind::ConvTranspose;
  for (int i = 0; conv && i < 2; ++i) {
    std::vector<ir::Op*> chain;
    for (ir::Value* v = anchor->operand(i); v->producer && prologue_fusible(*v->producer) &&
                                            !claimed.count(v->producer) && single_internal_use(graph, v);
         v = v->producer->operand(0))
      chain.insert(chain.begin(), v->producer);
    if (!chain.empty()) chains.push_back(chain);
  }
  int64_t total = anchor->result()->type.numel();
  for (ir::Value* r = anchor->result(); single_internal_use(graph, r);) {
    ir::Op* u = graph.users(r)[0];
    if (claimed.count(u) || !epilogue_fusible(*u)) break;
    if (u->result()->type.numel() != total) {
      add_note(g.notes, cat(u->describe(), " not fused: it broadcasts the result to more elements"));
      break;
    }
    g.epilogue.push_back(u);
    r = u->result();
    if (u->kind == ir::OpKind::Quantize) break;  // an integer result ends the float chain
  }
  trim_views(g.epilogue);
  for (const auto& c : chains) g.prologue.insert(g.prologue.end(), c.begin(), c.end());
  refresh_ops(g, position);

  // Budget: every fused side operand is one more storage buffer. Split the epilogue from its end,
  // then whole prologue chains, until the dispatch binds no more than the target allows.
  uint32_t limit = target.max_per_stage_descriptor_storage_buffers;
  while (fused_binding_count(g) > limit && (!g.epilogue.empty() || !chains.empty())) {
    uint32_t needed = fused_binding_count(g);
    std::string refused;
    if (!g.epilogue.empty()) {
      refused = g.epilogue.back()->describe();
      g.epilogue.pop_back();
      trim_views(g.epilogue);
    } else {
      refused = join_ops(chains.back());
      for (ir::Op* op : chains.back()) std::erase(g.prologue, op);
      chains.pop_back();
    }
    refresh_ops(g, position);
    add_note(g.notes, cat(refused, " not fused: the fused dispatch would bind ", needed,
                          " storage buffers, target '", target.name, "' allows ", limit));
  }
  std::string fused;
  if (!g.prologue.empty()) fused = "prologue: " + join_ops(g.prologue);
  if (!g.epilogue.empty()) fused += (fused.empty() ? "" : "; ") + std::string("epilogue: ") + join_ops(g.epilogue);
  if (!fused.empty())
    g.notes = "fused " + fused + " (no extra workgroup memory)" + (g.notes.empty() ? "" : "; " + g.notes);
  return g;
}

void fill_inputs_outputs(const ir::Graph& graph, DispatchGroup& g) {
  std::set<const ir::Value*> inside;
  for (ir::Op* op : g.ops)
    for (ir::Value* r : op->results) inside.insert(r);
  for (ir::Op* op : g.ops)
    for (ir::Value* v : op->operands)
      if (!inside.count(v) && std::find(g.inputs.begin(), g.inputs.end(), v) == g.inputs.end())
        g.inputs.push_back(v);
  for (ir::Op* op : g.ops)
    for (ir::Value* r : op->results) {
      bool used_outside = graph.is_output(r);
      for (ir::Op* u : graph.users(r))
        if (std::find(g.ops.begin(), g.ops.end(), u) == g.ops.end()) used_outside = true;
      if (used_outside) g.outputs.push_back(r);
    }
}

std::vector<DispatchGroup> form(const ir::Graph& graph, const TargetLimits* target) {
  std::vector<ir::Op*> ops = graph.ops();
  std::map<const ir::Op*, size_t> position;
  for (size_t i = 0; i < ops.size(); ++i) position[ops[i]] = i;

  std::vector<DispatchGroup> groups;
  std::set<const ir::Op*> claimed;
  if (target != nullptr)
    for (ir::Op* op : ops) {
      if (!is_anchor(op) || claimed.count(op)) continue;
      DispatchGroup g = fuse_around(graph, op, claimed, position, *target);
      claimed.insert(g.ops.begin(), g.ops.end());
      groups.push_back(std::move(g));
    }

  // Walk backwards so each elementwise op (or view) can join the group of its single user.
  std::map<const ir::Op*, int> group_of;
  std::map<int, int64_t> group_numel;  // elementwise groups: elements of the group's result
  int next_group = 0;
  for (size_t i = ops.size(); i-- > 0;) {
    ir::Op* op = ops[i];
    if (op->kind == ir::OpKind::Constant || claimed.count(op)) continue;
    bool view = is_view_op(op->kind);
    int group = -1;
    if ((view || fusible_elementwise(op)) && op->results.size() == 1 && single_internal_use(graph, op->result())) {
      ir::Value* r = op->result();
      ir::Op* user = graph.users(r)[0];
      auto it = group_of.find(user);
      if (it != group_of.end() && group_numel.count(it->second)) {
        int64_t total = group_numel.at(it->second);
        // Into a direct elementwise user, a smaller result is broadcast (recomputed per element);
        // across a view, element indices carry over only when the counts are equal.
        bool ok = is_view_op(user->kind) || view ? r->type.numel() == total
                                                 : r->type.numel() <= user->result()->type.numel();
        if (ok) group = it->second;
      }
    }
    if (group < 0 && view) continue;  // a view outside any group costs nothing
    if (group < 0) {
      group = next_group++;
      if (fusible_elementwise(op)) group_numel[group] = op->result()->type.numel();
    }
    group_of[op] = group;
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
    if (views > 0) g.notes += cat(" through ", views, " reshape view", views > 1 ? "s" : "");
    groups.push_back(std::move(g));
  }
  for (DispatchGroup& g : groups) fill_inputs_outputs(graph, g);
  // Execution order: by the position of each group's last op. Every external input of a group is
  // produced before the op that reads it, hence before the group's last op.
  std::sort(groups.begin(), groups.end(), [&](const DispatchGroup& a, const DispatchGroup& b) {
    return position.at(a.ops.back()) < position.at(b.ops.back());
  });
  return groups;
}

}  // namespace

std::vector<DispatchGroup> form_dispatch_groups(const ir::Graph& graph) { return form(graph, nullptr); }

std::vector<DispatchGroup> form_dispatch_groups(const ir::Graph& graph, const TargetLimits& target) {
  return form(graph, &target);
}

}  // namespace vkc::codegen
