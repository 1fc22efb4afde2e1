// The compiled-module cache: modules compiled from model files, kept in <cache root>/modules
// (module/cache_dir.h) so that a later process compiling the same model with the same options for
// the same device loads the module instead of compiling it (vk-run model.onnx).
//
// The key hashes everything the compiled module depends on: the graph as loaded (its printed IR
// with large tensors as digests of their bytes, ir::print_graph_digest, which covers the model
// file's content, ONNX external data and pinned input shapes), the resolved
// target limits (for target "host", the live device's, plus the device and driver identity of
// runtime/pipeline_cache.h: vendor, device, driver version, pipelineCacheUUID), the precision,
// the module format version, vkc's version and the identity of the binary holding the compiler
// (its size and modification time: a rebuilt vkc of the same version does not reuse entries).
// Each entry is a .vkcm that carries that digest text; a hit must hold exactly the same digest text
// (so a collision of the key's hash is a miss; printing the weights in full for the key cost
// resnet50-sized models seconds), and an entry that fails to load is ignored and rewritten. An
// entry does not carry its source graph: whoever looks it up has just loaded that graph (the
// Module keeps it, api/impl.h). Entries once carried it as text, twice the weights' bytes: a
// ViT-B/16 entry was about 1 GB and took most of a cache hit's 7.7 s to read back (H200 host).
#pragma once

#include <optional>
#include <string>

#include "ir/graph.h"
#include "module/manifest.h"
#include "vkc/vkc.h"

namespace vkc {

// The entry's path, <dir>/<key>.vkcm, for compiling the graph whose print_graph_digest is
// `graph_digest` for `target` (the resolved limits of the profile or device `target_name`) in
// `precision` on `device`.
std::string module_cache_path(const std::string& dir, const std::string& graph_digest,
                                    const TargetLimits& target, const std::string& target_name,
                                    Precision precision, const Device& device);

// The cached module, or nullopt when there is none or it fails any check (a damaged entry, or
// one written for another graph).
std::optional<ModuleImage> module_cache_load(const std::string& path, const std::string& graph_digest);

// Stores a module with the digest text of its graph, atomically; file-system errors are ignored.
void module_cache_store(const std::string& path, const ModuleImage& image, const std::string& graph_digest);

}  // namespace vkc
