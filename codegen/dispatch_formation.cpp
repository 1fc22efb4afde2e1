#include <algorithm>
#include <map>
#include <set>

#include "codegen/dispatch_group.h"

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
  // Quantize/dequantize change element types and need byte-packed storage; they join fusion when
  // their kernels land. Everything else elementwise is fused freely.
  return ir::is_elementwise(op->kind) && op->kind != ir::OpKind::Quantize &&
         op->kind != ir::OpKind::Dequantize;
}

}  // namespace

std::vector<DispatchGroup> form_dispatch_groups(const ir::Graph& graph) {
  std::vector<ir::Op*> ops = graph.ops();
  std::map<const ir::Op*, size_t> position;
  for (size_t i = 0; i < ops.size(); ++i) position[ops[i]] = i;

  // Walk backwards so each elementwise op can join the group of its single elementwise user.
  std::map<const ir::Op*, int> group_of;
  int next_group = 0;
  for (size_t i = ops.size(); i-- > 0;) {
    ir::Op* op = ops[i];
    if (op->kind == ir::OpKind::Constant || is_view_op(op->kind)) continue;
    int group = -1;
    if (fusible_elementwise(op) && op->results.size() == 1) {
      ir::Value* r = op->result();
      std::vector<ir::Op*> users = graph.users(r);
      if (users.size() == 1 && !graph.is_output(r) && fusible_elementwise(users[0]) &&
          r->type.numel() <= users[0]->result()->type.numel())
        group = group_of.at(users[0]);
    }
    group_of[op] = group >= 0 ? group : next_group++;
  }

  std::map<int, DispatchGroup> by_id;
  for (ir::Op* op : ops) {
    auto it = group_of.find(op);
    if (it == group_of.end()) continue;
    by_id[it->second].ops.push_back(op);
  }

  std::vector<DispatchGroup> groups;
  for (auto& [id, g] : by_id) {
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
    g.anchor = g.ops.back();
    for (ir::Op* op : g.ops)
      if (!fusible_elementwise(op)) g.anchor = op;
    if (g.ops.size() > 1) g.notes = "fused " + std::to_string(g.ops.size()) + " elementwise ops";
    groups.push_back(std::move(g));
  }
  // Execution order: by the position of each group's last op. Every external input of a group is
  // produced before its first op, so running the whole group there is valid.
  std::sort(groups.begin(), groups.end(), [&](const DispatchGroup& a, const DispatchGroup& b) {
    return position.at(a.ops.back()) < position.at(b.ops.back());
  });
  return groups;
}

}  // namespace vkc::codegen
