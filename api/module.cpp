// vkc::Module: loading (directory or .vkcm), in-process compilation, saving, and the source graph.
#include <algorithm>
#include <filesystem>
#include <mutex>
#include <optional>

#include "api/compile_in_process.h"
#include "api/impl.h"
#include "api/module_cache.h"
#include "codegen/compiler.h"
#include "ir/interpreter.h"
#include "ir/passes.h"
#include "ir/text_format.h"
#include "module/device_fit.h"
#include "module/module_file.h"
#include "runtime/barrier_plan.h"
#include "support/file_io.h"

namespace vkc {

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& i : items) s += (s.empty() ? "" : ", ") + i;
  return s;
}

TensorInfo info_of(const Manifest& m, const std::string& name) {
  const TensorDesc& t = m.tensor(name);
  return {t.name, t.dtype, t.shape};
}

codegen::CompileOptions compile_options(const Device& device, const CompileOptions& options) {
  codegen::CompileOptions co;
  co.target = resolve_target(options.target, device.impl()->context.get());
  co.precision = parse_precision(options.precision, "CompileOptions::precision");
  return co;
}

}  // namespace

namespace {
Module make_module(ModuleImage image, SourceGraph source, ModuleOrigin origin) {
  auto impl = std::make_shared<Module::Impl>();
  impl->origin = origin;
  impl->image = std::move(image);
  impl->source = std::move(source);
  for (const std::string& n : impl->image.manifest.inputs) impl->inputs.push_back(info_of(impl->image.manifest, n));
  for (const std::string& n : impl->image.manifest.outputs) impl->outputs.push_back(info_of(impl->image.manifest, n));
  return Module(std::move(impl));
}
}  // namespace

Module make_module(ModuleImage image, std::optional<SourceFiles> source, ModuleOrigin origin) {
  return make_module(std::move(image), source ? SourceGraph(std::move(*source)) : SourceGraph(), origin);
}

Module make_module(ModuleImage image, ir::Graph source, ModuleOrigin origin) {
  return make_module(std::move(image), SourceGraph(std::move(source)), origin);
}

