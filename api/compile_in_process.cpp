#include "api/compile_in_process.h"

#include "ir/text_format.h"
#include "module/target_profiles.h"
#include "onnx/importer.h"
#include "support/error.h"

namespace vkc {

ir::Graph load_graph(const std::string& path, const LoadOptions& options) {
  auto ends_with = [&](const char* ext) {
    std::string e(ext);
    return path.size() >= e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0;
  };
  if (ends_with(".onnx")) return onnx::import_model(path, {options.input_shapes, options.input_values});
  check(options.input_shapes.empty(), path, ": --input-shape applies to ONNX models only");
  check(options.input_values.empty(), path, ": input values bound at compile time apply to ONNX models only");
  check(ends_with(".vkir"), path, ": unknown input format (expected .vkir or .onnx)");
  return ir::parse_graph_file(path);
}

TargetLimits resolve_target(const std::string& name, const rt::Context* device_context) {
  if (name == "host") {
    check(device_context != nullptr, "target 'host' needs a Vulkan device");
    return device_context->compile_limits();
  }
  return find_target(name).limits;
}

ModuleImage compile_for_device(const ir::Graph& graph, const rt::Context& context,
                               const ir::PassManagerOptions& passes, Precision precision) {
  codegen::CompileOptions options;
  options.target = context.compile_limits();
  options.passes = passes;
  options.precision = precision;
  return codegen::compile_graph(graph, options);
}

}  // namespace vkc
