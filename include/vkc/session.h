// vkc::Session: a Module loaded on a Device (pipelines created, constants uploaded once, one
// memory arena for intermediates), executed synchronously (run) or asynchronously (submit/wait).
//
// Every execution replays one pre-recorded command buffer holding all dispatches, with barriers only
// between dependent dispatches, in one queue submission.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "vkc/device.h"
#include "vkc/module.h"
#include "vkc/tensor.h"

namespace vkc {

// A tensor kept in device memory: an output of one execution that feeds the next one (of this or
// another session on the same device) with no round trip through the host.
class DeviceTensor {
 public:
  DeviceTensor() = default;  // empty
  // Copies `tensor` into a new device tensor.
  static DeviceTensor upload(const Device& device, const HostTensor& tensor);

  explicit operator bool() const { return impl_ != nullptr; }
  DType dtype() const;
  const Shape& shape() const;
  // Copies to the host (waits for the device to finish the work that produces it).
  HostTensor download() const;

  struct Impl;
  const std::shared_ptr<Impl>& impl() const { return impl_; }
  explicit DeviceTensor(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<Impl> impl_;
};

// The inputs of one execution, by name: each from the host (an owned tensor, or a view of the
// caller's memory) or from a device tensor. Host data goes straight from where it lies into the
// device's input buffer: the upload is its only copy. A view's memory must stay valid and
// unchanged until run()/submit() returns (language bindings pass their arrays this way).
// `session.run(tensors)` with a std::map the caller keeps copies its tensors into the Inputs first
// (a temporary or std::move'd map is moved; `run({{{"x", x}}})` copies x into the map it makes);
// `Inputs::view(tensors)` runs them without that copy, which for large inputs costs more than the
// upload (77 MB: a fresh allocation's page faults, tens of ms).
struct Inputs {
  std::map<std::string, HostTensor> host;
  std::map<std::string, HostTensorView> views;
  std::map<std::string, DeviceTensor> device;

  Inputs() = default;
  Inputs(std::map<std::string, HostTensor> host_inputs) : host(std::move(host_inputs)) {}  // NOLINT: implicit
  // Views of the caller's tensors, no copy: they must stay valid and unchanged until
  // run()/submit() returns.
  static Inputs view(const std::map<std::string, HostTensor>& tensors);
  Inputs& set(const std::string& name, HostTensor tensor);
  Inputs& set(const std::string& name, HostTensorView view);
  Inputs& set(const std::string& name, DeviceTensor tensor);
  // Every host input (owned or viewed) as a view; throws when a name is given twice.
  std::map<std::string, HostTensorView> host_views() const;
};

// The outputs of one execution: downloaded ones in `host`, those named in RunOptions::keep_on_device
// in `device`, those named in RunOptions::output_to_host (already written into the caller's memory)
// in `host_spans`, as the spans given.
struct Outputs {
  std::map<std::string, HostTensor> host;
  std::map<std::string, DeviceTensor> device;
  std::map<std::string, HostTensorSpan> host_spans;
  // A host output; throws naming the outputs, or, for one kept on the device or written into the
  // caller's memory, saying where it went.
  const HostTensor& at(const std::string& name) const;
};

struct RunOptions {
  // Time each dispatch with GPU timestamps; read them with Session::last_profile().
  bool profile = false;
  // Outputs returned as DeviceTensor instead of being downloaded.
  std::set<std::string> keep_on_device;
  // Outputs written into these device tensors (dtype and shape must match the output's) and
  // returned in Outputs::device as them; implies keep_on_device. A tensor here may also be an input
  // of the same execution: inputs are copied in before any dispatch runs and outputs copied out
  // after all of them, so a state kept on the device (a decoder's key/value cache) is updated in
  // place, with no allocation per execution. With output_to_host, the only ways vkc writes memory
  // the caller holds.
  std::map<std::string, DeviceTensor> output_into;
  // Outputs read straight into host memory the caller owns, instead of into a new HostTensor:
  // dtype and shape must equal the output's (else a vkc::InputError naming the output, what it
  // is and what was given, thrown by submit() before any GPU work), and the memory must stay valid,
  // and untouched by the caller, until the execution is completed on the host, which writes it
  // (with the same copy, split among threads above 1 MiB, that fills a HostTensor): when its wait()
  // (or run()) returns, or, if wait() is never called, the session's next submit(). Nothing is
  // allocated per execution: for large outputs (tens of MB and up, where a fresh allocation's page
  // faults cost more than the copy) keep one buffer and pass it to every run. Such outputs are in
  // Outputs::host_spans, not Outputs::host. An output may not be named here and in keep_on_device
  // or output_into.
  std::map<std::string, HostTensorSpan> output_to_host;
};

// Per-dispatch timing of the last profiled execution.
struct DispatchTiming {
  std::string name;   // the dispatch (manifest name)
  double ms = 0;
  double gflops = 0;  // the compiler's FLOP count / time
  double gbps = 0;    // the compiler's minimum bytes moved / time
  // What the driver reports of the dispatch's pipeline ("Register Count=151", ...) when statistics
  // are captured: VKC_PIPELINE_STATS=1 and a device with VK_KHR_pipeline_executable_properties.
  // Empty otherwise.
  std::vector<std::string> statistics;
};

struct SessionOptions {
  // Where compiled pipelines are cached between processes. Unset: the "pipelines" directory of
  // vkc's cache (vkc::cache_dir("pipelines"): $VKC_CACHE_DIR, else $XDG_CACHE_HOME/vkc, else
  // ~/.cache/vkc). Empty string: no disk cache.
  std::optional<std::string> pipeline_cache_dir;
  // When the module's target asks more than the device has and the module carries its source
  // graph, recompile it for the device instead of refusing.
  bool recompile_if_unmet = false;
};

class Execution;

class Session {
 public:
  // Refuses (vkc::Error naming the limits) a module planned for limits the device does not meet,
  // unless options.recompile_if_unmet applies.
  Session(const Device& device, const Module& module, const SessionOptions& options = {});

  // Synchronous: submit + wait. Input names, dtypes and shapes must match the module's; errors
  // name the input.
  Outputs run(const Inputs& inputs, const RunOptions& options = {});
  // Asynchronous: returns once the work is queued. One execution per session is in flight at a
  // time: submitting again first completes the previous one (its Execution keeps the results).
  Execution submit(const Inputs& inputs, const RunOptions& options = {});

  const std::vector<DispatchTiming>& last_profile() const;
  // The module running (after recompile_if_unmet, the recompiled one).
  const Module& module() const;
  const Device& device() const;
  // Whether the pipelines came from the disk cache (a warm start).
  bool pipeline_cache_hit() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

// A submitted execution: a future for its Outputs.
class Execution {
 public:
  // True once the device finished (never blocks).
  bool ready() const;
  // Blocks until done and returns the outputs (once; a second call throws).
  Outputs wait();

  struct State;
  Execution(std::shared_ptr<Session::Impl> session, std::shared_ptr<State> state);

 private:
  std::shared_ptr<Session::Impl> session_;
  std::shared_ptr<State> state_;
};

}  // namespace vkc
