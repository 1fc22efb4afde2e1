// vkc_bench: the vkc half of issue 9's benchmark. Measures the device's copy bandwidth and fp32 FMA
// peak through vkc kernels, then times every case of bench_cases.cpp (median of GPU timestamps
// over >= 20 runs, two input sets alternating), and writes for torch_reference.py:
//   DIR/vkc.json                      device, peaks, per case: timing, dispatches, files
//   DIR/<case>/in_<name>.npy          input set 0 (what PyTorch re-runs and compares against)
//   DIR/<case>/out_<name>.npy         vkc's outputs for input set 0
// Usage: vkc_bench [--out DIR] [--runs N] [--cases a,b] [--small] [--device X] [--force-staging]
//                  [--tensor-cores khr|nv] [--matmul MxNxK[@TILE],...] [--conv NxCxHxW:FxCxKHxKW[:fp16],...]
//                  [--force OP=STRATEGY]... [--no-peaks]
// --matmul adds f32 matmul cases (run whatever --cases says), with the planner's tile or a forced
// one in the `tiled=` syntax, e.g. 1576x768x3072@128x64x16/8x8/2/k3: tile and split sweeps on new
// shapes without a rebuild.
// --conv adds NCHW convs (stride 1, same padding; run like --matmul cases), float32, or float16 on
// tensor cores with :fp16.
// --force sets OP's forced strategy in every case that has the op (repeatable), e.g.
// --force conv=implicit_gemm=256x128x16/16x8/2: one tile measured on all the conv cases of a run.
// --tensor-cores plans with only that cooperative-matrix extension (default: what vkc prefers,
// KHR where the device has it), to compare the two forms on one device in one run.
// --small shrinks every case and checks outputs against the reference interpreter: a plumbing
// test that runs on lavapipe (its timings mean nothing).
// --no-peaks skips the copy and FMA ceilings (vkc.json then has no "peaks"): A/B runs of vkc
// against itself, where they cost most of a short run's device time.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "bench/bench_cases.h"
#include "bench/bench_peaks.h"
#include "bench/bench_run.h"
#include "codegen/compiler.h"
#include "ir/interpreter.h"
#include "runtime/context_internal.h"  // force_staging, the hook the runtime tests use too
#include "support/error.h"
#include "support/npy.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace vkc::bench {
namespace {

struct Args {
  std::string out = "/tmp/vkcbench";
  std::string device;
  std::vector<std::string> cases;  // name substrings; empty: all
  int runs = 25;
  bool small = false;
  // No copy-bandwidth and FMA ceilings (before and after the cases: 1 GiB buffers filled,
  // uploaded and copied three ways, twice): for A/B runs of a few cases, which compare vkc with
  // itself. bench/torch_reference.py needs the ceilings.
  bool no_peaks = false;
  // Storage buffers in plain device-local memory instead of the runtime's default preference for
  // device-local + host-visible (ReBAR) memory: a test of whether the memory type limits bandwidth.
  bool force_staging = false;
  std::string tensor_cores;  // "", "khr" or "nv"
  std::vector<BenchCase> extra;  // --matmul, --conv
  std::map<std::string, std::string> forced;  // --force: op -> strategy, over every case's own
};

// Splits "a,b,c" into its non-empty parts.
std::vector<std::string> comma_list(const std::string& list) {
  std::vector<std::string> parts;
  for (size_t p = 0; p <= list.size();) {
    size_t q = list.find(',', p);
    if (q == std::string::npos) q = list.size();
    if (q > p) parts.push_back(list.substr(p, q - p));
    p = q + 1;
  }
  return parts;
}

// "MxNxK[+ln][+gelu][@TILE]" -> a matmul case (+ln: a LayerNorm of the lhs in front; +gelu: a bias
// and GELU fused after).
BenchCase matmul_spec_case(const std::string& spec) {
  size_t at = spec.find('@');
  std::string dims = spec.substr(0, at);
  MatmulExtras extras;
  for (size_t plus; (plus = dims.rfind('+')) != std::string::npos; dims.resize(plus)) {
    const std::string flag = dims.substr(plus + 1);
    check(flag == "ln" || flag == "gelu", "vkc_bench: --matmul takes MxNxK[+ln][+gelu][@TILE], not '", spec, "'");
    (flag == "ln" ? extras.layer_norm : extras.gelu) = true;
  }
  int64_t m = 0, n = 0, k = 0;
  char x1 = 0, x2 = 0;
  int used = 0;
  bool ok = std::sscanf(dims.c_str(), "%ld%c%ld%c%ld%n", &m, &x1, &n, &x2, &k, &used) == 5 && x1 == 'x' &&
            x2 == 'x' && used == int(dims.size()) && m > 0 && n > 0 && k > 0;
  check(ok, "vkc_bench: --matmul takes MxNxK[+ln][+gelu][@TILE], not '", spec, "'");
  return matmul_mnk_case(m, n, k, at == std::string::npos ? "" : spec.substr(at + 1), extras);
}

// "NxCxHxW:FxCxKHxKW[:fp16]" -> a conv case (float16 on tensor cores with :fp16).
BenchCase conv_spec_case(std::string spec) {
  const std::string fp16 = ":fp16";
  const bool half = spec.size() > fp16.size() && spec.compare(spec.size() - fp16.size(), fp16.size(), fp16) == 0;
  if (half) spec.resize(spec.size() - fp16.size());
  auto dims = [&](const std::string& text) {
    Shape s;
    for (size_t p = 0; p <= text.size();) {
      size_t q = text.find('x', p);
      if (q == std::string::npos) q = text.size();
      const std::string d = text.substr(p, q - p);
      check(!d.empty() && d.size() < 10 && d.find_first_not_of("0123456789") == std::string::npos,
            "vkc_bench: --conv takes NxCxHxW:FxCxKHxKW[:fp16], not '", spec, "'");
      s.push_back(std::stoll(d));
      p = q + 1;
    }
    return s;
  };
  size_t colon = spec.find(':');
  check(colon != std::string::npos, "vkc_bench: --conv takes NxCxHxW:FxCxKHxKW[:fp16], not '", spec, "'");
  return conv_shape_case(dims(spec.substr(0, colon)), dims(spec.substr(colon + 1)), half ? DType::f16 : DType::f32);
}

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    auto value = [&]() -> std::string {
      check(i + 1 < argc, "vkc_bench: ", s, " needs a value");
      return argv[++i];
    };
    if (s == "--out") a.out = value();
    else if (s == "--device") a.device = value();
    else if (s == "--runs") a.runs = std::stoi(value());
    else if (s == "--small") a.small = true;
    else if (s == "--no-peaks") a.no_peaks = true;
    else if (s == "--force-staging") a.force_staging = true;
    else if (s == "--tensor-cores") {
      a.tensor_cores = value();
      check(a.tensor_cores == "khr" || a.tensor_cores == "nv", "vkc_bench: --tensor-cores takes khr or nv, not '",
            a.tensor_cores, "'");
    }
    else if (s == "--cases") a.cases = comma_list(value());
    else if (s == "--force") {
      std::string f = value();
      size_t eq = f.find('=');
      check(eq != std::string::npos && eq > 0 && eq + 1 < f.size(), "vkc_bench: --force takes OP=STRATEGY, not '", f,
            "'");
      a.forced[f.substr(0, eq)] = f.substr(eq + 1);
    }
    else if (s == "--matmul") {
      for (const std::string& spec : comma_list(value())) a.extra.push_back(matmul_spec_case(spec));
    } else if (s == "--conv") {
      for (const std::string& spec : comma_list(value())) a.extra.push_back(conv_spec_case(spec));
    } else {
      throw Error(cat("vkc_bench: unknown argument '", s, "'"));
    }
  }
  check(a.runs >= 1, "vkc_bench: --runs must be >= 1");
  return a;
}

