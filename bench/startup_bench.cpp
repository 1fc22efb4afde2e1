// vkc-startup-bench: start-up and per-execution overhead through the public API.
//
//   cold start   a fresh process loads a .vkcm and creates its pipelines with an empty pipeline
//                cache ($VKC_CACHE_DIR/pipelines), then runs once
//   warm start   the same with the cache the cold run left behind
//   compile      in-process compile of the same model twice (the second hits the SPIR-V cache)
//   overhead     host wall time per run() of a 50-dispatch chain (50 unfusable adds) vs the sum of
//                its GPU timestamps, and the same for a 1-dispatch module
//
// Each start is measured in a child process (this binary with --child) so that driver state does
// not carry over; only the cache directory does. Prints a table; exit code 0 unless vkc fails.
//
//   vkc-startup-bench [--runs N] [--work DIR]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "vkc/graph.h"
#include "vkc/vkc.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// x1 = x0 + x0, x[i+1] = x[i] + x[i-1]: every intermediate has two users, so nothing fuses and the
// module has `length` dispatches.
vkc::ir::Graph chain(int length, int64_t n) {
  vkc::ir::Graph g;
  g.name = "chain";
  vkc::ir::Value* prev = g.add_input("x", {vkc::DType::f32, {n}});
  vkc::ir::Value* cur = g.add_op(vkc::ir::OpKind::Add, {prev, prev})->result();
  for (int i = 2; i <= length; ++i) {
    vkc::ir::Value* next = g.add_op(vkc::ir::OpKind::Add, {cur, prev})->result();
    prev = cur;
    cur = next;
  }
  if (length > 1) g.add_output(prev, "second_last");
  g.add_output(cur, "last");
  return g;
}

vkc::HostTensor input_for(const vkc::Module& m) {
  const vkc::TensorInfo& t = m.inputs().at(0);
  vkc::HostTensor x(t.dtype, t.shape);
  for (int64_t i = 0; i < x.numel(); ++i) x.set_f64(i, 1e-6 * double(i % 7));
  return x;
}

// The child: one process start, timed in phases; prints "device load session first hit".
int child(const std::string& module_path) {
  auto t0 = Clock::now();
  vkc::Device device;
  double device_ms = ms_since(t0);
  auto t1 = Clock::now();
  vkc::Module module = vkc::Module::load(module_path);
  double load_ms = ms_since(t1);
  auto t2 = Clock::now();
  vkc::Session session(device, module);
  double session_ms = ms_since(t2);
  auto t3 = Clock::now();
  session.run({{{module.inputs().at(0).name, input_for(module)}}});
  double run_ms = ms_since(t3);
  std::printf("%.3f %.3f %.3f %.3f %d\n", device_ms, load_ms, session_ms, run_ms, session.pipeline_cache_hit() ? 1 : 0);
  return 0;
}

struct Start {
  double device_ms = 0, load_ms = 0, session_ms = 0, run_ms = 0, total_ms = 0;
  bool hit = false;
};

Start start_child(const std::string& self, const std::string& module_path) {
  auto t = Clock::now();
  std::string cmd = "'" + self + "' --child '" + module_path + "'";
  FILE* p = popen(cmd.c_str(), "r");
  vkc::check(p != nullptr, "cannot start ", self);
  Start s;
  int hit = 0;
  int n = std::fscanf(p, "%lf %lf %lf %lf %d", &s.device_ms, &s.load_ms, &s.session_ms, &s.run_ms, &hit);
  int rc = pclose(p);
  vkc::check(n == 5 && rc == 0, "child process failed (", cmd, ")");
  s.hit = hit != 0;
  s.total_ms = ms_since(t);
  return s;
}

struct Overhead {
  size_t dispatches = 0;
  double wall_ms = 0, gpu_ms = 0;
};

