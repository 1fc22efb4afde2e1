// The order in which a module's dispatches are recorded, chosen so that independent dispatches run
// between the same two barriers.
//
// Why: the runtime puts a compute->compute barrier before a dispatch that touches bytes an earlier
// one since the last barrier wrote (runtime/barrier_plan.h), and each barrier drains the GPU. In
// graph order a branchy block (Inception's four towers, a fire module, attention's q/k/v) records
// one tower after the other, so nearly every dispatch waits for the previous one: on an H200 at
// batch 1, googlenet recorded 96 barriers for 106 dispatches and inception_v3 176 for 186, while
// dispatches that may overlap fill the GPU that one small kernel leaves idle. Recorded by level
// they need 42 and 89 barriers, and ran in 0.70 and 1.38 ms instead of 1.12 and 1.80 (batch 32:
// -13% and -7%; bench/RESULTS.md, session 22).
//
// How: each dispatch gets a level, one more than the highest level of the dispatches it depends on
// (it reads bytes they write, or writes bytes they read or write), 0 for none; dispatches are
// recorded by level, in graph order within a level. Only the bindings' byte ranges decide, the
// same rule the runtime's barrier plan applies, so any order this produces is one the runtime
// orders correctly. Intermediates used in one level get disjoint arena bytes (arena_live_ranges),
// so the arena's reuse adds no barrier inside a level: each level then starts with one barrier.
// That costs arena bytes; the compiler keeps graph order where the level order saves few barriers
// or would need much more arena (codegen/compiler.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/storage_plan.h"
#include "module/manifest.h"

namespace vkc::codegen {

// For the dispatches of `m` in their current order, from the byte ranges of their bindings before
// the arena is placed (every intermediate its own storage):
struct DispatchDependencies {
  std::vector<int> level;        // level[i] as above
  int graph_order_barriers = 0;  // the barriers the current order needs (runtime/barrier_plan.h's
                                 // rule, leaving out those the arena's reuse adds)
};
DispatchDependencies dispatch_dependencies(const Manifest& m);
std::vector<int> dispatch_levels(const Manifest& m);  // dispatch_dependencies(m).level

// The order by (level, current index): order[k] = the dispatch recorded k-th.
std::vector<int> order_by_level(const std::vector<int>& level);

// The arena intermediates' live ranges if the dispatches were recorded in `order` with `level`
// (order_by_level; a level per dispatch, in the manifest's current indexing): over recording
// positions, from the start of the level of a tensor's first use to the end of the level of its
// last, so that no two tensors used in one level share bytes. Graph order with every dispatch its
// own level (level[i] = i) gives plain first-to-last use ranges.
std::vector<LiveRange> arena_live_ranges(const Manifest& m, const std::vector<int>& order, const std::vector<int>& level);

// Reorders image.manifest.dispatches by `order` and renames them ("d<k>_<kernel>", their .spv
// files with them), so that names keep counting in recording order.
void apply_dispatch_order(ModuleImage& image, const std::vector<int>& order);

}  // namespace vkc::codegen
