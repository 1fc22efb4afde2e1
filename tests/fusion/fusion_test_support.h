// Shared by the fusion tests: compiling for a named profile and reading what each dispatch holds.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "codegen/compiler.h"
#include "codegen/dispatch_group.h"
#include "common/gpu_harness.h"
#include "common/test_util.h"
#include "ir/graph.h"
#include "ir/text_format.h"
#include "module/target_profiles.h"

namespace vkc::test {

inline ModuleImage compile_for(const ir::Graph& g, const std::string& target) {
  codegen::CompileOptions o;
  o.target = find_target(target).limits;
  return codegen::compile_graph(g, o);
}

// Every dispatch within the target's workgroup-memory, invocation and binding limits.
inline ::testing::AssertionResult within_limits(const ModuleImage& m) {
  const TargetLimits& t = m.manifest.target;
  for (const DispatchDesc& d : m.manifest.dispatches) {
    uint64_t inv = uint64_t(d.workgroup_size[0]) * d.workgroup_size[1] * d.workgroup_size[2];
    if (d.workgroup_memory_bytes > t.max_compute_shared_memory_size || inv > t.max_compute_work_group_invocations ||
        d.bindings.size() > t.max_per_stage_descriptor_storage_buffers)
      return ::testing::AssertionFailure() << t.name << ": " << d.name << " uses " << d.workgroup_memory_bytes
                                           << " bytes, " << inv << " invocations, " << d.bindings.size()
                                           << " bindings";
  }
  return ::testing::AssertionSuccess();
}

// "[a+b] [c]": each dispatch group's ops by node name, in execution order, for IR text formed
// for a named profile (no GPU).
inline std::string groups_of(const std::string& text, const std::string& target = "lavapipe") {
  ir::Graph g = ir::parse_graph(text);
  std::string s;
  for (const codegen::DispatchGroup& d : codegen::form_dispatch_groups(g, find_target(target).limits)) {
    std::string ops;
    for (const ir::Op* op : d.ops) ops += (ops.empty() ? "" : "+") + op->name;
    s += (s.empty() ? "[" : " [") + ops + "]";
  }
  return s;
}

inline std::string all_notes(const ModuleImage& m) {
  std::string s;
  for (const DispatchDesc& d : m.manifest.dispatches) s += d.name + ": " + d.notes + "\n";
  return s;
}

inline ir::Graph fusion_input(const std::string& file) {
  return ir::parse_graph_file(source_path("tests/fusion/" + file));
}

}  // namespace vkc::test
