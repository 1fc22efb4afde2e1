// Loading a model and compiling it in process: the steps that Module::compile (so vk-run),
// vk-compile and vk-conformance share, over the importers, codegen and the runtime. Not part of
// the public API (include/vkc/).
#pragma once

#include <map>
#include <string>

#include "codegen/compiler.h"
#include "ir/graph.h"
#include "runtime/runtime.h"

namespace vkc {

struct LoadOptions {
  std::map<std::string, Shape> input_shapes;  // pins dynamic ONNX input dims by input name
  std::map<std::string, HostTensor> input_values = {};  // binds ONNX graph inputs to values (constants)
};

// Loads a graph from a .vkir text file or an .onnx model, by extension. Errors name the file.
// The graph is verified.
ir::Graph load_graph(const std::string& path, const LoadOptions& options = {});

// A target by profile name or alias; "host" means the limits of `device_context`'s device (which
// must then be non-null).
TargetLimits resolve_target(const std::string& name, const rt::Context* device_context);

// Compiles for the context's device and loads the result: the in-process path of vk-run.
ModuleImage compile_for_device(const ir::Graph& graph, const rt::Context& context,
                               const ir::PassManagerOptions& passes = {}, Precision precision = Precision::fp32);

}  // namespace vkc
