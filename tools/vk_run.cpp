// vk-run: runs a compiled module directory (or compiles a .vkir in process) on a Vulkan device,
// with .npy inputs and outputs, optional reference check, benchmark and per-dispatch profile.
#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <random>

#include "ir/interpreter.h"
#include "ir/text_format.h"
#include "support/error.h"
#include "support/file_io.h"
#include "support/npy.h"
#include "tools/cli_common.h"
#include "umbrella/vkc.h"

namespace {

const char* kUsage =
    "usage: vk-run MODULE_DIR|MODEL.vkir|MODEL.onnx [--input NAME=FILE.npy ...] [--random-inputs SEED]\n"
    "              [--input-shape NAME=D0,D1,...]\n"
    "              [--output-dir DIR] [--device INDEX|NAME] [--check [--tolerance REL]]\n"
    "              [--benchmark N] [--profile] [--list-devices]\n";

struct Loaded {
  vkc::ModuleImage module;
  std::optional<vkc::ir::Graph> graph;  // for --check
};

Loaded load(const std::string& path, const vkc::rt::Context& context, const vkc::LoadOptions& options) {
  Loaded l;
  if (std::filesystem::is_directory(path)) {
    l.module = vkc::read_module_dir(path);
    if (std::filesystem::exists(path + "/source.vkir"))
      l.graph = vkc::ir::parse_graph_file(path + "/source.vkir");
  } else {
    l.graph = vkc::load_graph(path, options);
    l.module = vkc::compile_for_device(*l.graph, context);
  }
  return l;
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

int run_main(int argc, char** argv) {
  vkc::cli::Args args(argc, argv);
  if (args.flag("--help") || args.flag("-h")) {
    std::cout << kUsage;
    return 0;
  }
  vkc::rt::ContextOptions co;
  co.device = args.value("--device");
  if (args.flag("--list-devices")) {
    for (const vkc::rt::DeviceInfo& d : vkc::rt::Context::enumerate_devices())
      std::cout << d.index << ": " << d.name << " (" << d.type << ", " << d.driver << ")\n";
    return 0;
  }
  std::vector<std::string> input_args = args.values("--input");
  std::string seed = args.value("--random-inputs");
  std::string out_dir = args.value("--output-dir");
  bool check_ref = args.flag("--check");
  double tolerance = vkc::cli::parse_double(args.value("--tolerance", "1e-4"), "--tolerance");
  int bench = int(vkc::cli::parse_int(args.value("--benchmark", "0"), "--benchmark"));
  bool profile = args.flag("--profile");
  vkc::LoadOptions load_options{vkc::cli::parse_input_shapes(args.values("--input-shape"))};
  std::vector<std::string> pos = args.positionals();
  args.finish();
  vkc::check(pos.size() == 1, "usage: expected one module directory or model file (see --help)");
  vkc::check(bench >= 0, "usage: --benchmark needs a count >= 0");

  vkc::rt::Context context(co);
  std::cout << "device: " << context.device_info().name << " (" << context.device_info().type << ", "
            << context.device_info().driver << ")\n";
  Loaded loaded = load(pos[0], context, load_options);
  const vkc::Manifest& m = loaded.module.manifest;

  std::map<std::string, vkc::HostTensor> inputs;
  for (const std::string& a : input_args) {
    auto [name, file] = vkc::cli::split_assignment(a, "--input");
    vkc::check(m.find_tensor(name) && m.tensor(name).role == vkc::TensorRole::Input,
               "--input ", name, ": the module has no input named '", name, "'");
    inputs[name] = vkc::read_npy(file);
  }
  std::mt19937 rng(seed.empty() ? 0u : unsigned(vkc::cli::parse_int(seed, "--random-inputs")));
  for (const std::string& name : m.inputs) {
    if (inputs.count(name)) continue;
    vkc::check(!seed.empty(), "input '", name, "' is missing (give --input ", name,
               "=FILE.npy or --random-inputs SEED)");
    const vkc::TensorDesc& t = m.tensor(name);
    vkc::HostTensor h(t.dtype, t.shape);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (int64_t i = 0; i < h.numel(); ++i) h.set_f64(i, vkc::is_float(t.dtype) ? dist(rng) : double(rng() % 8));
    inputs[name] = std::move(h);
  }

  vkc::rt::Program program(context, loaded.module);
  auto t0 = std::chrono::steady_clock::now();
  std::map<std::string, vkc::HostTensor> outputs = program.execute(inputs, {profile});
  double first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "ran " << m.dispatches.size() << " dispatches in " << std::fixed << std::setprecision(3)
            << first_ms << " ms (first run, host clock)\n";
  for (const std::string& name : m.outputs) std::cout << "output " << name << ": " << summary(outputs.at(name)) << "\n";

  if (bench > 0) {
    std::vector<double> times;
    for (int i = 0; i < bench; ++i) {
      auto s = std::chrono::steady_clock::now();
      program.execute(inputs);
      times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
    }
    std::sort(times.begin(), times.end());
    std::cout << "benchmark: " << bench << " runs, median " << times[times.size() / 2] << " ms, min "
              << times.front() << " ms (host clock, includes upload/download)\n";
  }
  if (profile) {
    double total = 0;
    for (const vkc::rt::DispatchProfile& p : program.last_profile()) {
      std::cout << "  " << std::left << std::setw(24) << p.name << std::right << std::setw(10) << p.ms
                << " ms " << std::setw(10) << std::setprecision(1) << p.gflops << " GFLOP/s "
                << std::setw(8) << p.gbps << " GB/s\n"
                << std::setprecision(3);
      total += p.ms;
    }
    std::cout << "  total GPU time " << total << " ms\n";
  }
  if (!out_dir.empty()) {
    std::filesystem::create_directories(out_dir);
    for (const auto& [name, t] : outputs) vkc::write_npy(out_dir + "/" + vkc::cli::safe_file_name(name) + ".npy", t);
  }
  if (check_ref) {
    vkc::check(loaded.graph.has_value(), "--check needs the source graph (source.vkir in the module)");
    std::map<std::string, vkc::HostTensor> ref = vkc::ir::interpret(*loaded.graph, inputs);
    bool ok = true;
    for (const auto& [name, r] : ref) {
      const vkc::HostTensor& a = outputs.at(name);
      double diff2 = 0, ref2 = 0, max_abs = 0;
      bool mismatch = false;
      for (int64_t i = 0; i < r.numel(); ++i) {
        double x = a.get_f64(i), y = r.get_f64(i);
        if (std::isnan(x) != std::isnan(y)) mismatch = true;
        if (std::isnan(x) || std::isnan(y)) continue;
        max_abs = std::max(max_abs, std::abs(x - y));
        diff2 += (x - y) * (x - y);
        ref2 += y * y;
      }
      double rel = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
      bool pass = !mismatch && rel <= tolerance;
      ok &= pass;
      std::cout << "check " << name << ": max abs " << std::scientific << std::setprecision(3) << max_abs
                << ", rel " << rel << (mismatch ? " (NaN mismatch)" : "") << (pass ? " ok" : " FAIL") << "\n"
                << std::fixed;
    }
    vkc::check(ok, "outputs differ from the reference interpreter beyond tolerance ", tolerance);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return vkc::cli::run_tool("vk-run", [&] { return run_main(argc, argv); });
}
