// vkc._vkc.Session: a model on a device, run with numpy inputs. Over vkc::ModelSession for
// .onnx/.vkir files (symbolic dims: a specialization per input shapes, compiled at first use) and
// vkc::Session for compiled modules. Runs are serialized by the session's mutex (taken with the
// GIL released, so other Python threads go on meanwhile); the GIL is released during compilation
// and GPU work. Host inputs are uploaded straight from the arrays' memory (arrays.h).
#include <pybind11/stl.h>

#include <chrono>
#include <mutex>
#include <optional>

#include "python/src/arrays.h"
#include "python/src/bindings.h"
#include "vkc/vkc.h"

namespace vkc::python {

namespace {

struct SessionConfig {
  std::string target = "host";   // CompileOptions::target
  std::string precision = "fp32";
  std::optional<std::string> module_cache_dir;
};

std::vector<ModelInputInfo> static_infos(const std::vector<TensorInfo>& tensors) {
  std::vector<ModelInputInfo> out;
  for (const TensorInfo& t : tensors) {
    ModelInputInfo info{t.name, t.dtype, true, {}};
    for (int64_t d : t.shape) info.dims.push_back({d, ""});
    out.push_back(std::move(info));
  }
  return out;
}

// (name, type string, shape) with symbolic dims as strings and unknown ones as None; shape None
// when the model declares none.
py::list describe(const std::vector<ModelInputInfo>& values) {
  py::list out;
  for (const ModelInputInfo& v : values) {
    py::object shape = py::none();
    if (v.has_shape) {
      py::list dims;
      for (const ModelDim& d : v.dims) {
        if (d.value >= 0) dims.append(d.value);
        else if (!d.symbol.empty()) dims.append(d.symbol);
        else dims.append(py::none());
      }
      shape = std::move(dims);
    }
    out.append(py::make_tuple(v.name, v.has_dtype ? onnx_type_string(v.dtype) : std::string("tensor(undefined)"), shape));
  }
  return out;
}

class PySession {
 public:
  PySession(const std::string& path, const Device& device, const SessionConfig& c) : device_(device) {
    const bool is_model = path.size() > 5 && (path.ends_with(".onnx") || path.ends_with(".vkir"));
    if (is_model) {
      ModelSessionOptions o;
      o.compile.target = c.target;
      o.compile.precision = c.precision;
      o.compile.module_cache_dir = c.module_cache_dir;
      model_ = std::make_unique<ModelSession>(device_, path, o);
      inputs_ = model_->inputs();
      outputs_ = model_->outputs();
    } else {
      check(c.target == "host" && c.precision == "fp32", path,
            ": target and precision apply when compiling a model; this is a compiled module");
      open_module(Module::load_or_recompile(path, device_));
    }
  }
  PySession(const Module& module, const Device& device) : device_(device) { open_module(module); }

  py::list inputs() const { return describe(inputs_); }
  py::list outputs() const { return describe(outputs_); }
  std::string device_name() const { return device_.info().name; }

  // The outputs named (all, in the model's order, for None) as numpy arrays; with `profile`, a
  // tuple (outputs, [(dispatch, ms, gflops, gbps), ...]). `output_buffers` (None or a dict of
  // output name -> numpy array) gives arrays outputs are written into (RunOptions::output_to_host):
  // such an output is returned as that same array.
  py::object run(const py::object& output_names, const py::dict& feed, bool profile, const py::object& output_buffers) {
    std::vector<std::string> names;
    if (output_names.is_none()) {
      for (const ModelInputInfo& o : outputs_) names.push_back(o.name);
    } else {
      for (py::handle n : output_names) {
        std::string name = py::cast<std::string>(n);
        bool known = false;
        for (const ModelInputInfo& o : outputs_) known |= o.name == name;
        check_input(known, "no output named '", name, "' (the outputs are: ", joined(outputs_), ")");
        names.push_back(std::move(name));
      }
    }
    HostInputs host;
    Inputs inputs;
    for (auto [key, value] : feed) {
      check_input(py::isinstance<py::str>(key), "input names must be strings, not ",
                  std::string(py::str(key.get_type().attr("__name__"))));
      std::string name = py::cast<std::string>(key);
      inputs.views.emplace(name, host.add(name, value, expected_type(name)));
    }
    RunOptions ro;
    ro.profile = profile;
    std::map<std::string, py::object> buffers;  // referenced (alive) until the run returns
    if (!output_buffers.is_none()) {
      check_input(py::isinstance<py::dict>(output_buffers),
                  "output_buffers must be a dict of output name -> numpy array, not ",
                  std::string(py::str(output_buffers.get_type().attr("__name__"))));
      for (auto [key, value] : py::reinterpret_borrow<py::dict>(output_buffers)) {
        check_input(py::isinstance<py::str>(key), "output names must be strings, not ",
                    std::string(py::str(key.get_type().attr("__name__"))));
        std::string name = py::cast<std::string>(key);
        ro.output_to_host.emplace(name, output_span(name, value));
        buffers.emplace(name, py::reinterpret_borrow<py::object>(value));
      }
    }
    Outputs out;
    std::vector<DispatchTiming> timings;
    {
      py::gil_scoped_release unlocked;
      std::lock_guard<std::mutex> lock(mutex_);
      out = model_ ? model_->run(inputs, ro) : session_->run(inputs, ro);
      if (profile) timings = model_ ? model_->last_profile() : session_->last_profile();
    }
    py::list arrays;
    for (const std::string& name : names) {
      if (auto bound = buffers.find(name); bound != buffers.end()) {
        arrays.append(bound->second);
        continue;
      }
      auto it = out.host.find(name);
      check(it != out.host.end(), "the run returned no output '", name, "'");
      arrays.append(to_numpy(std::move(it->second)));
    }
    if (!profile) return py::object(std::move(arrays));
    py::list rows;
    for (const DispatchTiming& t : timings) rows.append(py::make_tuple(t.name, t.ms, t.gflops, t.gbps));
    return py::make_tuple(arrays, rows);
  }

