#include "ir/passes.h"

namespace vkc::ir {

Pass dead_code_elimination_pass() {
  return {"dce", "remove ops whose results are unused",
          [](Graph& g) { return g.remove_dead_ops() > 0; }};
}

}  // namespace vkc::ir
