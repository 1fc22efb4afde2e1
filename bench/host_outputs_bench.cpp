// vkc-host-outputs-bench: host wall time per Session::run of y = relu(x) with the output read into
// a new HostTensor (the default) against RunOptions::output_to_host into one buffer the caller
// keeps (issue 21), alternating in one process, at issue 21's sizes: 2.4 MB (r2plus1d_18's batch-1
// input), 77 MB (resnet50's batch-128 input) and 275 MB (fcn_resnet50's batch-32 output,
// 32x21x320x320 f32).
//
//   vkc-host-outputs-bench [--runs N] [SHAPE ...]      (SHAPE like 128x3x224x224; f32)
//
// Each line: median and minimum milliseconds per run both ways, and whether both wrote the same
// bytes. The difference is the fresh allocation's page faults and zero fill (glibc maps blocks above
// 32 MB afresh each time); the relu and the copy are in both.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "vkc/graph.h"
#include "vkc/vkc.h"

namespace {

using namespace vkc;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

Shape parse_shape(const std::string& s) {
  Shape shape;
  std::stringstream in(s);
  for (std::string d; std::getline(in, d, 'x');) shape.push_back(std::stoll(d));
  return shape;
}

void bench_shape(const Device& device, const std::string& name, int runs) {
  const Shape shape = parse_shape(name);
  ir::Graph g;
  g.name = "relu";
  ir::Value* x = g.add_input("x", {DType::f32, shape});
  g.add_output(g.add_op(ir::OpKind::Relu, {x})->result(), "y");
  Session s(device, Module::compile(g, device));
  HostTensor xt(DType::f32, shape);
  for (int64_t i = 0; i < xt.numel(); ++i) xt.as<float>()[i] = float((i * 7919) % 1000) / 500.0f - 1.0f;
  const std::map<std::string, HostTensor> tensors{{"x", xt}};
  const Inputs inputs = Inputs::view(tensors);  // no copy of the input in the timed runs
  HostTensor kept(DType::f32, shape);  // the caller's buffer: faulted in once, here
  RunOptions into;
  into.output_to_host = {{"y", HostTensorSpan(kept)}};
  s.run(inputs);  // warm-up both ways
  s.run(inputs, into);
  std::vector<double> fresh, reused;
  for (int r = 0; r < runs; ++r) {
    Clock::time_point t0 = Clock::now();
    { Outputs o = s.run(inputs); }  // freed before the next run, as a caller that drops it
    fresh.push_back(ms_since(t0));
    t0 = Clock::now();
    s.run(inputs, into);
    reused.push_back(ms_since(t0));
  }
  Outputs o = s.run(inputs);
  const bool same = std::memcmp(o.at("y").data(), kept.data(), kept.size_bytes()) == 0;
  std::printf("%-16s %8.1f MB   new HostTensor %8.2f ms (min %8.2f)   "
              "output_to_host %8.2f ms (min %8.2f)   same bytes: %s\n",
              name.c_str(), double(kept.size_bytes()) / 1e6, median(fresh),
              *std::min_element(fresh.begin(), fresh.end()), median(reused),
              *std::min_element(reused.begin(), reused.end()), same ? "yes" : "NO");
}

}  // namespace

int main(int argc, char** argv) try {
  int runs = 20;
  std::vector<std::string> shapes;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) runs = std::atoi(argv[++i]);
    else shapes.push_back(a);
  }
  check(runs > 0, "--runs must be positive");
  if (shapes.empty()) shapes = {"1x3x16x112x112", "128x3x224x224", "32x21x320x320"};
  Device device;
  std::printf("device %s; %d runs each way per line, alternating\n", device.info().name.c_str(), runs);
  for (const std::string& s : shapes) bench_shape(device, s, runs);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "vkc-host-outputs-bench: %s\n", e.what());
  return 1;
}
