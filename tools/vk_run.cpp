// vk-run: runs a compiled module (directory or .vkcm file), or compiles a .vkir/.onnx model in
// process, on a Vulkan device, with .npy inputs and outputs, optional reference check, benchmark
// and per-dispatch profile. Uses only the public API (include/vkc/).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include "module/precision.h"
#include "tools/cli_common.h"
#include "tools/self_test.h"
#include "vkc/vkc.h"

namespace {

const char* kUsage =
    "usage: vk-run MODULE_DIR|MODEL.vkcm|MODEL.vkir|MODEL.onnx [--input NAME=FILE.npy ...]\n"
    "              [--random-inputs SEED] [--input-shape NAME=D0,D1,...]\n"
    "              [--output-dir DIR] [--device INDEX|NAME] [--check [--tolerance REL]]\n"
    "              [--benchmark N] [--profile] [--recompile] [--no-cache] [--robust]\n"
    "              [--device-io] [--list-devices] [--self-test] [--precision fp32|fp16|fp16x3]\n"
    "  --list-devices       every device, its tensor cores and the cooperative-matrix gate's verdicts\n"
    "  --self-test          a short report for bug reports: device, driver, the gate's verdicts, a\n"
    "                       conformance subset against the reference interpreter, a few timings\n"
    "                       (with --device to pick the device; exit code 1 when a check fails)\n"
    "  an ONNX model's symbolic dims take the --input files' shapes (compiled once per shape)\n"
    "  --device-io          with --benchmark: also time runs whose inputs and outputs stay in\n"
    "                       device memory (uploaded once; no copies in the timed runs)\n"
    "  --recompile          recompile a module whose target exceeds the device, or that another\n"
    "                       vkc version wrote, from the source graph it carries (source.vkir)\n"
    "  --no-cache           neither read nor write vkc's caches of compiled modules and pipelines\n"
    "                       ($VKC_CACHE_DIR, else $XDG_CACHE_HOME/vkc, else ~/.cache/vkc)\n"
    "  --no-pipeline-cache  only the pipeline cache off\n"
    "  --robust             bounds-checked buffer access (Vulkan robustness; also VKC_ROBUST=1)\n"
    "  --precision P        compiling a model file: fp32 (default) or fp16 (f32 activations and\n"
    "                       weights stored as f16, sums in f32). --check of an fp16 module compares\n"
    "                       max abs error / max abs output with --tolerance, default 5e-3.\n"
    "                       fp16x3: f32 tensors, f32 matrix products on f16 tensor cores as three\n"
    "                       products of f16 pieces (products about 1e-6 relative error against\n"
    "                       f32's 1e-7, more for operands below 1e-3: 2e-5 near 1e-4; docs/api.md\n"
    "                       \"Precision\"); --check as for fp32\n";

bool is_compiled_module(const std::string& path) {
  if (std::filesystem::is_directory(path)) return true;
  return path.size() > 5 && path.compare(path.size() - 5, 5, ".vkcm") == 0;
}

std::string summary(const vkc::HostTensor& t) {
  std::ostringstream s;
  s << vkc::dtype_name(t.dtype()) << "[" << vkc::shape_str(t.shape()) << "] ";
  int64_t n = std::min<int64_t>(t.numel(), 6);
  s << "[";
  for (int64_t i = 0; i < n; ++i) s << (i ? ", " : "") << std::setprecision(6) << t.get_f64(i);
  s << (t.numel() > n ? ", ...]" : "]");
  return s.str();
}

// A first output shaped [1, C] with C >= 5 looks like a classifier's scores: print its top 5.
void print_top5(const std::string& name, const vkc::Outputs& outputs) {
  const vkc::HostTensor& t = outputs.at(name);
  if (!vkc::is_float(t.dtype()) || t.shape().size() != 2 || t.shape()[0] != 1 || t.shape()[1] < 5) return;
  std::vector<int64_t> order(size_t(t.numel()));
  for (size_t i = 0; i < order.size(); ++i) order[i] = int64_t(i);
  std::partial_sort(order.begin(), order.begin() + 5, order.end(),
                    [&](int64_t a, int64_t b) { return t.get_f64(a) > t.get_f64(b); });
  std::cout << "top-5 classes of " << name << ":\n";
  for (int i = 0; i < 5; ++i)
    std::cout << "  #" << i + 1 << " class " << order[size_t(i)] << ": " << std::setprecision(6)
              << t.get_f64(order[size_t(i)]) << "\n";
  std::cout << std::setprecision(3);  // what the timing lines after this expect
}

// Prints one line per output and throws when any differs from the reference beyond `tolerance`:
// the L2 error relative to the reference's L2 norm, or for an fp16 module max abs error over max
// abs output (the measure docs/api.md's 5e-3 bound is stated in).
void check_against_reference(const vkc::Module& module, const std::map<std::string, vkc::HostTensor>& inputs,
                             const vkc::Outputs& outputs, double tolerance) {
  const bool fp16 = module.precision() == "fp16";
  vkc::check(module.has_source(), "--check needs the source graph (source.vkir in the module)");
  std::map<std::string, vkc::HostTensor> ref = module.reference(inputs);
  bool ok = true;
  for (const auto& [name, r] : ref) {
    const vkc::HostTensor& a = outputs.at(name);
    double diff2 = 0, ref2 = 0, max_abs = 0, max_ref = 0;
    bool mismatch = false;
    for (int64_t i = 0; i < r.numel(); ++i) {
      double x = a.get_f64(i), y = r.get_f64(i);
      if (std::isnan(x) != std::isnan(y)) mismatch = true;
      if (std::isnan(x) || std::isnan(y)) continue;
      max_abs = std::max(max_abs, std::abs(x - y));
      max_ref = std::max(max_ref, std::abs(y));
      diff2 += (x - y) * (x - y);
      ref2 += y * y;
    }
    double rel = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
    double rel_max = max_ref > 0 ? max_abs / max_ref : max_abs;
    bool pass = !mismatch && (fp16 ? rel_max : rel) <= tolerance;
    ok &= pass;
    std::cout << "check " << name << ": max abs " << std::scientific << std::setprecision(3) << max_abs << ", rel "
              << rel;
    if (fp16) std::cout << ", max abs / max |ref| " << rel_max << " (fp16, expected <= 5.000e-03)";
    std::cout << (mismatch ? " (NaN mismatch)" : "") << (pass ? " ok" : " FAIL") << "\n" << std::fixed;
  }
  vkc::check(ok, "outputs differ from the reference interpreter beyond tolerance ", tolerance);
}

// What vk-run needs to read or generate one input.
struct InputSpec {
  std::string name;
  vkc::DType dtype = vkc::DType::f32;
  std::optional<vkc::Shape> shape;  // unset: symbolic, only a file (or --input-shape) gives it
  std::string symbolic;             // which dim is symbolic, for the message
};

InputSpec spec_of(const vkc::ModelInputInfo& in, const std::map<std::string, vkc::Shape>& pinned) {
  InputSpec s{in.name, in.dtype, std::nullopt, ""};
  auto pin = pinned.find(in.name);
  if (pin != pinned.end()) {
    s.shape = pin->second;
    return s;
  }
  if (!in.has_shape) {
    s.symbolic = "has no declared shape";
    return s;
  }
  vkc::Shape shape;
  for (size_t d = 0; d < in.dims.size(); ++d) {
    if (in.dims[d].value < 0 && s.symbolic.empty())
      s.symbolic = vkc::cat("dim ", d, in.dims[d].symbol.empty() ? "" : " ('" + in.dims[d].symbol + "')", " is symbolic");
    shape.push_back(in.dims[d].value);
  }
  if (s.symbolic.empty()) s.shape = shape;
  return s;
}

void print_origin(vkc::ModuleOrigin origin, const vkc::CompileOptions& compile_options) {
  switch (origin) {
    case vkc::ModuleOrigin::Loaded: break;
    case vkc::ModuleOrigin::Compiled:
      std::cout << "module: compiled"
                << (compile_options.module_cache_dir.value_or("").empty() ? "" : " (kept in the module cache)") << "\n";
      break;
    case vkc::ModuleOrigin::Cached: std::cout << "module: loaded from the module cache\n"; break;
    case vkc::ModuleOrigin::Recompiled:
      std::cout << "module: recompiled from its source graph (written by another vkc format version)\n";
      break;
  }
}

// --input files (converted to the input's dtype, with notes), then seeded random data for the rest.
std::map<std::string, vkc::HostTensor> make_inputs(const std::vector<std::string>& input_args, const std::string& seed,
                                                   uint32_t seed_value, const std::vector<InputSpec>& specs) {
  std::map<std::string, vkc::HostTensor> inputs;
  std::string known;
  for (const InputSpec& s : specs) known += (known.empty() ? "" : ", ") + s.name;
  for (const std::string& a : input_args) {
    auto [name, file] = vkc::cli::split_assignment(a, "--input");
    const InputSpec* spec = nullptr;
    for (const InputSpec& s : specs)
      if (s.name == name) spec = &s;
    vkc::check(spec != nullptr, "--input ", name, ": the module has no input named '", name, "' (its inputs are: ",
               known, ")");
    // NumPy's float64 and Fortran-order defaults are converted, each with a note on stderr, so
    // the user knows the file they gave is not exactly what ran.
    std::vector<std::string> notes;
    inputs[name] = vkc::read_npy_for(file, spec->dtype, notes);
    for (const std::string& n : notes) std::cerr << "vk-run: note: " << n << "\n";
  }
  // A seed that generates nothing would be silently ignored.
  vkc::check(seed.empty() || inputs.size() < specs.size(),
             "usage: --random-inputs is unused: every input is given with --input");
  std::mt19937 rng(seed_value);
  for (const InputSpec& t : specs) {
    if (inputs.count(t.name)) continue;
    vkc::check(!seed.empty(), "input '", t.name, "' is missing (give --input ", t.name,
               "=FILE.npy or --random-inputs SEED)");
    vkc::check(t.shape.has_value(), "input '", t.name, "' ", t.symbolic, ": give --input ", t.name,
               "=FILE.npy, or --input-shape ", t.name, "=D0,D1,... for random data");
    vkc::HostTensor h(t.dtype, *t.shape);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (int64_t i = 0; i < h.numel(); ++i) h.set_f64(i, vkc::is_float(t.dtype) ? dist(rng) : double(rng() % 8));
    inputs[t.name] = std::move(h);
  }
  return inputs;
}

int run_main(int argc, char** argv) {
  vkc::cli::Args args(argc, argv);
  if (args.flag("--help") || args.flag("-h")) {
    std::cout << kUsage;
    return 0;
  }
  vkc::DeviceOptions device_options;
  device_options.select = args.value("--device");
  device_options.robust_buffer_access = args.flag("--robust");
  if (args.flag("--list-devices")) {
    args.require_alone("--list-devices");
    for (const vkc::DeviceInfo& d : vkc::Device::enumerate()) {
      std::cout << d.index << ": " << d.name << " (" << d.type << ", " << d.driver << ")\n";
      std::cout << "   tensor cores: "
                << (d.tensor_cores.empty() ? std::string("none (fp16 products on the SIMT kernels)")
                                           : "VK_" + d.tensor_cores + "_cooperative_matrix")
                << "\n";
      if (!d.cooperative_matrix_shapes.empty()) {
        std::cout << "   cooperative matrix shapes:";
        for (const std::string& s : d.cooperative_matrix_shapes) std::cout << " " << s << ";";
        std::cout << "\n";
      }
      // The gate's verdicts (measured once per device and driver, then cached): opening the
      // device runs or reads them (runtime/cooperative_matrix_gate.h).
      if (!d.tensor_cores.empty()) {
        vkc::DeviceOptions one = device_options;
        one.select = std::to_string(d.index);
        std::vector<std::string> verdicts = vkc::Device(one).cooperative_matrix_gate();
        if (verdicts.empty()) std::cout << "   gate: skipped (VKC_NO_GATE=1)\n";
        for (const std::string& v : verdicts) std::cout << "   gate: " << v << "\n";
      }
    }
    return 0;
  }
  if (args.flag("--self-test")) {
    args.require_alone_but_consumed("--self-test");
    return vkc::cli::run_self_test(device_options.select, device_options.robust_buffer_access, std::cout);
  }
  std::vector<std::string> input_args = args.values("--input");
  std::string seed = args.value("--random-inputs");
  std::string out_dir = args.value("--output-dir");
  bool check_ref = args.flag("--check");
  // values(), not value(): an empty "--tolerance ''" is given, and must be refused, not defaulted.
  std::vector<std::string> tolerance_text = args.values("--tolerance");
  vkc::check(tolerance_text.size() <= 1, "usage: --tolerance given more than once");
  vkc::check(tolerance_text.empty() || check_ref, "usage: --tolerance applies only with --check");
  // The default depends on the module's precision, known once it is loaded or compiled.
  std::optional<double> tolerance_given;
  if (!tolerance_text.empty()) tolerance_given = vkc::cli::parse_double(tolerance_text[0], "--tolerance", 0.0);
  // Range-checked before narrowing: 4294967296 would otherwise wrap to 0 runs.
  int bench = int(vkc::cli::parse_int(args.value("--benchmark", "0"), "--benchmark", 0,
                                      std::numeric_limits<int>::max()));
  bool profile = args.flag("--profile");
  bool device_io = args.flag("--device-io");
  vkc::SessionOptions session_options;
  session_options.recompile_if_unmet = args.flag("--recompile");
  const bool no_cache = args.flag("--no-cache");
  if (args.flag("--no-pipeline-cache") || no_cache) session_options.pipeline_cache_dir = "";
  vkc::CompileOptions compile_options;
  compile_options.input_shapes = vkc::cli::parse_input_shapes(args.values("--input-shape"));
  if (!no_cache) compile_options.module_cache_dir = vkc::cache_dir("modules");
  const std::string precision = args.value("--precision");
  if (!precision.empty()) {
    vkc::parse_precision(precision, "--precision");  // a clear error for an unknown one
    compile_options.precision = precision;
  }
  std::vector<std::string> pos = args.positionals();
  args.finish();
  vkc::check(pos.size() == 1, "usage: expected one module directory, .vkcm file or model file (see --help)");
  vkc::check(!device_io || bench > 0, "usage: --device-io applies only with --benchmark N");
  // Module::load takes no compile options: the shapes and the recompile flag would be ignored.
  const bool compiled = is_compiled_module(pos[0]);
  vkc::check(!compiled || compile_options.input_shapes.empty(),
             "usage: --input-shape applies to a model file (.vkir/.onnx), not to the compiled module ", pos[0]);
  vkc::check(!compiled || precision.empty(), "usage: --precision applies to a model file (.vkir/.onnx); the compiled "
             "module ", pos[0], " keeps the precision it was compiled in");
  vkc::check(compiled || !session_options.recompile_if_unmet,
             "usage: --recompile applies to a compiled module; ", pos[0], " is compiled for the device anyway");
  const uint32_t seed_value =
      seed.empty() ? 0u
                   : uint32_t(vkc::cli::parse_int(seed, "--random-inputs", 0, std::numeric_limits<uint32_t>::max()));

  if (!out_dir.empty()) vkc::cli::prepare_output_dir(out_dir, "--output-dir");
  std::set<std::string> input_names;  // a second --input for a name would silently replace the first
  for (const std::string& a : input_args) {
    std::string name = vkc::cli::split_assignment(a, "--input").first;
    vkc::check(input_names.insert(name).second, "usage: --input ", name, " given more than once");
  }

  // A module that cannot be read (damaged, another format version) is refused before any GPU work.
  std::optional<vkc::Module> loaded;
  if (compiled && !session_options.recompile_if_unmet) loaded.emplace(vkc::Module::load(pos[0]));
  // An ONNX model runs through a ModelSession: its symbolic dims take the inputs' shapes, and
  // inputs that decide shapes (a Reshape's shape fed as an input) are compiled in as values.
  const bool onnx_model = !compiled && pos[0].size() > 5 && pos[0].compare(pos[0].size() - 5, 5, ".onnx") == 0;
  vkc::Device device(device_options);
  std::cout << "device: " << device.info().name << " (" << device.info().type << ", " << device.info().driver << ")\n";
  std::optional<vkc::ModelSession> model;
  std::optional<vkc::Module> module_holder;
  std::vector<InputSpec> specs;
  if (onnx_model) {
    model.emplace(device, pos[0], vkc::ModelSessionOptions{compile_options, session_options});
    for (const vkc::ModelInputInfo& in : model->inputs()) specs.push_back(spec_of(in, compile_options.input_shapes));
  } else {
    module_holder.emplace(loaded    ? *loaded
                          : compiled ? vkc::Module::load_or_recompile(pos[0], device)
                                     : vkc::Module::compile(pos[0], device, compile_options));
    for (const vkc::TensorInfo& t : module_holder->inputs()) specs.push_back({t.name, t.dtype, t.shape, ""});
  }
  // A module's inputs are made (read, or seeded random data) only once the device is known to run
  // it: a refusal comes before gigabytes of random inputs would. A model's decide its shapes.
  std::map<std::string, vkc::HostTensor> inputs;

  // A compiled module's refusals (limits the device lacks, its source graph failing to recompile)
  // do not know the module's path: name it, as every other error names its file.
  std::optional<vkc::Session> session_holder;
  vkc::Session* session_ptr = nullptr;
  if (model) {
    inputs = make_inputs(input_args, seed, seed_value, specs);
    session_ptr = &model->prepare(inputs);
    const vkc::Specialization& sp = model->last_specialization();
    print_origin(sp.origin, compile_options);
    std::cout << "shapes: " << sp.key << (sp.new_now ? "" : " (compiled earlier in this session)") << "\n";
    if (sp.new_now)
      std::cout << "specialized for these shapes in " << std::fixed << std::setprecision(1) << sp.compile_ms
                << " ms (" << (sp.origin == vkc::ModuleOrigin::Cached ? "loaded from the module cache" : "compiled")
                << ", " << sp.dispatches << " dispatches)\n";
    if (!sp.bound_inputs.empty()) {
      std::cout << "compiled in as values (they decide shapes):";
      for (const std::string& b : sp.bound_inputs) std::cout << " " << b;
      std::cout << "\n";
    }
    for (const std::string& b : sp.bound_inputs) inputs.erase(b);
  } else {
    print_origin(module_holder->origin(), compile_options);
    try {
      session_holder.emplace(device, *module_holder, session_options);
    } catch (const vkc::Error& e) {
      if (!compiled) throw;
      throw vkc::Error(vkc::cat(pos[0], ": ", e.what()));
    }
    session_ptr = &*session_holder;
    inputs = make_inputs(input_args, seed, seed_value, specs);
  }
  vkc::Session& session = *session_ptr;
  auto t0 = std::chrono::steady_clock::now();
  vkc::RunOptions run_options;
  run_options.profile = profile;
  vkc::Outputs outputs = session.run(inputs, run_options);
  double first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "ran " << session.module().dispatch_count() << " dispatches (" << session.module().barrier_count()
            << " barriers, arena " << std::fixed << std::setprecision(1)
            << double(session.module().arena_bytes()) / (1 << 20) << " MiB) in " << std::fixed << std::setprecision(3)
            << first_ms << " ms (first run, host clock)\n";
  for (const vkc::TensorInfo& t : session.module().outputs())
    std::cout << "output " << t.name << ": " << summary(outputs.at(t.name)) << "\n";
  if (!session.module().outputs().empty()) print_top5(session.module().outputs().front().name, outputs);

  if (bench > 0) {
    // Views of the inputs: the host-to-host time is the upload, the work and the download, not a
    // copy of the input tensors into each run's Inputs (77 MB: tens of ms of page faults).
    const vkc::Inputs host_inputs = vkc::Inputs::view(inputs);
    std::vector<double> times;
    for (int i = 0; i < bench; ++i) {
      auto s = std::chrono::steady_clock::now();
      session.run(host_inputs);
      times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
    }
    std::sort(times.begin(), times.end());
    std::cout << "benchmark: " << bench << " runs, median " << times[times.size() / 2] << " ms, min "
              << times.front() << " ms (host clock, includes upload/download)\n";
  }
  if (bench > 0 && device_io) {
    // What a GPU-resident framework (a CUDA graph replay with its tensors on the GPU) is compared
    // with: submit, execute, wait; inputs uploaded once, outputs left on the device.
    vkc::Inputs resident;
    for (const auto& [name, t] : inputs) resident.set(name, vkc::DeviceTensor::upload(device, t));
    vkc::RunOptions keep;
    for (const vkc::TensorInfo& t : session.module().outputs()) keep.keep_on_device.insert(t.name);
    session.run(resident, keep);  // the first run with device tensors binds new buffers
    std::vector<double> times;
    for (int i = 0; i < bench; ++i) {
      auto s = std::chrono::steady_clock::now();
      session.run(resident, keep);
      times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
    }
    std::sort(times.begin(), times.end());
    std::cout << "benchmark (device-resident inputs and outputs): " << bench << " runs, median "
              << times[times.size() / 2] << " ms, min " << times.front() << " ms (host clock)\n";
  }
  if (profile) {
    // After a benchmark, profile a warm execution: the first one also pays for the driver's
    // shader compilation, which would swamp the per-dispatch times.
    if (bench > 0) session.run(inputs, run_options);
    double total = 0;
    for (const vkc::DispatchTiming& p : session.last_profile()) {
      std::cout << "  " << std::left << std::setw(24) << p.name << std::right << std::setw(10) << p.ms << " ms "
                << std::setw(10) << std::setprecision(1) << p.gflops << " GFLOP/s " << std::setw(8) << p.gbps
                << " GB/s";
      // The driver's register count where captured (VKC_PIPELINE_STATS=1): with the workgroup
      // memory, what decides how many workgroups share a compute unit.
      for (const std::string& s : p.statistics)
        if (s.rfind("Register Count=", 0) == 0) std::cout << "  " << s;
      std::cout << "\n" << std::setprecision(3);
      total += p.ms;
    }
    std::cout << "  total GPU time " << total << " ms\n";
  }
  if (!out_dir.empty()) {
    std::vector<std::string> names;
    for (const vkc::TensorInfo& t : session.module().outputs()) names.push_back(t.name);
    std::vector<std::string> files = vkc::cli::unique_file_names(names);
    std::map<std::string, std::string> owner;  // file stem -> the output written there
    for (size_t i = 0; i < names.size(); ++i) owner[files[i]] = names[i];
    for (size_t i = 0; i < names.size(); ++i) {
      std::string plain = vkc::cli::safe_file_name(names[i]);
      if (files[i] != plain)
        std::cout << "note: outputs '" << owner[plain] << "' and '" << names[i] << "' both map to " << plain
                  << ".npy; '" << names[i] << "' is written to " << files[i] << ".npy\n";
      vkc::write_npy(out_dir + "/" + files[i] + ".npy", outputs.at(names[i]));
    }
  }
  if (check_ref) {
    const double tolerance = tolerance_given.value_or(session.module().precision() == "fp16" ? 5e-3 : 1e-4);
    check_against_reference(session.module(), inputs, outputs, tolerance);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return vkc::cli::run_tool("vk-run", [&] { return run_main(argc, argv); });
}
