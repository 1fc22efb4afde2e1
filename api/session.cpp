// vkc::Session, vkc::Execution and vkc::DeviceTensor over rt::Program / rt::DeviceTensor.
#include "api/impl.h"
#include "module/cache_dir.h"

namespace vkc {

namespace {

std::string join(const std::vector<TensorInfo>& items) {
  std::string s;
  for (const TensorInfo& i : items) s += (s.empty() ? "" : ", ") + i.name;
  return s;
}

// Applies recompile_if_unmet, or refuses naming the limits (and the way out when there is one).
Module module_for(const Device& device, const Module& module, const SessionOptions& options) {
  std::vector<std::string> unmet = module.unmet_limits(device);
  if (unmet.empty()) return module;
  if (options.recompile_if_unmet && module.has_source()) return module.recompile_for(device);
  // One line: the first use that does not fit, and the way out.
  throw Error(cat("module compiled for target '", module.target(), "' does not fit device '", device.info().name,
                  "': ", unmet.front(), unmet.size() > 1 ? cat(" (and ", unmet.size() - 1, " more)") : std::string(),
                  module.has_source() ? "; recompile it for this device with vk-run --recompile "
                                        "(SessionOptions::recompile_if_unmet)"
                                      : "; it carries no source graph: compile its model for this device "
                                        "(vk-compile --target host)"));
}

}  // namespace

// --- DeviceTensor ---------------------------------------------------------------------------

DeviceTensor DeviceTensor::upload(const Device& device, const HostTensor& tensor) {
  auto t = std::make_shared<rt::DeviceTensor>(*device.impl()->context, tensor.dtype(), tensor.shape());
  t->upload(tensor);
  return DeviceTensor(std::make_shared<Impl>(Impl{device.impl(), std::move(t)}));
}

DType DeviceTensor::dtype() const {
  check(impl_ != nullptr, "empty DeviceTensor");
  return impl_->tensor->dtype();
}

const Shape& DeviceTensor::shape() const {
  check(impl_ != nullptr, "empty DeviceTensor");
  return impl_->tensor->shape();
}

HostTensor DeviceTensor::download() const {
  check(impl_ != nullptr, "empty DeviceTensor");
  return impl_->tensor->download();
}

// --- Inputs / Outputs -------------------------------------------------------------------------

Inputs Inputs::view(const std::map<std::string, HostTensor>& tensors) {
  Inputs in;
  in.views = views_of(tensors);
  return in;
}

Inputs& Inputs::set(const std::string& name, HostTensor tensor) {
  device.erase(name);
  views.erase(name);
  host[name] = std::move(tensor);
  return *this;
}

Inputs& Inputs::set(const std::string& name, HostTensorView view) {
  device.erase(name);
  host.erase(name);
  views[name] = std::move(view);
  return *this;
}

Inputs& Inputs::set(const std::string& name, DeviceTensor tensor) {
  host.erase(name);
  views.erase(name);
  device[name] = std::move(tensor);
  return *this;
}

std::map<std::string, HostTensorView> Inputs::host_views() const {
  std::map<std::string, HostTensorView> all = views;
  for (const auto& [name, t] : host)
    check_input(all.emplace(name, HostTensorView(t)).second, "input '", name,
                "' is given both as a host tensor and as a view");
  return all;
}

const HostTensor& Outputs::at(const std::string& name) const {
  auto it = host.find(name);
  if (it != host.end()) return it->second;
  check(!device.count(name), "output '", name, "' was kept on the device (Outputs::device)");
  check(!host_spans.count(name), "output '", name, "' was written into the caller's memory ",
        "(RunOptions::output_to_host; Outputs::host_spans), not into a HostTensor");
  std::string names;
  for (const auto& [n, t] : host) names += (names.empty() ? "" : ", ") + n;
  throw Error(cat("no output named '", name, "' (host outputs: ", names, ")"));
}

// --- Session ----------------------------------------------------------------------------------

void Session::Impl::finish() {
  if (!in_flight) return;
  std::shared_ptr<Execution::State> state = std::move(in_flight);
  in_flight.reset();
  state->done = true;
  try {
    rt::ExecutionResults r = program->wait();
    state->outputs.host = std::move(r.host);
    state->outputs.host_spans = std::move(state->host_spans);
    for (auto& [name, t] : r.device)
      state->outputs.device.emplace(name, DeviceTensor(std::make_shared<DeviceTensor::Impl>(
                                              DeviceTensor::Impl{device.impl(), std::move(t)})));
    if (profiled) {
      profile.clear();
      const std::vector<rt::DispatchProfile>& timed = program->last_profile();
      for (size_t i = 0; i < timed.size(); ++i)
        profile.push_back({timed[i].name, timed[i].ms, timed[i].gflops, timed[i].gbps, program->pipeline_statistics(i)});
    }
  } catch (...) {
    state->error = std::current_exception();
  }
}

Session::Session(const Device& device, const Module& module, const SessionOptions& options)
    : impl_(std::make_shared<Impl>(Impl{device, module_for(device, module, options), nullptr, nullptr, false, {}})) {
  rt::ProgramOptions po;
  po.pipeline_cache_dir = options.pipeline_cache_dir ? *options.pipeline_cache_dir : cache_dir(kPipelineCacheKind);
  impl_->program = std::make_unique<rt::Program>(*device.impl()->context, impl_->module.impl()->image, po);
}

Outputs Session::run(const Inputs& inputs, const RunOptions& options) { return submit(inputs, options).wait(); }

Execution Session::submit(const Inputs& inputs, const RunOptions& options) {
  Impl& s = *impl_;
  s.finish();  // the previous execution's outputs move into its Execution
  // A caller's device tensor, checked: not empty, and on this session's device.
  auto runtime_tensor = [&](const char* role, const std::string& name, const DeviceTensor& t) {
    check_input(bool(t), role, " '", name, "': empty DeviceTensor");
    check(t.impl()->device == s.device.impl(), role, " '", name,
          "': the device tensor lives on another vkc::Device than this session's");
    return t.impl()->tensor;
  };
  std::map<std::string, std::shared_ptr<rt::DeviceTensor>> device_inputs;
  for (const auto& [name, t] : inputs.device) device_inputs[name] = runtime_tensor("input", name, t);
  std::set<std::string> kept = options.keep_on_device;
  std::map<std::string, std::shared_ptr<rt::DeviceTensor>> targets;
  for (const auto& [name, t] : options.output_into) {
    targets[name] = runtime_tensor("output_into", name, t);
    kept.insert(name);
  }
  for (const std::string& name : kept) {
    bool known = false;
    for (const TensorInfo& o : s.module.outputs()) known |= o.name == name;
    check(known, options.output_into.count(name) ? "output_into" : "keep_on_device", ": no output named '", name,
          "' (the module's outputs are: ", join(s.module.outputs()), ")");
  }
  // Outputs into the caller's host memory: checked here, before any GPU work (the runtime checks
  // again what it writes through).
  for (const auto& [name, span] : options.output_to_host) {
    const TensorInfo* info = nullptr;
    for (const TensorInfo& o : s.module.outputs())
      if (o.name == name) info = &o;
    check_input(info != nullptr, "output_to_host: no output named '", name, "' (the module's outputs are: ",
                join(s.module.outputs()), ")");
    check_input(!kept.count(name), "output '", name, "' is named in output_to_host and in ",
                options.output_into.count(name) ? "output_into" : "keep_on_device", ": it goes to one place");
    check_input(span.dtype == info->dtype && span.shape == info->shape, "output_to_host '", name, "': expected ",
                dtype_name(info->dtype), " ", shape_str(info->shape), ", found ", dtype_name(span.dtype), " ",
                shape_str(span.shape));
    check_input(span.data != nullptr || shape_numel(span.shape) == 0, "output_to_host '", name,
                "': a span with no data");
  }
  rt::ExecuteOptions eo;
  eo.profile = options.profile;
  s.program->submit(inputs.host_views(), device_inputs, kept, eo, targets, options.output_to_host);
  s.profiled = options.profile;
  s.in_flight = std::make_shared<Execution::State>();
  s.in_flight->host_spans = options.output_to_host;
  return Execution(impl_, s.in_flight);
}

const std::vector<DispatchTiming>& Session::last_profile() const { return impl_->profile; }
const Module& Session::module() const { return impl_->module; }
const Device& Session::device() const { return impl_->device; }
bool Session::pipeline_cache_hit() const { return impl_->program->pipeline_cache_loaded(); }

// --- Execution --------------------------------------------------------------------------------

Execution::Execution(std::shared_ptr<Session::Impl> session, std::shared_ptr<State> state)
    : session_(std::move(session)), state_(std::move(state)) {}

bool Execution::ready() const {
  if (state_->done) return true;
  return session_->program->ready();
}

Outputs Execution::wait() {
  if (!state_->done) session_->finish();  // an unfinished execution is always the session's in-flight one
  if (state_->error) std::rethrow_exception(state_->error);
  check(!state_->consumed, "Execution::wait() was already called for this execution");
  state_->consumed = true;
  return std::move(state_->outputs);
}

}  // namespace vkc