bool selected(const Args& a, const std::string& name) {
  if (a.cases.empty()) return true;
  // A pattern matches anywhere in the name; one ending in '$' only the whole name (the fp32 seed
  // conv without its _fp16 and _int8 variants).
  for (const std::string& s : a.cases)
    if (s.size() > 1 && s.back() == '$' ? name == s.substr(0, s.size() - 1) : name.find(s) != std::string::npos)
      return true;
  return false;
}

json tensor_json(const std::string& file, DType dtype, const Shape& shape) {
  return {{"file", file}, {"dtype", std::string(dtype_name(dtype))}, {"shape", shape}};
}

// Largest relative L2 error over float outputs and exact equality for integer ones; used only in
// --small mode, where the float64 interpreter is affordable.
std::string check_with_interpreter(const ir::Graph& g, const std::map<std::string, HostTensor>& inputs,
                                   const std::map<std::string, HostTensor>& outputs) {
  std::map<std::string, HostTensor> ref = ir::interpret(g, inputs);
  for (const auto& [name, r] : ref) {
    const HostTensor& o = outputs.at(name);
    if (is_integer(r.dtype())) {
      for (int64_t i = 0; i < r.numel(); ++i)
        if (o.get_i64(i) != r.get_i64(i)) return cat("MISMATCH ", name, "[", i, "]");
      continue;
    }
    double num = 0, den = 0;
    for (int64_t i = 0; i < r.numel(); ++i) {
      double d = o.get_f64(i) - r.get_f64(i);
      num += d * d;
      den += r.get_f64(i) * r.get_f64(i);
    }
    double rel = std::sqrt(num / std::max(den, 1e-30));
    // float16 results carry f16 rounding (~3e-4 relative) against the float64 reference.
    double tol = r.dtype() == DType::f16 ? 5e-3 : 1e-5;
    if (!(rel <= tol)) return cat("MISMATCH ", name, " rel_l2 ", rel);
  }
  return "ok";
}

