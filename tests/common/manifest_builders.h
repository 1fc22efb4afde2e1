// Hand-made manifest pieces for tests of the logic that reads dispatches' bindings (the runtime's
// barrier plan, codegen's dispatch levels) without compiling a graph. Header-only: only suites
// that link vkc_module include it.
#pragma once

#include <string>
#include <vector>

#include "module/manifest.h"

namespace vkc::test {

// A dispatch binding `reads` (read-only) and then `write` (written), in binding order.
inline DispatchDesc dispatch_rw(const std::string& name, const std::vector<std::string>& reads, const std::string& write) {
  DispatchDesc d;
  d.name = name;
  d.kernel = name;
  uint32_t b = 0;
  for (const std::string& r : reads) d.bindings.push_back({b++, r, false});
  d.bindings.push_back({b, write, true});
  return d;
}

}  // namespace vkc::test
