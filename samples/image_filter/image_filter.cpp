// Sample: classic image filters as one vkc graph on a real photograph. Loads a JPEG/PNG with
// stb_image, builds the pipeline below with the C++ IR API, compiles it for the best Vulkan
// device, runs it once, and writes PNGs with stb_image_write. With --check every output is
// compared with the float64 reference interpreter (Module::reference) and a mismatch exits 1.
//
//   image [1,3,H,W] --replicate pad 2--> depthwise conv 5x5 Gaussian ------------> "blurred"
//   blurred --conv 1x1 (luma)--> gray --replicate pad 1--> conv Sobel x, conv Sobel y
//           --> sqrt(gx*gx + gy*gy) ----------------------------------------------> "edges"
//   image --replicate pad 1--> conv_transpose stride 2, 4x4 bilinear, groups 3 ---> "upsampled"
//
// Borders are replicated (slice + concat) rather than zero padded, so the blur does not darken the
// frame, Sobel does not see an edge along it, and the upsampled border rows keep full weight.
//
//   vkc-sample-image-filter [IMAGE] [--width N] [--output-dir DIR] [--check]
#include <stb/stb_image.h>
#include <stb/stb_image_write.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "vkc/graph.h"
#include "vkc/vkc.h"

namespace {

using vkc::HostTensor;
using vkc::ir::OpKind;
using vkc::ir::Value;
using Ints = std::vector<int64_t>;

const char* kDefaultImage = "/usr/lib/python3/dist-packages/sklearn/datasets/images/china.jpg";

// Loads an image as [1,3,H,W] floats in [0,1]. With width > 0 it is box-filtered down to that
// width (aspect kept), which keeps CI runs small.
HostTensor load_image(const std::string& path, int width) {
  int w = 0, h = 0, channels = 0;
  unsigned char* pixels = stbi_load(path.c_str(), &w, &h, &channels, 3);
  vkc::check(pixels != nullptr, path, ": cannot load image (", stbi_failure_reason(), ")");
  int ow = width > 0 && width < w ? width : w;
  int oh = std::max(1, int(std::lround(double(h) * ow / w)));
  HostTensor t(vkc::DType::f32, {1, 3, oh, ow});
  for (int y = 0; y < oh; ++y) {
    int y0 = y * h / oh, y1 = std::max(y0 + 1, (y + 1) * h / oh);
    for (int x = 0; x < ow; ++x) {
      int x0 = x * w / ow, x1 = std::max(x0 + 1, (x + 1) * w / ow);
      for (int c = 0; c < 3; ++c) {
        double sum = 0;
        for (int sy = y0; sy < y1; ++sy)
          for (int sx = x0; sx < x1; ++sx) sum += pixels[(size_t(sy) * w + sx) * 3 + c];
        t.set_f64((int64_t(c) * oh + y) * ow + x, sum / (255.0 * (y1 - y0) * (x1 - x0)));
      }
    }
  }
  stbi_image_free(pixels);
  return t;
}

// Writes channels of a [1,C,H,W] tensor (C = 1 or 3) as an 8-bit PNG, value * scale clamped.
void write_png(const std::string& path, const HostTensor& t, double scale) {
  const int64_t c = t.shape()[1], h = t.shape()[2], w = t.shape()[3];
  std::vector<unsigned char> bytes(size_t(c * h * w));
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      for (int64_t k = 0; k < c; ++k) {
        double v = t.get_f64((k * h + y) * w + x) * scale;
        bytes[size_t((y * w + x) * c + k)] = static_cast<unsigned char>(std::lround(std::clamp(v, 0.0, 1.0) * 255));
      }
  vkc::check(stbi_write_png(path.c_str(), int(w), int(h), int(c), bytes.data(), int(w * c)) != 0, path,
             ": cannot write PNG");
}

HostTensor filter(Ints shape, const std::vector<double>& values) {
  HostTensor t(vkc::DType::f32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, values[size_t(i) % values.size()]);
  return t;
}

// The outer product of a 1-D kernel with itself, repeated for `copies` depthwise channels.
HostTensor separable(const std::vector<double>& k, int64_t copies) {
  std::vector<double> k2;
  for (double a : k)
    for (double b : k) k2.push_back(a * b);
  const int64_t n = int64_t(k.size());
  return filter({copies, 1, n, n}, k2);
}

class FilterGraph {
 public:
  FilterGraph(int64_t h, int64_t w) {
    g_.name = "image_filter";
    Value* image = g_.add_input("image", {vkc::DType::f32, {1, 3, h, w}});

    // Gaussian, sigma 1, normalised to sum 1 so flat regions keep their brightness.
    std::vector<double> gauss;
    double sum = 0;
    for (int i = -2; i <= 2; ++i) sum += gauss.emplace_back(std::exp(-0.5 * i * i));
    for (double& v : gauss) v /= sum;
    Value* blurred = conv(replicate_pad(image, 2, "blur"), separable(gauss, 3), 3, "blur");
    g_.add_output(blurred, "blurred");

    Value* gray = conv(blurred, filter({1, 3, 1, 1}, {0.299, 0.587, 0.114}), 1, "luma");
    Value* g1 = replicate_pad(gray, 1, "sobel");
    Value* gx = conv(g1, filter({1, 1, 3, 3}, {-1, 0, 1, -2, 0, 2, -1, 0, 1}), 1, "sobel_x");
    Value* gy = conv(g1, filter({1, 1, 3, 3}, {-1, -2, -1, 0, 0, 0, 1, 2, 1}), 1, "sobel_y");
    Value* gx2 = op(OpKind::Mul, {gx, gx}, {}, "gx2");
    Value* gy2 = op(OpKind::Mul, {gy, gy}, {}, "gy2");
    g_.add_output(op(OpKind::Sqrt, {op(OpKind::Add, {gx2, gy2}, {}, "grad2")}, {}, "magnitude"), "edges");

    // Bilinear 2x: each output pixel is 3/4 of its nearer input pixel and 1/4 of the next one per
    // axis (half-pixel centres). With one replicated pixel on each side, pads 3 trims the result
    // to exactly [2H, 2W].
    Value* p1 = replicate_pad(image, 1, "up");
    Value* up = op(OpKind::ConvTranspose, {p1, g_.add_constant(separable({0.25, 0.75, 0.75, 0.25}, 3), "up.w")},
                   {{"strides", Ints{2, 2}}, {"pads", Ints{3, 3, 3, 3}}, {"groups", int64_t(3)}}, "upsample");
    g_.add_output(up, "upsampled");
  }
  const vkc::ir::Graph& graph() const { return g_; }