json run_case(rt::Context& ctx, const BenchCase& c, const Args& args) {
  json j{{"name", c.name}, {"group", c.group}, {"flops", c.flops}, {"torch", c.torch}};
  ir::Graph g;
  c.build(g);
  double bytes = 0;
  for (const ir::Value* v : g.inputs()) bytes += double(v->type.size_bytes());
  for (const ir::GraphOutput& o : g.outputs()) bytes += double(o.value->type.size_bytes());
  j["bytes"] = bytes;

  codegen::CompileOptions options;
  options.target = ctx.limits();
  options.forced_strategy = c.forced;
  for (const auto& [op, strategy] : args.forced) options.forced_strategy[op] = strategy;
  if (!args.forced.empty()) j["forced"] = options.forced_strategy;
  if (args.tensor_cores == "khr") options.target.cooperative_matrix_nv = false;
  if (args.tensor_cores == "nv") options.target.cooperative_matrix_khr = false;
  if (c.max_binding_bytes != 0 && c.max_binding_bytes < options.target.max_storage_buffer_range) {
    options.target.max_storage_buffer_range = c.max_binding_bytes;
    options.target.name += "-range" + std::to_string(c.max_binding_bytes);
  }
  j["max_binding_bytes"] = c.max_binding_bytes;
  ModuleImage module = codegen::compile_graph(g, options);
  rt::Program program(ctx, module);
  for (size_t i = 0; i < module.manifest.dispatches.size(); ++i) {
    const DispatchDesc& d = module.manifest.dispatches[i];
    // The driver's compile statistics (registers, local memory) explain occupancy; the log gets
    // them too, since only a few files come back from the GPU machine.
    std::vector<std::string> stats = program.pipeline_statistics(i);
    j["dispatches"].push_back({{"name", d.name}, {"kernel", d.kernel}, {"strategy", d.strategy},
                               {"workgroup_size", d.workgroup_size}, {"workgroup_count", d.workgroup_count},
                               {"workgroup_memory_bytes", d.workgroup_memory_bytes}, {"tiles", d.tiles},
                               {"flops", d.flops}, {"bytes", d.bytes}, {"pipeline_statistics", stats}});
    if (!stats.empty()) {
      std::string line;
      for (const std::string& st : stats) line += (line.empty() ? "" : ", ") + st;
      std::printf("  %s %s [%u threads, %u B shared]: %s\n", c.name.c_str(), d.name.c_str(),
                  d.workgroup_size[0] * d.workgroup_size[1] * d.workgroup_size[2], d.workgroup_memory_bytes,
                  line.c_str());
    }
  }

  // Two input sets on the device; set 0 also goes to disk for the PyTorch comparison.
  const fs::path dir = fs::path(args.out) / c.name;
  fs::create_directories(dir);
  std::vector<DeviceInputs> sets(2);
  std::map<std::string, HostTensor> set0;
  for (size_t s = 0; s < sets.size(); ++s) {
    for (size_t i = 0; i < g.inputs().size(); ++i) {
      const ir::Value* v = g.inputs()[i];
      bool iota = std::find(c.iota_inputs.begin(), c.iota_inputs.end(), v->name) != c.iota_inputs.end();
      HostTensor h = iota ? iota_tensor(v->type.dtype, v->type.shape)
                          : random_tensor(v->type.dtype, v->type.shape, 7919 * (s + 1) + i);
      auto t = std::make_shared<rt::DeviceTensor>(ctx, v->type.dtype, v->type.shape);
      t->upload(h);
      sets[s][v->name] = t;
      if (s == 0) {
        std::string file = (dir / ("in_" + v->name + ".npy")).string();
        write_npy(file, h);
        j["inputs"][v->name] = tensor_json(file, v->type.dtype, v->type.shape);
        set0[v->name] = std::move(h);
      }
    }
  }

  // Correctness run: outputs poisoned first, so an element no kernel wrote shows up as NaN.
  rt::ExecuteOptions check_run;
  check_run.poison_outputs = true;
  std::set<std::string> outs(module.manifest.outputs.begin(), module.manifest.outputs.end());
  program.submit({}, sets[0], outs, check_run);
  rt::ExecutionResults results = program.wait();
  std::map<std::string, HostTensor> outputs;
  for (const auto& [name, t] : results.device) {
    HostTensor h = t->download();
    std::string file = (dir / ("out_" + name + ".npy")).string();
    write_npy(file, h);
    j["outputs"][name] = tensor_json(file, h.dtype(), h.shape());
    outputs[name] = std::move(h);
  }
  if (args.small) j["interpreter_check"] = check_with_interpreter(g, set0, outputs);

  Timing t = time_program(program, sets, 3, args.runs, std::min(args.runs, 20), 30);
  j["vkc"] = {{"median_ms", t.median_ms}, {"min_ms", t.min_ms}, {"max_ms", t.max_ms},
              {"wall_median_ms", t.wall_median_ms}, {"runs", t.gpu_ms.size()}, {"gpu_ms", t.gpu_ms}};
  for (const auto& [name, ms] : t.dispatches) j["vkc"]["dispatch_median_ms"][name] = ms;
  // Per input set: a data-dependent kernel (sort, topk) shows up as two different medians.
  std::vector<double> by_set[2];
  for (size_t i = 0; i < t.gpu_ms.size(); ++i) by_set[i % 2].push_back(t.gpu_ms[i]);
  j["vkc"]["median_ms_by_set"] = {median(by_set[0]), median(by_set[1])};
  return j;
}

