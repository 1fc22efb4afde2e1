#include "ir/pass_manager.h"

#include <iostream>

#include "ir/text_format.h"
#include "ir/verifier.h"
#include "support/error.h"

namespace vkc::ir {

bool rewrite_each(Graph& g, OpKind kind, const std::function<bool(Graph&, Op*)>& rewrite) {
  bool changed_any = false;
  for (bool changed = true; changed;) {
    changed = false;
    for (Op* op : g.ops())
      if (op->kind == kind && rewrite(g, op)) {
        changed = changed_any = true;
        break;
      }
  }
  return changed_any;
}


void PassManager::run(Graph& graph) const {
  std::ostream& out = options_.print_stream ? *options_.print_stream : std::cerr;
  for (const Pass& pass : passes_) {
    // A pass that reports no change left the graph as it was verified (by the caller or after
    // the pass before), so verifying it again would only add a full walk per pass.
    const bool changed = pass.run(graph);
    if (options_.verify_each && changed) {
      try {
        verify_graph(graph);
      } catch (const Error& e) {
        throw Error(cat("pass '", pass.name, "' produced invalid IR: ", e.what()));
      }
    }
    if (options_.print_after_all || options_.print_after.count(pass.name)) {
      out << "// ----- IR after " << pass.name << " -----\n" << print_graph(graph);
    }
  }
}

}  // namespace vkc::ir