Overhead per_execution(const vkc::Device& device, const vkc::Module& module, int runs) {
  vkc::Session session(device, module, vkc::SessionOptions{std::string(), false});
  const std::map<std::string, vkc::HostTensor> tensors{{module.inputs().at(0).name, input_for(module)}};
  const vkc::Inputs in = vkc::Inputs::view(tensors);  // the runs time no copy of the input
  for (int i = 0; i < 3; ++i) session.run(in);
  std::vector<double> wall;
  for (int i = 0; i < runs; ++i) {
    auto t = Clock::now();
    session.run(in);
    wall.push_back(ms_since(t));
  }
  std::sort(wall.begin(), wall.end());
  Overhead o;
  o.dispatches = module.dispatch_count();
  o.wall_ms = wall[wall.size() / 2];
  vkc::RunOptions profile;
  profile.profile = true;
  std::vector<double> gpu;
  for (int i = 0; i < std::max(3, runs / 4); ++i) {
    session.run(in, profile);
    double sum = 0;
    for (const vkc::DispatchTiming& t : session.last_profile()) sum += t.ms;
    gpu.push_back(sum);
  }
  std::sort(gpu.begin(), gpu.end());
  o.gpu_ms = gpu[gpu.size() / 2];
  return o;
}

int bench(int argc, char** argv) {
  int runs = 50;
  std::string work = "/tmp/vkc-startup-bench-" + std::to_string(::getpid());
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--work" && i + 1 < argc) work = argv[++i];
    else vkc::check(false, "usage: vkc-startup-bench [--runs N] [--work DIR] (unknown argument '", a, "')");
  }
  namespace fs = std::filesystem;
  fs::remove_all(work);
  fs::create_directories(work);
  const std::string self = fs::read_symlink("/proc/self/exe").string();

  vkc::Device device;
  std::printf("device: %s (%s)\n", device.info().name.c_str(), device.info().driver.c_str());
  auto c0 = Clock::now();
  vkc::Module chain50 = vkc::Module::compile(chain(50, 1 << 16), device);
  double compile_cold = ms_since(c0);
  auto c1 = Clock::now();
  vkc::Module::compile(chain(50, 1 << 16), device);
  double compile_warm = ms_since(c1);
  vkc::Module single = vkc::Module::compile(chain(1, 1 << 16), device);
  const std::string path = work + "/chain50.vkcm";
  chain50.save(path);

  // Process starts: the first with an empty cache directory, then warm ones.
  setenv("VKC_CACHE_DIR", (work + "/cache").c_str(), 1);  // the root of every vkc cache
  Start cold = start_child(self, path);
  Start warm1 = start_child(self, path);
  Start warm2 = start_child(self, path);

  Overhead o50 = per_execution(device, chain50, runs);
  Overhead o1 = per_execution(device, single, runs);

  std::printf("\nstart-up, 50-dispatch module from a .vkcm, fresh process each (ms)\n");
  std::printf("%-22s %9s %9s %9s %9s %9s  %s\n", "", "device", "load", "session", "1st run", "process", "pipeline cache");
  auto row = [](const char* name, const Start& s) {
    std::printf("%-22s %9.2f %9.2f %9.2f %9.2f %9.2f  %s\n", name, s.device_ms, s.load_ms, s.session_ms, s.run_ms,
                s.total_ms, s.hit ? "hit" : "miss");
  };
  row("cold (empty cache)", cold);
  row("warm", warm1);
  row("warm again", warm2);
  std::printf("\nin-process compile of the same model (ms): first %.2f, second %.2f (SPIR-V cache)\n", compile_cold,
              compile_warm);
  std::printf("\nper execution, median of %d runs, 65536 f32 elements (ms)\n", runs);
  std::printf("%-22s %9s %9s %9s %12s\n", "", "wall", "GPU", "overhead", "per dispatch");
  auto orow = [](const Overhead& o) {
    double overhead = std::max(0.0, o.wall_ms - o.gpu_ms);
    std::printf("%-22s %9.3f %9.3f %9.3f %12.4f\n", (std::to_string(o.dispatches) + " dispatch(es)").c_str(), o.wall_ms,
                o.gpu_ms, overhead, overhead / double(o.dispatches));
  };
  orow(o50);
  orow(o1);
  fs::remove_all(work);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 3 && std::strcmp(argv[1], "--child") == 0) return child(argv[2]);
    return bench(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vkc-startup-bench: error: %s\n", e.what());
    return 1;
  }
}
