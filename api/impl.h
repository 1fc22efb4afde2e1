// The state behind the public handles of include/vkc/ (Device, Module, DeviceTensor, Session,
// Execution), shared by the files in api/ that implement them.
#pragma once

#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/source_graph.h"
#include "ir/graph.h"
#include "module/manifest.h"
#include "runtime/runtime.h"
#include "vkc/vkc.h"

namespace vkc {

struct Device::Impl {
  std::unique_ptr<rt::Context> context;
  DeviceInfo info;
  DeviceLimits limits;
};

struct Module::Impl {
  ModuleImage image;
  SourceGraph source;  // absent: the module carries no source graph
  std::vector<TensorInfo> inputs, outputs;
  ModuleOrigin origin = ModuleOrigin::Loaded;
};

// Builds a Module around a compiled image (fills the tensor lists).
Module make_module(ModuleImage image, std::optional<SourceFiles> source, ModuleOrigin origin);
Module make_module(ModuleImage image, ir::Graph source, ModuleOrigin origin);

struct DeviceTensor::Impl {
  std::shared_ptr<Device::Impl> device;  // declared first: destroyed after the tensor
  std::shared_ptr<rt::DeviceTensor> tensor;
};

struct Execution::State {
  bool done = false;
  bool consumed = false;
  Outputs outputs;
  std::exception_ptr error;
  std::map<std::string, HostTensorSpan> host_spans;  // RunOptions::output_to_host, until written
};

struct Session::Impl {
  Device device;  // declared first: outlives the program
  Module module;
  std::unique_ptr<rt::Program> program;
  std::shared_ptr<Execution::State> in_flight;
  bool profiled = false;  // whether the execution in flight records timestamps
  std::vector<DispatchTiming> profile;

  // Waits for the execution in flight (if any) and stores its outputs or error in its state.
  void finish();
};

}  // namespace vkc
