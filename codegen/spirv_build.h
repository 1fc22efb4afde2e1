// A kernel's GLSL to checked SPIR-V (glslang, spirv-opt, the validator, the KHR cooperative-matrix
// rewrite), and the same for all of a module's kernels on several threads: glslang and spirv-opt
// are most of vkc's compile time (a 12-layer BERT-base took 32-99 s on one core of the H200's
// host), and distinct kernels compile independently.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/compiler.h"
#include "codegen/kernel.h"

namespace vkc::codegen {

// SPIR-V for one kernel, through the process cache (codegen/spirv_cache.h); the measured workgroup
// memory and local size are checked against the kernel's plan on every call, hit or not.
std::vector<uint32_t> build_spirv(const EmittedKernel& k, const std::string& name, const CompileOptions& o);

// build_spirv for each kernel (names[i] is kernels[i]'s dispatch name): the first of each distinct
// kernel on its own thread, up to compile_threads() (support/parallel_for.h) at a time. The words,
// the cache's hit and miss counts and the error thrown (the first failing kernel's, in kernel
// order) are those of calling build_spirv on each in order.
std::vector<std::vector<uint32_t>> build_spirv_all(const std::vector<const EmittedKernel*>& kernels,
                                                   const std::vector<std::string>& names, const CompileOptions& o);

}  // namespace vkc::codegen