 private:
  Value* op(OpKind kind, std::vector<Value*> operands, vkc::ir::AttrMap attrs, const std::string& name) {
    return g_.add_op(kind, std::move(operands), std::move(attrs), name)->result();
  }
  Value* conv(Value* x, HostTensor w, int64_t groups, const std::string& name) {
    return op(OpKind::Conv, {x, g_.add_constant(std::move(w), name + ".w")}, {{"groups", groups}}, name);
  }
  // Repeats the first and last row and column p times (ONNX Pad's "edge" mode, which the IR's pad
  // op does not have), via slices of one row/column and a concat per axis.
  Value* replicate_pad(Value* x, int64_t p, const std::string& name) {
    for (int64_t axis : {2, 3}) {
      std::string n = name + ".pad" + std::to_string(axis);
      Value* first = op(OpKind::Slice, {x}, {{"starts", Ints{0}}, {"ends", Ints{1}}, {"axes", Ints{axis}}}, n + ".first");
      Value* last = op(OpKind::Slice, {x}, {{"starts", Ints{-1}}, {"ends", Ints{INT64_MAX}}, {"axes", Ints{axis}}},
                       n + ".last");
      std::vector<Value*> parts(size_t(p), first);
      parts.push_back(x);
      parts.insert(parts.end(), size_t(p), last);
      x = op(OpKind::Concat, parts, {{"axis", axis}}, n);
    }
    return x;
  }

  vkc::ir::Graph g_;
};

// Relative L2 error and max abs difference of `got` against the reference; false beyond 1e-4.
// fp32: L2 error relative to the reference's L2 norm <= 1e-4. fp16: max abs error over max abs
// output <= 5e-3, the bound docs/api.md states for --precision fp16.
bool matches_reference(const std::string& name, const HostTensor& got, const HostTensor& ref, bool fp16) {
  double diff2 = 0, ref2 = 0, max_abs = 0, max_ref = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    double d = got.get_f64(i) - ref.get_f64(i);
    if (std::isnan(d)) return false;
    diff2 += d * d;
    ref2 += ref.get_f64(i) * ref.get_f64(i);
    max_abs = std::max(max_abs, std::abs(d));
    max_ref = std::max(max_ref, std::abs(ref.get_f64(i)));
  }
  double rel = std::sqrt(diff2 / std::max(ref2, 1e-300));
  double rel_max = max_abs / std::max(max_ref, 1e-300);
  bool ok = fp16 ? rel_max <= 5e-3 : rel <= 1e-4;
  std::cout << "check " << std::left << std::setw(10) << name << std::right << std::scientific << std::setprecision(2)
            << " max abs " << max_abs << ", rel " << rel;
  if (fp16) std::cout << ", max abs / max |ref| " << rel_max;
  std::cout << (ok ? " ok" : " MISMATCH") << "\n" << std::defaultfloat;
  return ok;
}