int run(int argc, char** argv) {
  Args args = parse_args(argc, argv);
  fs::create_directories(args.out);
  rt::ContextOptions co;
  co.device = args.device;
  co.pipeline_statistics = true;
  rt::Context ctx(co);
  ctx.impl().force_staging = args.force_staging;
  const rt::DeviceInfo& info = ctx.device_info();
  std::printf("vkc_bench: device %s (%s), driver %s, tensor cores %s\n", info.name.c_str(), info.type.c_str(),
              info.driver.c_str(), args.tensor_cores.empty() ? info.tensor_cores.c_str() : args.tensor_cores.c_str());
  std::fflush(stdout);

  json report{{"device", info.name}, {"device_type", info.type}, {"driver", info.driver},
              {"small", args.small}, {"runs", args.runs}, {"force_staging", args.force_staging},
              {"tensor_cores", args.tensor_cores.empty() ? info.tensor_cores : args.tensor_cores}};
  Peaks peaks;
  if (!args.no_peaks) {
    peaks = measure_peaks(ctx, args.small, args.runs);
    report["peaks"] = {{"copy_gbps", peaks.copy_gbps}, {"fma_gflops", peaks.fma_gflops}, {"detail", peaks.detail}};
    std::printf("peaks: copy %.0f GB/s (read+write), fp32 FMA %.1f TFLOP/s\n", peaks.copy_gbps,
                peaks.fma_gflops / 1e3);
    std::fflush(stdout);
  }

  std::vector<BenchCase> cases;
  for (BenchCase& c : make_cases(args.small))
    if (selected(args, c.name)) cases.push_back(std::move(c));
  // --matmul and --conv cases run whether or not --cases names them (without --cases, only they run).
  if (!args.extra.empty() && args.cases.empty()) cases.clear();
  cases.insert(cases.end(), args.extra.begin(), args.extra.end());
  for (const BenchCase& c : cases) {
    json j;
    try {
      j = run_case(ctx, c, args);
      std::printf("%-40s vkc %10.3f ms (%zu runs)%s%s\n", c.name.c_str(), j["vkc"]["median_ms"].get<double>(),
                  j["vkc"]["gpu_ms"].size(), args.small ? "  interpreter: " : "",
                  args.small ? j["interpreter_check"].get<std::string>().c_str() : "");
    } catch (const std::exception& e) {
      // One failing case (a compile error, an unsupported op) must not lose the others' numbers.
      j = {{"name", c.name}, {"group", c.group}, {"flops", c.flops}, {"torch", c.torch}, {"error", e.what()}};
      std::printf("%-40s ERROR %s\n", c.name.c_str(), e.what());
    }
    std::fflush(stdout);
    report["cases"].push_back(j);
    // Written after every case, so a run cut short by the lease still leaves its numbers.
    std::ofstream(fs::path(args.out) / "vkc.json") << report.dump(1) << "\n";
  }
  if (args.no_peaks) return 0;
  // The ceilings again, with the clocks now warm: the copy measured first thing after the machine
  // starts came out up to 30% low on H200 (2270 vs 3349 GB/s in two runs). The best of both counts.
  Peaks again = measure_peaks(ctx, args.small, args.runs);
  report["peaks"]["copy_gbps"] = std::max(peaks.copy_gbps, again.copy_gbps);
  report["peaks"]["fma_gflops"] = std::max(peaks.fma_gflops, again.fma_gflops);
  report["peaks"]["detail_after_cases"] = again.detail;
  std::printf("peaks after the cases: copy %.0f GB/s, fp32 FMA %.1f TFLOP/s\n", again.copy_gbps, again.fma_gflops / 1e3);
  std::ofstream(fs::path(args.out) / "vkc.json") << report.dump(1) << "\n";
  return 0;
}

}  // namespace
}  // namespace vkc::bench

int main(int argc, char** argv) {
  try {
    return vkc::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vkc_bench: %s\n", e.what());
    return 1;
  }
}
