// Named graph passes. After each pass that changed the graph the verifier runs (when enabled:
// always in tests and debug builds) and a failure names the pass that broke the IR.
#pragma once

#include <functional>
#include <iosfwd>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace vkc::ir {

struct Pass {
  std::string name;
  std::string description;
  // Returns true when it changed the graph.
  std::function<bool(Graph&)> run;
};

// The loop of the passes that rewrite one op at a time: tries `rewrite` on each op of `kind` in
// graph order and, after a rewrite (which changes the op list), starts over, until none applies.
// Returns whether any did.
bool rewrite_each(Graph& g, OpKind kind, const std::function<bool(Graph&, Op*)>& rewrite);

struct PassManagerOptions {
  bool verify_each = true;
  bool print_after_all = false;
  std::set<std::string> print_after;  // pass names
  std::ostream* print_stream = nullptr;  // default std::cerr
};

class PassManager {
 public:
  explicit PassManager(PassManagerOptions options = {}) : options_(std::move(options)) {}
  void add(Pass pass) { passes_.push_back(std::move(pass)); }
  // Runs every pass in order. Throws vkc::Error "pass 'NAME' produced invalid IR: <verifier msg>".
  void run(Graph& graph) const;
  const std::vector<Pass>& passes() const { return passes_; }

 private:
  PassManagerOptions options_;
  std::vector<Pass> passes_;
};

}  // namespace vkc::ir
