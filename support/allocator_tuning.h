// glibc malloc settings for a process that compiles kernels: what vkc's command-line tools set at
// start. spirv-opt's redundancy elimination copies a std::map per dominator-tree block, so
// compiling a transformer is tens of millions of small allocations and frees. With glibc's
// defaults those cost the fastbins' repeated consolidation and, worse, memory handed back to the
// kernel after each kernel and faulted in again for the next (compile threads' arenas give up
// whole 64 MiB heaps). Measured on a 12-layer BERT-style encoder (docs/api.md, "Compile time").
//
// A process-wide setting, so the library never applies it on its own: an application that
// compiles large models can call this too, or set the same through GLIBC_TUNABLES.
#pragma once

namespace vkc {

// Turns off fastbins, keeps up to 1 GiB of freed memory instead of returning it to the kernel,
// and keeps 64 MiB at the top of each arena. Does nothing where malloc is not glibc's, or when
// the environment's GLIBC_TUNABLES already sets malloc tunables (the user's choice wins).
// Returns whether it changed anything.
bool tune_allocator_for_compiling();

}  // namespace vkc
