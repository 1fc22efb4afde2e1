// The parts of the _vkc extension (python/src/*.cpp), each registered by module.cpp.
#pragma once

#include <pybind11/pybind11.h>

namespace vkc::python {

namespace py = pybind11;

void register_errors(py::module_& m);    // errors.cpp: vkc::InputError -> ValueError, vkc::Error -> RuntimeError
void register_devices(py::module_& m);   // devices.cpp: devices()
void register_modules(py::module_& m);   // modules.cpp: Module, compile_module, load_module
void register_sessions(py::module_& m);  // session.cpp: Session (a model or a module on a device)

}  // namespace vkc::python
