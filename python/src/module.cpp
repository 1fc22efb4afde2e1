// The _vkc extension module: bindings of the C++ API (include/vkc/) under the pure-Python package
// python/vkc/, which gives them ONNX Runtime's shape.
#include "python/src/bindings.h"

PYBIND11_MODULE(_vkc, m) {
  m.doc() = "vkc: Vulkan compute for tensor programs (bindings of the C++ API; use the vkc package)";
  vkc::python::register_errors(m);
  vkc::python::register_devices(m);
  vkc::python::register_modules(m);
  vkc::python::register_sessions(m);
}
