// Sample: a small convolutional classifier built with the C++ IR API, compiled in process for the
// best Vulkan device and run there; the result is checked against the float64 reference. It uses
// only the public API: vkc/vkc.h (Device, Module, Session) and vkc/graph.h (the IR builder).
//
//   input [1,3,32,32] -> conv 3->16 3x3 pad 1 + bias -> relu -> max_pool 2x2
//                     -> conv 16->32 3x3 pad 1 + bias -> relu -> avg_pool global
//                     -> reshape [1,32] -> gemm 32->10 (+bias) -> softmax
//
// Weights are seeded random numbers: the point is the pipeline (IR -> SPIR-V -> Vulkan) and the
// agreement with the reference, not the classification.
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <random>
#include <string>

#include "vkc/graph.h"
#include "vkc/vkc.h"

namespace {

using vkc::HostTensor;
using vkc::ir::AttrMap;
using vkc::ir::OpKind;
using vkc::ir::Value;

HostTensor random_f32(vkc::Shape shape, std::mt19937& rng, double scale) {
  HostTensor t(vkc::DType::f32, std::move(shape));
  std::normal_distribution<double> dist(0.0, scale);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, dist(rng));
  return t;
}

vkc::ir::Graph build_network(std::mt19937& rng) {
  vkc::ir::Graph g;
  g.name = "convnet";
  Value* x = g.add_input("image", {vkc::DType::f32, {1, 3, 32, 32}});
  auto conv = [&](Value* in, int64_t cin, int64_t cout, const std::string& name) {
    Value* w = g.add_constant(random_f32({cout, cin, 3, 3}, rng, std::sqrt(2.0 / (cin * 9))), name + ".w");
    Value* b = g.add_constant(random_f32({cout}, rng, 0.1), name + ".b");
    Value* y = g.add_op(OpKind::Conv, {in, w, b}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, name)->result();
    return g.add_op(OpKind::Relu, {y}, {}, name + ".relu")->result();
  };
  Value* h = conv(x, 3, 16, "conv1");
  h = g.add_op(OpKind::MaxPool, {h},
               {{"kernel", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}}, "pool1")
          ->result();
  h = conv(h, 16, 32, "conv2");
  h = g.add_op(OpKind::AvgPool, {h}, {{"global", true}}, "gap")->result();
  h = g.add_op(OpKind::Reshape, {h}, {{"shape", std::vector<int64_t>{1, 32}}}, "flatten")->result();
  Value* fw = g.add_constant(random_f32({32, 10}, rng, 0.3), "fc.w");
  Value* fb = g.add_constant(random_f32({10}, rng, 0.1), "fc.b");
  h = g.add_op(OpKind::Gemm, {h, fw, fb}, AttrMap{}, "fc")->result();
  h = g.add_op(OpKind::Softmax, {h}, {{"axis", int64_t(-1)}}, "softmax")->result();
  g.add_output(h, "probabilities");
  return g;
}

int run() {
  std::mt19937 rng(2026);
  vkc::ir::Graph graph = build_network(rng);
  vkc::Device device;  // best device; VKC_DEVICE / VKC_VALIDATION are honoured
  const vkc::DeviceInfo& dev = device.info();
  std::cout << "device: " << dev.name << " (" << dev.type << ", " << dev.driver << ")\n";

  auto t0 = std::chrono::steady_clock::now();
  vkc::Module module = vkc::Module::compile(graph, device);
  auto t1 = std::chrono::steady_clock::now();
  vkc::Session session(device, module);
  std::map<std::string, HostTensor> inputs{{"image", random_f32({1, 3, 32, 32}, rng, 1.0)}};
  session.run(inputs);  // warm-up: first submission pays driver setup
  vkc::RunOptions timed;
  timed.profile = true;
  auto t2 = std::chrono::steady_clock::now();
  HostTensor probs = session.run(inputs, timed).at("probabilities");
  auto t3 = std::chrono::steady_clock::now();
  double gpu_ms = 0;
  for (const vkc::DispatchTiming& p : session.last_profile()) gpu_ms += p.ms;

  HostTensor ref = module.reference(inputs).at("probabilities");
  double max_err = 0;
  int best = 0;
  for (int i = 0; i < 10; ++i) {
    max_err = std::max(max_err, std::abs(probs.get_f64(i) - ref.get_f64(i)));
    if (probs.get_f64(i) > probs.get_f64(best)) best = i;
  }
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  std::cout << std::fixed << std::setprecision(4) << "class probabilities:";
  for (int i = 0; i < 10; ++i) std::cout << " " << probs.get_f64(i);
  std::cout << "\ntop class: " << best << " (p=" << probs.get_f64(best) << ")\n"
            << std::setprecision(3) << "dispatches: " << module.dispatch_count()
            << ", compile " << ms(t0, t1) << " ms, inference " << ms(t2, t3) << " ms (host clock), GPU "
            << gpu_ms << " ms (timestamps)\n"
            << std::scientific << std::setprecision(2) << "max |vkc - reference| = " << max_err << "\n";
  vkc::check(max_err < 1e-5, "result differs from the reference interpreter by ", max_err);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string arg = argc > 1 ? argv[1] : "";
    if (argc == 2 && (arg == "--help" || arg == "-h")) {
      std::cout << "usage: vkc-sample-convnet\n"
                   "  Builds a small CNN with the C++ IR API, runs it on the best device (or VKC_DEVICE)\n"
                   "  and checks it against the reference interpreter. Takes no arguments; writes no files.\n";
      return 0;
    }
    vkc::check(argc == 1, "usage: vkc-sample-convnet takes no arguments (see --help)");
    return run();
  } catch (const std::exception& e) {
    std::cerr << "vkc-sample-convnet: error: " << e.what() << "\n";
    return 1;
  }
}
