// vkc::ModelSession: specializations of one model, keyed by the inputs' shapes and the values of
// the inputs that decide shapes, compiled at first use and kept.
#include "vkc/model_session.h"

#include <chrono>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "api/compile_in_process.h"
#include "onnx/importer.h"
#include "support/content_hash.h"

namespace vkc {

namespace {

bool is_onnx(const std::string& path) { return path.size() >= 5 && path.compare(path.size() - 5, 5, ".onnx") == 0; }

ModelInputInfo info_of(const onnx::ModelInput& m) {
  ModelInputInfo info{m.name, m.dtype, m.has_shape, {}, m.has_dtype};
  for (size_t d = 0; d < m.dims.size(); ++d) info.dims.push_back({m.dims[d], m.symbols[d]});
  return info;
}

ModelInputInfo info_of(const std::string& name, const ir::Value* v) {
  ModelInputInfo info{name, v->type.dtype, true, {}};
  for (int64_t d : v->type.shape) info.dims.push_back({d, ""});
  return info;
}

// The model's inputs and outputs, from one read of the file.
std::pair<std::vector<ModelInputInfo>, std::vector<ModelInputInfo>> read_signature(const std::string& path) {
  std::vector<ModelInputInfo> inputs, outputs;
  if (is_onnx(path)) {
    const onnx::ModelSignature sig = onnx::read_model_signature_io(path);
    for (const onnx::ModelInput& in : sig.inputs) inputs.push_back(info_of(in));
    for (const onnx::ModelInput& out : sig.outputs) outputs.push_back(info_of(out));
    return {inputs, outputs};
  }
  const ir::Graph graph = load_graph(path);  // .vkir: every dim is static
  for (const ir::Value* v : graph.inputs()) inputs.push_back(info_of(v->name, v));
  for (const ir::GraphOutput& o : graph.outputs()) outputs.push_back(info_of(o.name, o.value));
  return {inputs, outputs};
}

// A bound input's value in the key: the numbers when few (readable in the report), else a digest.
std::string value_text(const HostTensor& t) {
  if (t.numel() > 16) return cat("#", hash_hex(content_hash(t.data(), t.size_bytes())));
  std::ostringstream s;
  s << "{";
  for (int64_t i = 0; i < t.numel(); ++i) s << (i ? "," : "") << t.get_f64(i);
  s << "}";
  return s.str();
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

struct ModelSession::Impl {
  explicit Impl(const Device& d) : device(d) {}
  Device device;
  std::string path;
  ModelSessionOptions options;
  std::vector<ModelInputInfo> inputs;
  std::vector<ModelInputInfo> outputs;
  // Inputs a compile asked for by value: model-wide, since the same node needs them every time.
  std::set<std::string> value_inputs;

  struct Entry {
    Specialization info;
    std::unique_ptr<Session> session;
  };
  std::map<std::string, Entry> entries;
  Specialization last;
  Session* last_session = nullptr;
  std::mutex mutex;  // runs are serialized

  // Shapes (and, for value inputs, the host data) of `given`, checked against the model.
  struct Given {
    std::map<std::string, Shape> shapes;
    std::map<std::string, DType> dtypes;
  };
  Given check_inputs(const Inputs& given) const;
  HostTensor value_of(const Inputs& given, const std::string& name) const;
  std::string key_of(const Inputs& given, const Given& g) const;
  Entry& entry_for(const Inputs& given);
};

ModelSession::Impl::Given ModelSession::Impl::check_inputs(const Inputs& given) const {
  Given g;
  for (const auto& [name, t] : given.host) {
    g.shapes[name] = t.shape();
    g.dtypes[name] = t.dtype();
  }
  for (const auto& [name, v] : given.views) {
    check_input(!g.shapes.count(name), "input '", name, "' is given both as a host tensor and as a view");
    g.shapes[name] = v.shape;
    g.dtypes[name] = v.dtype;
  }
  for (const auto& [name, t] : given.device) {
    check_input(!g.shapes.count(name), "input '", name, "' is given both from the host and from the device");
    check_input(bool(t), "input '", name, "' is an empty DeviceTensor");
    g.shapes[name] = t.shape();
    g.dtypes[name] = t.dtype();
  }
  std::string known;
  for (const ModelInputInfo& in : inputs) known += (known.empty() ? "" : ", ") + in.name;
  for (const auto& [name, shape] : g.shapes) {
    bool found = false;
    for (const ModelInputInfo& in : inputs) found |= in.name == name;
    check_input(found, path, ": the model has no input named '", name, "' (its inputs are: ", known, ")");
  }
  std::map<std::string, std::pair<int64_t, std::string>> symbol_values;  // symbol -> (value, where)
  for (const ModelInputInfo& in : inputs) {
    auto it = g.shapes.find(in.name);
    check_input(it != g.shapes.end(), path, ": input '", in.name, "' is missing");
    const Shape& s = it->second;
    check_input(g.dtypes.at(in.name) == in.dtype, path, ": input '", in.name, "' has element type ",
          dtype_name(g.dtypes.at(in.name)), ", the model expects ", dtype_name(in.dtype));
    auto pinned = options.compile.input_shapes.find(in.name);
    if (pinned != options.compile.input_shapes.end())
      check_input(pinned->second == s, path, ": input '", in.name, "' has shape [", shape_str(s),
            "], but input_shapes pins it to [", shape_str(pinned->second), "]");
    if (!in.has_shape) continue;
    check_input(s.size() == in.dims.size(), path, ": input '", in.name, "' has rank ", s.size(), ", the model expects ",
          in.dims.size());
    for (size_t d = 0; d < s.size(); ++d) {
      const ModelDim& md = in.dims[d];
      if (md.value >= 0) {
        check_input(s[d] == md.value, path, ": input '", in.name, "' dim ", d, " is ", s[d], ", the model fixes it to ",
              md.value);
        continue;
      }
      if (md.symbol.empty()) continue;
      std::string where = cat("input '", in.name, "' dim ", d);
      auto [sym, fresh] = symbol_values.emplace(md.symbol, std::make_pair(s[d], where));
      check_input(fresh || sym->second.first == s[d], path, ": ", where, " ('", md.symbol, "') is ", s[d], ", but ",
            sym->second.second, " gives '", md.symbol, "' = ", sym->second.first);
    }
  }
  return g;
}

HostTensor ModelSession::Impl::value_of(const Inputs& given, const std::string& name) const {
  auto h = given.host.find(name);
  if (h != given.host.end()) return h->second;
  auto v = given.views.find(name);
  if (v != given.views.end()) return v->second.copy();
  return given.device.at(name).download();  // a value that decides shapes is needed on the host
}

std::string ModelSession::Impl::key_of(const Inputs& given, const Given& g) const {
  std::string key;
  for (const ModelInputInfo& in : inputs) {
    key += cat(key.empty() ? "" : "; ", in.name, " ", dtype_name(in.dtype), "[", shape_str(g.shapes.at(in.name)), "]");
    if (value_inputs.count(in.name)) key += " = " + value_text(value_of(given, in.name));
  }
  return key;
}

ModelSession::Impl::Entry& ModelSession::Impl::entry_for(const Inputs& given) {
  Given g = check_inputs(given);
  for (;;) {
    std::string key = key_of(given, g);
    auto it = entries.find(key);
    if (it != entries.end()) {
      it->second.info.new_now = false;
      return it->second;
    }
    auto t0 = std::chrono::steady_clock::now();
    CompileOptions co = options.compile;
    for (const ModelInputInfo& in : inputs) {
      if (value_inputs.count(in.name)) {
        co.input_values[in.name] = value_of(given, in.name);
        co.input_shapes.erase(in.name);
      } else if (is_onnx(path)) {
        co.input_shapes[in.name] = g.shapes.at(in.name);
      }
    }
    std::optional<Module> module;
    try {
      module.emplace(Module::compile(path, device, co));
    } catch (const onnx::InputValuesNeeded& need) {
      size_t before = value_inputs.size();
      value_inputs.insert(need.names.begin(), need.names.end());
      if (value_inputs.size() == before) throw;  // asked again for what was bound: cannot progress
      continue;  // the key now carries those values: it may name an existing specialization
    }
    Entry e;
    e.session = std::make_unique<Session>(device, *module, options.session);
    e.info.key = key;
    for (const ModelInputInfo& in : inputs)
      if (value_inputs.count(in.name)) e.info.bound_inputs.push_back(in.name);
    e.info.new_now = true;
    e.info.origin = module->origin();
    e.info.dispatches = module->dispatch_count();
    e.info.compile_ms = ms_since(t0);
    return entries.emplace(key, std::move(e)).first->second;
  }
}

ModelSession::ModelSession(const Device& device, const std::string& model_path, const ModelSessionOptions& options)
    : impl_(std::make_unique<Impl>(device)) {
  impl_->path = model_path;
  impl_->options = options;
  check(options.compile.input_values.empty(),
        "ModelSession: CompileOptions::input_values are chosen per run; give the values as inputs");
  std::tie(impl_->inputs, impl_->outputs) = read_signature(model_path);
}

ModelSession::~ModelSession() = default;

const std::vector<ModelInputInfo>& ModelSession::inputs() const { return impl_->inputs; }

Session& ModelSession::prepare(const Inputs& inputs) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  Impl::Entry& e = impl_->entry_for(inputs);
  impl_->last = e.info;
  return *e.session;
}

Inputs ModelSession::unbound(const Inputs& inputs) const {
  Inputs out = inputs;
  for (const std::string& name : impl_->value_inputs) {
    out.host.erase(name);
    out.views.erase(name);
    out.device.erase(name);
  }
  return out;
}

Outputs ModelSession::run(const Inputs& inputs, const RunOptions& options) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  Impl::Entry& e = impl_->entry_for(inputs);
  impl_->last = e.info;
  impl_->last_session = e.session.get();
  // The unbound inputs as views and device tensors: the host data is not copied on the way.
  Inputs run_inputs;
  for (const auto& [name, v] : inputs.host_views())
    if (!impl_->value_inputs.count(name)) run_inputs.views.emplace(name, v);
  for (const auto& [name, t] : inputs.device)
    if (!impl_->value_inputs.count(name)) run_inputs.device.emplace(name, t);
  return e.session->run(run_inputs, options);
}

const std::vector<ModelInputInfo>& ModelSession::outputs() const { return impl_->outputs; }

const std::vector<DispatchTiming>& ModelSession::last_profile() const {
  static const std::vector<DispatchTiming> none;
  return impl_->last_session ? impl_->last_session->last_profile() : none;
}

const Specialization& ModelSession::last_specialization() const { return impl_->last; }
size_t ModelSession::specialization_count() const { return impl_->entries.size(); }

}  // namespace vkc
