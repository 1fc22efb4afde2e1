// Shared by the fusion tests: compiling for a named profile and reading what each dispatch holds.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "codegen/compiler.h"
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

inline std::string all_notes(const ModuleImage& m) {
  std::string s;
  for (const DispatchDesc& d : m.manifest.dispatches) s += d.name + ": " + d.notes + "\n";
  return s;
}

inline ir::Graph fusion_input(const std::string& file) {
  return ir::parse_graph_file(source_path("tests/fusion/" + file));
}

}  // namespace vkc::test
