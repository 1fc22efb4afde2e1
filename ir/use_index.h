// Who uses each value, indexed once: Graph::users() scans every op, so code that asks for many
// values (dispatch formation asks for every op's result) builds this instead and stays linear.
//
// A snapshot: it does not follow later edits of the graph (passes that rewrite use the Graph's own
// queries or rebuild it).
#pragma once

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"

namespace vkc::ir {

class UseIndex {
 public:
  explicit UseIndex(const Graph& graph);

  // Same answers as Graph::users / is_output / has_uses at the time of construction.
  const std::vector<Op*>& users(const Value* v) const;
  bool is_output(const Value* v) const { return outputs_.count(v) != 0; }
  bool has_uses(const Value* v) const { return !users(v).empty() || is_output(v); }

 private:
  std::unordered_map<const Value*, std::vector<Op*>> users_;
  std::unordered_set<const Value*> outputs_;
};

}  // namespace vkc::ir
