// The state behind the public handles of include/vkc/ (Device, Module, DeviceTensor, Session,
// Execution), shared by the files in api/ that implement them.
#pragma once

#include <exception>
#include <map>
#include <memory>
#include <string>
#include <vector>

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

// The graph a module was compiled from: its text (source.vkir, as loaded from a module), or for a
// module compiled in this process the graph itself, printed only when the text is asked for (save).
// Printing a model's weights as text doubles them (ViT-B/16: 700 MB of text for 350 MB of weights):
// compiling and the module cache need only the graph (api/module_cache.h).
class SourceGraph {
 public:
  SourceGraph() = default;
  explicit SourceGraph(std::string text);
  explicit SourceGraph(ir::Graph graph);

  bool present() const { return state_ != nullptr; }
  const std::string& text() const;  // thread-safe; printed once
  ir::Graph graph() const;          // a copy: cloned, or parsed from the text

 private:
  struct State;
  std::shared_ptr<State> state_;
};

struct Module::Impl {
  ModuleImage image;
  SourceGraph source;  // absent: the module carries no source graph
  std::vector<TensorInfo> inputs, outputs;
  ModuleOrigin origin = ModuleOrigin::Loaded;
};

// Builds a Module around a compiled image (fills the tensor lists).
Module make_module(ModuleImage image, std::string source_vkir, ModuleOrigin origin);
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
