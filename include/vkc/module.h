// vkc::Module: a compiled model (the module format of docs/module-format.md), loaded from a module
// directory or a single .vkcm file, or compiled in process from a .vkir/.onnx file or an IR graph.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vkc/device.h"
#include "vkc/tensor.h"

namespace vkc {

namespace ir {
class Graph;  // the tensor IR (vkc/graph.h); only needed to compile from a graph built in C++
}

struct TensorInfo {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;
};

struct CompileOptions {
  // "host" (the device passed to compile), or a profile: "lavapipe", "nvidia", "amd-rdna3",
  // "amd-cdna3", "intel-xe", "vulkan-min" (no device needed for those, pass any Device).
  std::string target = "host";
  // Pins dynamic ONNX input dims by input name.
  std::map<std::string, Shape> input_shapes;
  // Binds ONNX graph inputs to values: they become constants of the module, not inputs. For inputs
  // that decide shapes (a Reshape's shape, TopK's K); vkc::ModelSession fills it at first use.
  std::map<std::string, HostTensor> input_values;
  // "fp32" (the model's dtypes) or "fp16": f32 activations and weights stored as f16, sums in f32;
  // softmax, normalizations, reductions, exp/log and sort keys stay f32; inputs and outputs keep
  // the model's dtype. Expect max abs error / max abs output <= 5e-3 (docs/api.md, "Precision").
  std::string precision = "fp32";
  // Compiling from a file only: a directory of compiled modules (usually cache_dir("modules")).
  // A module compiled earlier from the same graph with the same options, for the same device, by
  // the same vkc build is loaded from there instead of compiled; a new one is stored. Unset or
  // "": no cache. (A new option here must go into the cache key: api/module_cache.cpp.)
  std::optional<std::string> module_cache_dir;
};

// The directory of one kind of vkc's on-disk caches ("pipelines", "modules"):
// $VKC_CACHE_DIR/KIND, else $XDG_CACHE_HOME/vkc/KIND, else ~/.cache/vkc/KIND; "" when none of
// those variables is set. docs/api.md describes the caches. (Defined with module/cache_dir.h.)
std::string cache_dir(const std::string& kind);

// How a Module came to be (vk-run says which).
enum class ModuleOrigin {
  Loaded,      // Module::load
  Compiled,    // Module::compile
  Cached,      // Module::compile, found in CompileOptions::module_cache_dir
  Recompiled,  // Module::load_or_recompile, from the source graph of a module of another format
};

// An immutable handle: copies share the compiled content.
class Module {
 public:
  // A module directory (manifest.json, *.spv, constants) or a .vkcm file. Unknown format versions
  // and malformed files are refused with a one-line vkc::Error naming the file and the problem.
  static Module load(const std::string& path);
  // As load(), but a module written by a vkc of another format version that carries its source
  // graph is recompiled for `device` from it (vk-run --recompile) instead of refused.
  static Module load_or_recompile(const std::string& path, const Device& device);
  // Compiles a .vkir or .onnx file for `device` (or options.target).
  static Module compile(const std::string& model_path, const Device& device, const CompileOptions& options = {});
  static Module compile(const ir::Graph& graph, const Device& device, const CompileOptions& options = {});

  // Writes a .vkcm file when `path` ends in ".vkcm", else a module directory. The source graph,
  // when the module has one, travels along (source.vkir).
  void save(const std::string& path) const;

  const std::vector<TensorInfo>& inputs() const;
  const std::vector<TensorInfo>& outputs() const;
  const TensorInfo& input(const std::string& name) const;  // throws naming the known inputs
  std::string target() const;     // the profile it was planned for ("host" for a live device)
  // "fp32" or "fp16": the precision it was compiled in (CompileOptions::precision).
  std::string precision() const;
  size_t dispatch_count() const;
  // Compute->compute barriers recorded between the dispatches: one wherever a dispatch touches
  // bytes that one since the last barrier wrote, or writes bytes that one read (runtime/barrier_plan.h).
  size_t barrier_count() const;
  // Device memory for intermediates (one arena whose bytes are reused once a tensor is dead).
  uint64_t arena_bytes() const;
  std::string manifest_json() const;
  // vk-compile --report's table: one row per dispatch (the ops it holds, strategy, workgroup
  // size, grid, bytes and FLOPs).
  std::string report() const;
  ModuleOrigin origin() const;

  // Each way in which the module's dispatches use more than `device` offers (workgroup memory,
  // invocations, grid, bindings, binding ranges, push constants, subgroup size, SPIR-V version,
  // features), one line each naming the dispatch and both numbers; empty when it can run there.
  // Judged by what the module uses, not by the profile it was compiled for.
  std::vector<std::string> unmet_limits(const Device& device) const;

  // The source graph (source.vkir) travels with modules written by vk-compile and Module::save.
  bool has_source() const;
  // Recompiles the source graph for `device` (target "host"); throws when there is no source.
  Module recompile_for(const Device& device) const;
  // Runs the source graph on the float64 reference interpreter (to check device results).
  std::map<std::string, HostTensor> reference(const std::map<std::string, HostTensor>& inputs) const;

  struct Impl;
  const std::shared_ptr<const Impl>& impl() const { return impl_; }
  explicit Module(std::shared_ptr<const Impl> impl);

 private:
  std::shared_ptr<const Impl> impl_;
};

}  // namespace vkc
