// vkc::Module: a compiled model (the module format of docs/module-format.md), loaded from a module
// directory or a single .vkcm file, or compiled in process from a .vkir/.onnx file or an IR graph.
#pragma once

#include <map>
#include <memory>
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
};

// An immutable handle: copies share the compiled content.
class Module {
 public:
  // A module directory (manifest.json, *.spv, constants) or a .vkcm file. Unknown format versions
  // and malformed files are refused with a one-line vkc::Error naming the file and the problem.
  static Module load(const std::string& path);
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
  size_t dispatch_count() const;
  std::string manifest_json() const;

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
