// vkc.devices(): the Vulkan devices of this machine (vkc::Device::enumerate), as dicts; and
// vkc.Device, one of them opened (a handle: sessions given the same Device share it, and must
// then be used from one thread at a time, as the C++ API says).
#include "python/src/bindings.h"

#include <pybind11/stl.h>

#include "vkc/device.h"

namespace vkc::python {

void register_devices(py::module_& m) {
  py::class_<Device>(m, "Device", "A Vulkan device, chosen by index or name substring (default: VKC_DEVICE, else the best).")
      .def(py::init([](const std::string& select, bool robust) {
             DeviceOptions o;
             o.select = select;
             o.robust_buffer_access = robust;
             py::gil_scoped_release unlocked;
             return Device(o);
           }),
           py::arg("select") = "", py::arg("robust") = false)
      .def_property_readonly("name", [](const Device& d) { return d.info().name; })
      .def_property_readonly("type", [](const Device& d) { return d.info().type; })
      .def_property_readonly("validation_enabled", &Device::validation_enabled)
      .def("validation_messages", &Device::validation_messages)
      .def("__repr__", [](const Device& d) { return "vkc.Device(" + d.info().name + ")"; });
  m.def("devices", [] {
    std::vector<DeviceInfo> found;
    {
      py::gil_scoped_release unlocked;
      found = Device::enumerate();
    }
    py::list out;
    for (const DeviceInfo& d : found) {
      py::dict info;
      info["index"] = d.index;
      info["name"] = d.name;
      info["type"] = d.type;
      info["vendor_id"] = d.vendor_id;
      info["device_id"] = d.device_id;
      info["driver"] = d.driver;
      info["api_version"] = d.api_version;
      info["tensor_cores"] = d.tensor_cores;
      info["cooperative_matrix_shapes"] = d.cooperative_matrix_shapes;
      out.append(std::move(info));
    }
    return out;
  }, "Every Vulkan device on this machine, as dicts (index, name, type, driver, ...).");
}

}  // namespace vkc::python