Module::Module(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

Module Module::load(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  check(fs::exists(path, ec), path, ": no such module directory or .vkcm file");
  if (fs::is_directory(path, ec)) {
    ModuleImage image = read_module_dir(path);
    return make_module(std::move(image), read_source_dir(path), ModuleOrigin::Loaded);
  }
  check(has_module_file_extension(path) || is_module_file(path), path,
        ": not a module (expected a module directory or a .vkcm file; Module::compile takes .vkir/.onnx)");
  ModuleExtras extras;
  ModuleImage image = read_module_file(path, &extras);
  return make_module(std::move(image), source_from_sections(extras), ModuleOrigin::Loaded);
}

Module Module::load_or_recompile(const std::string& path, const Device& device) {
  try {
    return load(path);
  } catch (const FormatVersionError& refusal) {
    namespace fs = std::filesystem;
    std::error_code ec;
    // The manifest is what was refused, so the constants are read by their usual name: the source's
    // dense_at offsets count through them.
    std::optional<SourceFiles> source;
    std::vector<uint8_t> constants;
    try {
      if (fs::is_directory(path, ec)) {
        source = read_source_dir(path);
        if (fs::exists(path + "/constants.bin", ec)) constants = read_file(path + "/constants.bin");
      } else {
        ModuleExtras sections =
            read_module_file_sections(path, {kSourceGraphFile, kSourceDataFile, "constants.bin"});
        source = source_from_sections(sections);
        constants.assign(sections["constants.bin"].begin(), sections["constants.bin"].end());
      }
    } catch (const Error&) {
      throw refusal;  // a container of another version: its sections cannot be read either
    }
    check(source.has_value(), refusal.what(), " (it carries no source graph, so only vk-compile can)");
    ir::Graph graph = parse_source(*source, constants, path + ":" + kSourceGraphFile);
    ModuleImage image = codegen::compile_graph(graph, compile_options(device, CompileOptions{}));
    return make_module(std::move(image), std::move(graph), ModuleOrigin::Recompiled);
  }
}

Module Module::compile(const std::string& model_path, const Device& device, const CompileOptions& options) {
  ir::Graph graph = load_graph(model_path, {options.input_shapes, options.input_values});
  if (!options.module_cache_dir || options.module_cache_dir->empty()) return compile(graph, device, options);
  // The cache (api/module_cache.h) is keyed by the graph printed with its weights digested. The
  // graph just loaded is the source either way: the entry does not carry it again.
  const std::string digest = ir::print_graph_digest(graph);
  codegen::CompileOptions co = compile_options(device, options);
  std::string entry =
      module_cache_path(*options.module_cache_dir, digest, co.target, options.target, co.precision, device);
  if (std::optional<ModuleImage> cached = module_cache_load(entry, digest))
    return make_module(std::move(*cached), std::move(graph), ModuleOrigin::Cached);
  ModuleImage image = codegen::compile_graph(graph, co);
  module_cache_store(entry, image, digest);
  return make_module(std::move(image), std::move(graph), ModuleOrigin::Compiled);
}

Module Module::compile(const ir::Graph& graph, const Device& device, const CompileOptions& options) {
  return make_module(codegen::compile_graph(graph, compile_options(device, options)), graph.clone(),
                     ModuleOrigin::Compiled);
}

void Module::save(const std::string& path) const { write_module_with_source(path, impl_->image, impl_->source); }

const std::vector<TensorInfo>& Module::inputs() const { return impl_->inputs; }
const std::vector<TensorInfo>& Module::outputs() const { return impl_->outputs; }

const TensorInfo& Module::input(const std::string& name) const {
  for (const TensorInfo& t : impl_->inputs)
    if (t.name == name) return t;
  throw Error(cat("the module has no input named '", name, "' (its inputs are: ",
                  join(impl_->image.manifest.inputs), ")"));
}

ModuleOrigin Module::origin() const { return impl_->origin; }
std::string Module::target() const { return impl_->image.manifest.target.name; }
std::string Module::precision() const { return precision_name(impl_->image.manifest.precision); }
size_t Module::dispatch_count() const { return impl_->image.manifest.dispatches.size(); }
uint64_t Module::arena_bytes() const { return impl_->image.manifest.arena_bytes; }
size_t Module::barrier_count() const {
  std::vector<bool> b = rt::plan_barriers(impl_->image.manifest);
  return size_t(std::count(b.begin(), b.end(), true));
}
// As written by save(): with each .spv's content hash, so a compiled module and the same module
// loaded back print the same manifest.
std::string Module::manifest_json() const { return manifest_to_json(manifest_with_spirv_hashes(impl_->image)); }
std::string Module::report() const { return codegen::format_report(impl_->image.manifest); }

std::vector<std::string> Module::unmet_limits(const Device& device) const {
  // Same check as rt::Program: what the dispatches use, not the profile they were planned for.
  return unmet_usage(impl_->image, device.impl()->context->limits());
}

bool Module::has_source() const { return impl_->source.present(); }

Module Module::recompile_for(const Device& device) const {
  check(has_source(), "module for target '", target(), "' carries no source graph (source.vkir) to recompile");
  ir::Graph graph = impl_->source.graph(impl_->image);
  CompileOptions same;  // recompiled in the precision it was compiled in
  same.precision = precision();
  return compile(graph, device, same);
}

std::map<std::string, HostTensor> Module::reference(const std::map<std::string, HostTensor>& inputs) const {
  check(has_source(), "the reference needs the module's source graph (source.vkir), which it does not carry");
  ir::Graph graph = impl_->source.graph(impl_->image);
  // A QDQ conv or matmul means ONNX Runtime's integer semantics (docs/int8.md): the reference takes
  // the same rewrite as the compiler, so that it checks the kernels, not the two roundings' 1-ulp gaps.
  ir::PassManager pm;
  pm.add(ir::qdq_to_integer_pass());
  pm.run(graph);
  return ir::interpret(graph, inputs);
}

}  // namespace vkc
