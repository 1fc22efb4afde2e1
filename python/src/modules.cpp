// vkc.Module: a compiled model (vkc::Module), compiled from a .onnx/.vkir file or loaded from a
// .vkcm file or module directory; saved with save(), described by report() (vk-compile --report);
// and an ONNX model's metadata (onnx/importer.h), for InferenceSession.get_modelmeta().
#include "python/src/bindings.h"

#include <pybind11/stl.h>

#include "onnx/importer.h"
#include "python/src/arrays.h"
#include "vkc/module.h"

namespace vkc::python {

namespace {

py::list tensor_list(const std::vector<TensorInfo>& tensors) {
  py::list out;
  for (const TensorInfo& t : tensors) out.append(py::make_tuple(t.name, onnx_type_string(t.dtype), t.shape));
  return out;
}

}  // namespace

void register_modules(py::module_& m) {
  py::class_<Module>(m, "Module", "A compiled model (docs/module-format.md).")
      .def_property_readonly("inputs", [](const Module& mod) { return tensor_list(mod.inputs()); },
                             "(name, type, shape) of each input")
      .def_property_readonly("outputs", [](const Module& mod) { return tensor_list(mod.outputs()); },
                             "(name, type, shape) of each output")
      .def_property_readonly("target", &Module::target)
      .def_property_readonly("precision", &Module::precision)
      .def_property_readonly("dispatch_count", &Module::dispatch_count)
      .def_property_readonly("barrier_count", &Module::barrier_count,
                             "compute barriers recorded between the dispatches (vk-run prints it too)")
      .def_property_readonly("arena_bytes", &Module::arena_bytes, "device memory for intermediates")
      .def("manifest_json", &Module::manifest_json)
      .def("report", &Module::report, "vk-compile --report's table: one row per dispatch")
      .def("reference", [](const Module& mod, py::dict inputs) {
        // The source graph on vkc's float64 reference interpreter (what vk-run --check compares
        // with): inputs by name, outputs by name, each rounded to its element type.
        HostInputs held;
        std::map<std::string, HostTensor> in;
        for (auto [name, value] : inputs) {
          const std::string key = py::str(name);
          in.emplace(key, held.add(key, value, "").copy());
        }
        std::map<std::string, HostTensor> out;
        {
          py::gil_scoped_release unlocked;
          out = mod.reference(in);
        }
        py::dict result;
        for (auto& [name, t] : out) result[py::str(name)] = to_numpy(std::move(t));
        return result;
      }, py::arg("inputs"), "The float64 reference interpreter's outputs for these inputs (by name).")
      .def("save", [](const Module& mod, const std::string& path) {
        py::gil_scoped_release unlocked;
        mod.save(path);
      }, py::arg("path"), "Writes a .vkcm file (path ending in .vkcm) or a module directory.");

  m.def("read_model_metadata", [](const std::string& path) {
    onnx::ModelMetadata md;
    {
      py::gil_scoped_release unlocked;
      md = onnx::read_model_metadata(path);
    }
    py::dict d;
    d["producer_name"] = md.producer_name;
    d["producer_version"] = md.producer_version;
    d["domain"] = md.domain;
    d["description"] = md.description;
    d["graph_name"] = md.graph_name;
    d["graph_description"] = md.graph_description;
    d["version"] = md.version;
    d["custom_metadata_map"] = md.custom;
    return d;
  }, py::arg("path"), "An ONNX model's metadata (producer, domain, graph name, metadata_props, ...).");

  m.def("load_module", [](const std::string& path) {
    py::gil_scoped_release unlocked;
    return Module::load(path);
  }, py::arg("path"), "Loads a .vkcm file or a module directory.");

  m.def("compile_module",
        [](const std::string& model_path, const std::string& device, const std::string& target,
           const std::string& precision, const std::map<std::string, Shape>& input_shapes) {
          py::gil_scoped_release unlocked;
          DeviceOptions dopts;
          dopts.select = device;
          Device dev(dopts);
          CompileOptions co;
          co.target = target;
          co.precision = precision;
          co.input_shapes = input_shapes;
          return Module::compile(model_path, dev, co);
        },
        py::arg("model_path"), py::arg("device") = "", py::arg("target") = "host", py::arg("precision") = "fp32",
        py::arg("input_shapes") = std::map<std::string, Shape>{},
        "Compiles a .onnx or .vkir file for a device (or a named target).");
}

}  // namespace vkc::python