const std::string kUsage = std::string(
    "usage: vkc-sample-image-filter [IMAGE] [--width N] [--output-dir DIR] [--check]\n"
    "                               [--precision fp32|fp16]\n"
    "  IMAGE          a JPEG/PNG (default: ") + kDefaultImage + ")\n"
    "  --width N      box-filter the image down to N pixels wide first (1..65536)\n"
    "  --output-dir   write input.png, blurred.png, edges.png and upsampled.png there\n"
    "                 (default: write no files)\n"
    "  --check        compare every output with the float64 reference interpreter\n"
    "  --precision P  fp32 (default) or fp16: activations and weights stored as f16, sums in f32\n";

int run(int argc, char** argv) {
  std::string path = kDefaultImage, out_dir;
  int width = 0;
  bool check = false, have_path = false;
  vkc::CompileOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      vkc::check(i + 1 < argc, "usage: ", a, " needs a value");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (a == "--width") {
      std::string v = next();
      auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), width);
      vkc::check(ec == std::errc() && end == v.data() + v.size() && width >= 1 && width <= 65536,
                 "usage: --width expects an integer in [1, 65536], got '", v, "'");
    } else if (a == "--output-dir") {
      out_dir = next();
    } else if (a == "--check") {
      check = true;
    } else if (a == "--precision") {
      options.precision = next();
      vkc::check(options.precision == "fp32" || options.precision == "fp16", "--precision: unknown precision '",
                 options.precision, "' (expected fp32 or fp16)");
    } else if (a.empty() || a[0] == '-' || have_path) {
      vkc::check(false, "usage: unexpected argument '", a, "' (see --help)");
    } else {
      path = a;
      have_path = true;
    }
  }
  // Before any GPU work: a directory that cannot be made fails now, not after the run.
  if (!out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    vkc::check(!ec && std::filesystem::is_directory(out_dir), "--output-dir ", out_dir,
               ": cannot create the directory");
  }

  HostTensor image = load_image(path, width);
  const int64_t h = image.shape()[2], w = image.shape()[3];
  vkc::Device device;  // the best device, or VKC_DEVICE
  std::cout << "device: " << device.info().name << " (" << device.info().type << ")\n"
            << "image: " << path << " as " << w << "x" << h << "\n";

  FilterGraph net(h, w);
  auto t0 = std::chrono::steady_clock::now();
  vkc::Module module = vkc::Module::compile(net.graph(), device, options);
  vkc::Session session(device, module);
  session.run({{{"image", image}}});  // warm-up: the first execution also pays the driver's JIT
  auto t1 = std::chrono::steady_clock::now();
  vkc::RunOptions profiled;
  profiled.profile = true;
  vkc::Outputs out = session.run({{{"image", image}}}, profiled);
  auto t2 = std::chrono::steady_clock::now();
  double gpu_ms = 0;
  for (const vkc::DispatchTiming& t : session.last_profile()) gpu_ms += t.ms;
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  std::cout << std::fixed << std::setprecision(3) << module.dispatch_count() << " dispatches: " << ms(t1, t2)
            << " ms (host clock), GPU " << gpu_ms << " ms; compile + first run " << ms(t0, t1) << " ms\n";

  // Edge magnitudes have no fixed range: scale so the strongest edge is white.
  const HostTensor& edges = out.at("edges");
  double max_edge = 1e-12;
  for (int64_t i = 0; i < edges.numel(); ++i) max_edge = std::max(max_edge, edges.get_f64(i));
  const vkc::Shape& up = out.at("upsampled").shape();
  if (!out_dir.empty()) {
    write_png(out_dir + "/input.png", image, 1.0);
    write_png(out_dir + "/blurred.png", out.at("blurred"), 1.0);
    write_png(out_dir + "/edges.png", edges, 1.0 / max_edge);
    write_png(out_dir + "/upsampled.png", out.at("upsampled"), 1.0);
    std::cout << "wrote " << out_dir << "/{input,blurred,edges,upsampled}.png";
  } else {
    std::cout << "no --output-dir: no PNGs written";
  }
  std::cout << " (upsampled " << up[3] << "x" << up[2] << ", strongest edge " << std::setprecision(3) << max_edge
            << ")\n";

  if (!check) return 0;
  std::map<std::string, HostTensor> ref = module.reference({{"image", image}});
  bool ok = true;
  for (const auto& [name, r] : ref) ok &= matches_reference(name, out.at(name), r, options.precision == "fp16");
  vkc::check(ok, "GPU results differ from the reference interpreter");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "vkc-sample-image-filter: error: " << e.what() << "\n";
    return 1;
  }
}
