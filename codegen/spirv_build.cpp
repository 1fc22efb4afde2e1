#include "codegen/spirv_build.h"

#include <exception>
#include <map>
#include <utility>

#include "codegen/glsl_compiler.h"
#include "codegen/spirv_cache.h"
#include "codegen/spirv_coopmat_khr.h"
#include "codegen/spirv_tools.h"
#include "support/error.h"
#include "support/parallel_for.h"

namespace vkc::codegen {
namespace {

bool optimized(const EmittedKernel& k, const CompileOptions& o) { return o.optimize_spirv && k.optimize_spirv; }

std::string cache_key(const EmittedKernel& k, const CompileOptions& o) {
  return SpirvCache::key(k.glsl, o.target, optimized(k, o)) + (k.cooperative_matrix_khr ? "|khr" : "");
}

}  // namespace

std::vector<uint32_t> build_spirv(const EmittedKernel& k, const std::string& name, const CompileOptions& o) {
  // Identical kernels compile once per process; the checks below still run.
  const std::string key = cache_key(k, o);
  std::vector<uint32_t> words;
  if (auto hit = SpirvCache::process().find(key)) {
    words = std::move(*hit);
  } else {
    words = compile_glsl(k.glsl, name, o.target);
    if (optimized(k, o)) words = optimize_spirv(words, o.target, name);
    validate_spirv(words, o.target, name);
    // SPIRV-Tools 2023.1 can neither optimize nor validate the KHR form: rewrite what it checked.
    if (k.cooperative_matrix_khr) words = cooperative_matrix_nv_to_khr(words, name);
    SpirvCache::process().insert(key, words);
  }
  std::vector<std::pair<uint32_t, uint32_t>> spec;
  for (const SpecConstant& s : k.spec_constants) spec.push_back({s.id, s.value});
  uint32_t measured = measure_workgroup_memory(words, spec);
  check(measured == k.workgroup_memory_bytes, "internal: kernel '", name, "' declares ", measured,
        " bytes of workgroup memory in its SPIR-V but its plan says ", k.workgroup_memory_bytes);
  std::array<uint32_t, 3> local = read_local_size(words, spec);
  check(local == k.workgroup_size, "internal: kernel '", name, "' local size ", local[0], "x",
        local[1], "x", local[2], " differs from its plan");
  return words;
}

std::vector<std::vector<uint32_t>> build_spirv_all(const std::vector<const EmittedKernel*>& kernels,
                                                   const std::vector<std::string>& names, const CompileOptions& o) {
  check(kernels.size() == names.size(), "internal: build_spirv_all given ", kernels.size(), " kernels and ",
        names.size(), " names");
  std::vector<std::vector<uint32_t>> words(kernels.size());
  // The first kernel of each distinct text (its "leader") compiles on a worker; the others then
  // find it in the cache, in order, as they would have one after the other.
  std::vector<size_t> leaders;
  {
    std::map<std::string, size_t> first;
    for (size_t i = 0; i < kernels.size(); ++i)
      if (first.emplace(cache_key(*kernels[i], o), i).second) leaders.push_back(i);
  }
  // Errors are kept and rethrown in kernel order below (a follower with the same text but other
  // spec constants can fail its check before a later leader fails).
  std::vector<std::exception_ptr> errors(kernels.size());
  parallel_for(leaders.size(), compile_threads(), [&](size_t n) {
    const size_t i = leaders[n];
    try {
      words[i] = build_spirv(*kernels[i], names[i], o);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  });
  std::vector<char> leader(kernels.size(), 0);
  for (size_t i : leaders) leader[i] = 1;
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (errors[i]) std::rethrow_exception(errors[i]);
    if (!leader[i]) words[i] = build_spirv(*kernels[i], names[i], o);
  }
  return words;
}

}  // namespace vkc::codegen
