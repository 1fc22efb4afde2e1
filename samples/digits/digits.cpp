// Sample: handwritten-digit classification with a CNN trained in numpy (samples/digits/train.py)
// and exported to ONNX. The app compiles the ONNX model in process for the best Vulkan device,
// classifies the whole held-out split in ONE execution (a [N,1,8,8] batch), and checks the result:
// accuracy against the labels (>= 95%) and agreement with the numpy model's own predictions (all
// equal). Exit code 1 when either falls short, so CI can run it as a test. Public API only.
//
//   vkc-sample-digits [DATA_DIR]    (default: the source tree's samples/digits)
#include <chrono>
#include <iomanip>
#include <iostream>

#include "vkc/vkc.h"

#ifndef VKC_DIGITS_DIR
#define VKC_DIGITS_DIR "samples/digits"
#endif

namespace {

int64_t argmax_row(const vkc::HostTensor& logits, int64_t row, int64_t classes) {
  int64_t best = 0;
  for (int64_t c = 1; c < classes; ++c)
    if (logits.get_f64(row * classes + c) > logits.get_f64(row * classes + best)) best = c;
  return best;
}

int run(const std::string& dir) {
  vkc::HostTensor images = vkc::read_npy(dir + "/heldout_x.npy");
  vkc::HostTensor labels = vkc::read_npy(dir + "/heldout_labels.npy");
  vkc::HostTensor numpy_pred = vkc::read_npy(dir + "/heldout_numpy_pred.npy");
  const int64_t n = images.shape().at(0);
  vkc::check(labels.numel() == n && numpy_pred.numel() == n, dir, ": held-out files disagree on the count ", n);

  vkc::Device device;  // the best device (discrete > integrated > cpu), or VKC_DEVICE
  std::cout << "device: " << device.info().name << " (" << device.info().type << ")\n";

  // The model's batch dim is symbolic ("N"): pin it to the held-out size, so one execution
  // classifies every digit.
  vkc::CompileOptions options;
  options.input_shapes["image"] = images.shape();
  auto t0 = std::chrono::steady_clock::now();
  vkc::Module module = vkc::Module::compile(dir + "/digits_cnn.onnx", device, options);
  vkc::Session session(device, module);
  session.run({{{"image", images}}});  // warm-up: the first execution also pays the driver's JIT
  auto t1 = std::chrono::steady_clock::now();
  vkc::RunOptions profiled;
  profiled.profile = true;
  vkc::HostTensor logits = session.run({{{"image", images}}}, profiled).at("logits");
  auto t2 = std::chrono::steady_clock::now();
  double gpu_ms = 0;
  for (const vkc::DispatchTiming& t : session.last_profile()) gpu_ms += t.ms;

  const int64_t classes = logits.shape().at(1);
  int64_t correct = 0, agree = 0;
  std::cout << "first 12 predictions (label/gpu):";
  for (int64_t i = 0; i < n; ++i) {
    int64_t p = argmax_row(logits, i, classes);
    correct += p == int64_t(labels.get_f64(i));
    agree += p == int64_t(numpy_pred.get_f64(i));
    if (i < 12) std::cout << " " << int64_t(labels.get_f64(i)) << "/" << p;
  }
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  double accuracy = double(correct) / double(n), agreement = double(agree) / double(n);
  std::cout << "\n" << std::fixed << std::setprecision(3) << "classified " << n << " held-out digits in one "
            << "execution of " << module.dispatch_count() << " dispatches: " << ms(t1, t2)
            << " ms (host clock), GPU " << gpu_ms << " ms; compile + first run " << ms(t0, t1) << " ms\n"
            << std::setprecision(2) << "accuracy: " << 100 * accuracy << "% (" << correct << "/" << n << ")\n"
            << "agreement with the numpy model: " << 100 * agreement << "% (" << agree << "/" << n << ")\n";
  vkc::check(accuracy >= 0.95, "accuracy ", accuracy, " is below 0.95");
  vkc::check(agree == n, n - agree, " of ", n, " predictions differ from the numpy model's");
  return 0;
}

const char* kUsage =
    "usage: vkc-sample-digits [DATA_DIR]\n"
    "  DATA_DIR holds digits_cnn.onnx and the held-out .npy files (default: " VKC_DIGITS_DIR ").\n"
    "  Reads only; writes no files.\n";

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string arg = argc > 1 ? argv[1] : "";
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    }
    // One optional directory: an option or a second argument would otherwise be taken as data.
    vkc::check(argc <= 2 && (arg.empty() || arg[0] != '-'), "usage: vkc-sample-digits [DATA_DIR] (see --help)");
    return run(argc > 1 ? argv[1] : VKC_DIGITS_DIR);
  } catch (const std::exception& e) {
    std::cerr << "vkc-sample-digits: error: " << e.what() << "\n";
    return 1;
  }
}
