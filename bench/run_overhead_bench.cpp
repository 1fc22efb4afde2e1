// vkc-run-overhead-bench: host wall time per run of a model through the C++ API, the counterpart
// of the Python module's InferenceSession.run in bench/python_overhead.py (which runs this binary
// on the same model, in the same benchmark run, and compares).
//
//   vkc-run-overhead-bench MODEL.onnx [--runs N] [--repeats R]
//
// The model's inputs must have static shapes; they are filled with small values and passed as
// HostTensorViews, as the Python module passes numpy arrays. Prints, per repeat, the median and
// minimum microseconds per vkc::ModelSession::run (what InferenceSession.run calls) and per
// vkc::Session::run of the same specialization.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "vkc/vkc.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Stats {
  double median_us, min_us;
};

template <typename F>
Stats time_runs(int runs, F&& run) {
  std::vector<double> us;
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    run();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us.front()};
}

int bench(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: vkc-run-overhead-bench MODEL.onnx [--runs N] [--repeats R]\n");
    return 2;
  }
  std::string path = argv[1];
  int runs = 2000, repeats = 3;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--runs")) runs = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--repeats")) repeats = std::atoi(argv[i + 1]);
    else throw vkc::Error(vkc::cat("unknown option ", argv[i]));
  }
  vkc::Device device;
  vkc::ModelSession model(device, path);
  std::vector<std::vector<uint8_t>> storage;
  vkc::Inputs inputs;
  for (const vkc::ModelInputInfo& in : model.inputs()) {
    vkc::Shape shape;
    for (const vkc::ModelDim& d : in.dims) {
      vkc::check(d.value >= 0, path, ": input '", in.name, "' has a dynamic dim; give a model with static shapes");
      shape.push_back(d.value);
    }
    storage.emplace_back(size_t(vkc::shape_numel(shape)) * vkc::dtype_size(in.dtype), uint8_t(0));
    inputs.set(in.name, vkc::HostTensorView(in.dtype, shape, storage.back().data()));
  }
  model.run(inputs);  // compiles
  vkc::Session& session = model.prepare(inputs);
  vkc::Inputs unbound = model.unbound(inputs);
  for (int i = 0; i < 50; ++i) model.run(inputs);  // warm
  std::printf("device: %s\nmodel: %s (%zu dispatches)\n", device.info().name.c_str(), path.c_str(),
              session.module().dispatch_count());
  for (int r = 0; r < repeats; ++r) {
    Stats m = time_runs(runs, [&] { model.run(inputs); });
    Stats s = time_runs(runs, [&] { session.run(unbound); });
    std::printf("repeat %d: ModelSession::run median %.2f us min %.2f us; Session::run median %.2f us min %.2f us\n",
                r, m.median_us, m.min_us, s.median_us, s.min_us);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return bench(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vkc-run-overhead-bench: %s\n", e.what());
    return 1;
  }
}