  // For bench/python_overhead.py: the same run through the C++ API alone, `runs` times in a loop
  // (inputs converted once, outputs dropped), the microseconds of each; the Python-side overhead
  // is run()'s time minus these, measured on the same session, device and driver threads.
  std::vector<double> time_cpp_runs(const py::dict& feed, int runs) {
    HostInputs host;
    Inputs inputs;
    for (auto [key, value] : feed) {
      std::string name = py::cast<std::string>(key);
      inputs.views.emplace(name, host.add(name, value, expected_type(name)));
    }
    std::vector<double> us;
    py::gil_scoped_release unlocked;
    std::lock_guard<std::mutex> lock(mutex_);
    for (int i = 0; i < runs; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      Outputs out = model_ ? model_->run(inputs) : session_->run(inputs);
      us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    return us;
  }

  // The module the last run used (its report, dispatch count); None before the first run of a model.
  std::optional<Module> module() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (session_) return session_->module();
    return std::nullopt;
  }

  // For a model: the specialization the last run used ("" before the first).
  std::string specialization() {
    std::lock_guard<std::mutex> lock(mutex_);
    return model_ ? model_->last_specialization().key : std::string();
  }
  size_t specialization_count() {
    std::lock_guard<std::mutex> lock(mutex_);
    return model_ ? model_->specialization_count() : 1;
  }

 private:
  void open_module(const Module& module) {
    session_ = std::make_unique<Session>(device_, module);
    inputs_ = static_infos(module.inputs());
    outputs_ = static_infos(module.outputs());
  }
  static std::string joined(const std::vector<ModelInputInfo>& values) {
    std::string s;
    for (const ModelInputInfo& v : values) s += (s.empty() ? "" : ", ") + v.name;
    return s;
  }
  std::string expected_type(const std::string& name) const {
    for (const ModelInputInfo& i : inputs_)
      if (i.name == name) return onnx_type_string(i.dtype);
    return "";  // an unknown name: the session's check says so
  }

  Device device_;
  std::unique_ptr<ModelSession> model_;  // a .onnx/.vkir model
  std::unique_ptr<Session> session_;     // a compiled module
  std::vector<ModelInputInfo> inputs_, outputs_;
  std::mutex mutex_;
};

}  // namespace

void register_sessions(py::module_& m) {
  py::class_<PySession>(m, "Session", "A model or compiled module on a device (use vkc.InferenceSession).")
      .def(py::init([](const std::string& path, const Device& device, const std::string& target,
                       const std::string& precision, const std::optional<std::string>& module_cache_dir) {
             SessionConfig c{target, precision, module_cache_dir};
             py::gil_scoped_release unlocked;
             return std::make_unique<PySession>(path, device, c);
           }),
           py::arg("path"), py::arg("device"), py::arg("target") = "host", py::arg("precision") = "fp32",
           py::arg("module_cache_dir") = std::nullopt)
      .def(py::init([](const Module& module, const Device& device) {
             py::gil_scoped_release unlocked;
             return std::make_unique<PySession>(module, device);
           }),
           py::arg("module"), py::arg("device"))
      .def("inputs", &PySession::inputs)
      .def("outputs", &PySession::outputs)
      .def("device_name", &PySession::device_name)
      .def("run", &PySession::run, py::arg("output_names"), py::arg("feed"), py::arg("profile") = false,
           py::arg("output_buffers") = py::none())
      .def("time_cpp_runs", &PySession::time_cpp_runs, py::arg("feed"), py::arg("runs"))
      .def("module", &PySession::module)
      .def("specialization", &PySession::specialization)
      .def("specialization_count", &PySession::specialization_count);
}

}  // namespace vkc::python
