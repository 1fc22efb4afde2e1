// vkc's exceptions as Python's: a caller's bad inputs (vkc::InputError) raise ValueError, every
// other vkc::Error RuntimeError, each with vkc's one-line message. Every binding runs inside
// pybind11's call wrapper, so no C++ exception (and no abort) crosses into Python.
#include "python/src/bindings.h"
#include "vkc/tensor.h"

namespace vkc::python {

void register_errors(py::module_& m) {
  (void)m;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
}

}  // namespace vkc::python
