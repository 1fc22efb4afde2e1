// The one directory that holds every on-disk cache of vkc, one sub-directory per kind:
//
//   <root>/pipelines/  driver pipeline caches (runtime/pipeline_cache.h)
//   <root>/modules/    modules compiled from model files (api/module_cache.h, vk-run)
//   <root>/gate/       the cooperative-matrix gate's verdicts (runtime/cooperative_matrix_gate.h)
//
// <root> is $VKC_CACHE_DIR, else $XDG_CACHE_HOME/vkc, else $HOME/.cache/vkc. Each kind's keys
// include vkc's version (support/version.h), and, where an entry depends on the driver, the
// device and driver identity, so an upgrade of either never reuses a stale entry. Entries are
// written through a temporary file and a rename (two processes never see half an entry), and a
// reader ignores, then rewrites, an entry that fails its checks. Here rather than in runtime/ so
// that the runtime and the API (which compiles) share it without the runtime linking a compiler.
#pragma once

#include <cstddef>
#include <string>

namespace vkc {

inline constexpr const char* kPipelineCacheKind = "pipelines";
inline constexpr const char* kModuleCacheKind = "modules";
inline constexpr const char* kGateCacheKind = "gate";

// The cache root as described above; "" when none of the three variables is set.
std::string cache_root();
// cache_root() + "/" + kind; "" when there is no root.
std::string cache_dir(const std::string& kind);

// Writes `size` bytes to `path` (creating its directory) through a temporary file in the same
// directory and a rename, so a concurrent reader sees the old entry or the new one, never part of
// one. Returns false on any file-system error: a cache only saves time, so callers go on.
bool write_cache_file(const std::string& path, const void* data, size_t size);

}  // namespace vkc
