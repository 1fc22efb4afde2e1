#include "tools/self_test.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "api/compile_in_process.h"
#include "ir/interpreter.h"
#include "ir/verifier.h"
#include "support/error.h"
#include "support/version.h"

namespace vkc::cli {

namespace {

using K = ir::OpKind;

struct Case {
  std::string name;
  std::function<ir::Graph()> build;
  Precision precision = Precision::fp32;
  bool needs_fp16 = false;  // float16 graph: storageBuffer16BitAccess and shaderFloat16
};

ir::Graph one_op(K kind, std::vector<std::pair<std::string, ir::TensorType>> inputs, ir::AttrMap attrs = {}) {
  ir::Graph g;
  std::vector<ir::Value*> operands;
  for (auto& [name, type] : inputs) operands.push_back(g.add_input(name, type));
  g.add_output(g.add_op(kind, operands, attrs, "op")->result(), "y");
  return g;
}

// Small graphs that cover the kernel families (contraction, conv, normalization, pooling,
// fused elementwise) in f32, and float16 products where the device has float16.
std::vector<Case> conformance_cases() {
  std::vector<Case> cases;
  cases.push_back({"matmul 67x45x33 f32", [] {
                     return one_op(K::MatMul, {{"a", {DType::f32, {67, 45}}}, {"b", {DType::f32, {45, 33}}}});
                   }});
  cases.push_back({"conv 1x16x19x19 k3 pad 1 f32", [] {
                     return one_op(K::Conv, {{"x", {DType::f32, {1, 16, 19, 19}}}, {"w", {DType::f32, {24, 16, 3, 3}}}},
                                   {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
                   }});
  cases.push_back({"softmax 13x100 f32", [] {
                     return one_op(K::Softmax, {{"x", {DType::f32, {13, 100}}}}, {{"axis", int64_t(-1)}});
                   }});
  cases.push_back({"max_pool 1x8x17x17 k3 s2 f32", [] {
                     return one_op(K::MaxPool, {{"x", {DType::f32, {1, 8, 17, 17}}}},
                                   {{"kernel", std::vector<int64_t>{3, 3}}, {"strides", std::vector<int64_t>{2, 2}}});
                   }});
  cases.push_back({"add+sigmoid+mul (fused) 3x1000 f32", [] {
                     ir::Graph g;
                     ir::Value* a = g.add_input("a", {DType::f32, {3, 1000}});
                     ir::Value* b = g.add_input("b", {DType::f32, {1000}});
                     ir::Value* s = g.add_op(K::Add, {a, b}, {})->result();
                     ir::Value* t = g.add_op(K::Sigmoid, {s}, {})->result();
                     g.add_output(g.add_op(K::Mul, {t, a}, {})->result(), "y");
                     return g;
                   }});
  cases.push_back({"matmul 128x96x80 f16", [] {
                     return one_op(K::MatMul, {{"a", {DType::f16, {128, 96}}}, {"b", {DType::f16, {96, 80}}}});
                   }, Precision::fp32, true});
  // Graph inputs and outputs keep their dtype under --precision fp16: the activation between
  // the two convs is what is stored as float16.
  cases.push_back({"conv+relu+conv 1x16x19x19 k3 --precision fp16", [] {
                     ir::Graph g;
                     ir::Value* x = g.add_input("x", {DType::f32, {1, 16, 19, 19}});
                     ir::Value* w1 = g.add_input("w1", {DType::f32, {24, 16, 3, 3}});
                     ir::Value* w2 = g.add_input("w2", {DType::f32, {16, 24, 3, 3}});
                     const ir::AttrMap pads{{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
                     ir::Value* h = g.add_op(K::Relu, {g.add_op(K::Conv, {x, w1}, pads)->result()}, {})->result();
                     g.add_output(g.add_op(K::Conv, {h, w2}, pads)->result(), "y");
                     return g;
                   }, Precision::fp16, true});
  return cases;
}

std::map<std::string, HostTensor> random_inputs(const ir::Graph& g, uint32_t seed) {
  std::map<std::string, HostTensor> in;
  for (const ir::Value* v : g.inputs()) {
    HostTensor t(v->type.dtype, v->type.shape);
    for (int64_t i = 0; i < t.numel(); ++i) {
      seed = seed * 1664525u + 1013904223u;
      t.set_f64(i, double(seed >> 8) / double(1u << 24) * 2.0 - 1.0);
    }
    in[v->name] = std::move(t);
  }
  return in;
}

// Max abs error over max abs reference output (the measure fp16's 5e-3 bound is stated in).
double relative_max_error(const HostTensor& got, const HostTensor& ref) {
  double max_err = 0, max_ref = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    const double x = got.get_f64(i), y = ref.get_f64(i);
    if (std::isnan(x) != std::isnan(y)) return INFINITY;
    if (std::isnan(y)) continue;
    max_err = std::max(max_err, std::abs(x - y));
    max_ref = std::max(max_ref, std::abs(y));
  }
  return max_ref > 0 ? max_err / max_ref : max_err;
}

std::string sci(double v) {
  std::ostringstream s;
  s << std::scientific << std::setprecision(2) << v;
  return s.str();
}

}  // namespace

int run_self_test(const std::string& device, bool robust_buffer_access, std::ostream& out) {
  rt::ContextOptions co;
  co.device = device;
  co.robust_buffer_access = robust_buffer_access;
  rt::Context ctx(co);
  const rt::DeviceInfo& d = ctx.device_info();
  const TargetLimits& t = ctx.limits();
  auto hex = [](uint32_t v) {
    std::ostringstream s;
    s << "0x" << std::hex << std::setw(4) << std::setfill('0') << v;
    return s.str();
  };
  out << "vkc self-test (paste this report into a bug report)\n";
  out << "vkc: " << vkc_version() << "\n";
  out << "device: " << d.name << " (" << d.type << ", vendor " << hex(d.vendor_id) << ", device " << hex(d.device_id)
      << ", Vulkan " << (d.api_version >> 22) << "." << ((d.api_version >> 12) & 0x3ff) << "." << (d.api_version & 0xfff)
      << ")\n";
  out << "driver: " << d.driver << "\n";
  out << "subgroup size: " << t.subgroup_size << " (min " << t.min_subgroup_size << ", max " << t.max_subgroup_size
      << "); float16: " << (t.shader_float16 && t.storage_buffer_16bit ? "yes" : "no")
      << "; validation: " << (ctx.validation_enabled() ? "on" : "off") << "\n";
  out << "tensor cores: " << (d.tensor_cores.empty() ? "none" : "VK_" + d.tensor_cores + "_cooperative_matrix") << "\n";
  if (!t.cooperative_matrix_khr && !t.cooperative_matrix_nv)
    out << "gate: not offered (no cooperative matrix)\n";
  else if (ctx.cooperative_matrix_gate().empty())
    out << "gate: skipped (VKC_NO_GATE=1)\n";
  for (const rt::GateResult& r : ctx.cooperative_matrix_gate()) out << "gate: " << rt::describe(r) << "\n";

  const bool fp16 = t.shader_float16 && t.storage_buffer_16bit;
  int passed = 0, failed = 0, skipped = 0;
  uint32_t seed = 7;
  for (const Case& c : conformance_cases()) {
    if (c.needs_fp16 && !fp16) {
      out << "check " << c.name << ": skipped (no float16 on this device)\n";
      ++skipped;
      continue;
    }
    try {
      ir::Graph g = c.build();
      ir::verify_graph(g);
      std::map<std::string, HostTensor> in = random_inputs(g, seed++);
      std::map<std::string, HostTensor> ref = ir::interpret(g, in);
      rt::Program p(ctx, compile_for_device(g, ctx, {}, c.precision));
      rt::ExecuteOptions eo;
      eo.poison_outputs = true;
      std::map<std::string, HostTensor> got = p.execute(in, eo);
      const bool half = c.precision == Precision::fp16 || g.inputs()[0]->type.dtype == DType::f16;
      const double bound = half ? 5e-3 : 1e-5;
      const double err = relative_max_error(got.at("y"), ref.at("y"));
      const bool ok = err <= bound;
      out << "check " << c.name << ": " << (ok ? "pass" : "FAIL") << " (max error / max |ref| " << sci(err)
          << ", bound " << sci(bound) << "; " << p.manifest().dispatches.size() << " dispatch"
          << (p.manifest().dispatches.size() == 1 ? "" : "es") << ": " << p.manifest().dispatches.back().kernel << ")\n";
      (ok ? passed : failed)++;
    } catch (const std::exception& e) {
      out << "check " << c.name << ": FAIL (" << e.what() << ")\n";
      ++failed;
    }
  }
  out << "conformance subset: " << passed << "/" << passed + failed << " passed";
  if (skipped) out << ", " << skipped << " skipped";
  out << "\n";

  // A few timings (best of 3 after a warm-up; GPU timestamps).
  struct Timing {
    std::string name;
    ir::Graph graph;
  };
  // Sizes that take a fraction of a second: smaller on CPU devices (lavapipe).
  const bool cpu = d.type == "cpu";
  const int64_t n = cpu ? 512 : 2048, hw = cpu ? 64 : 256;
  auto matmul = [&](DType t) {
    return Timing{"matmul " + std::to_string(n) + "x" + std::to_string(n) + "x" + std::to_string(n) + " " + std::string(dtype_name(t)),
                  one_op(K::MatMul, {{"a", {t, {n, n}}}, {"b", {t, {n, n}}}})};
  };
  std::vector<Timing> timings;
  timings.push_back(matmul(DType::f32));
  timings.push_back({"conv 1x32x" + std::to_string(hw) + "x" + std::to_string(hw) + " k3 f32",
                     one_op(K::Conv, {{"x", {DType::f32, {1, 32, hw, hw}}}, {"w", {DType::f32, {64, 32, 3, 3}}}},
                            {{"pads", std::vector<int64_t>{1, 1, 1, 1}}})});
  if (fp16) timings.push_back(matmul(DType::f16));
  for (Timing& tm : timings) {
    try {
      rt::Program p(ctx, compile_for_device(tm.graph, ctx));
      std::map<std::string, HostTensor> in = random_inputs(tm.graph, seed++);
      rt::ExecuteOptions eo;
      eo.profile = true;
      p.execute(in, eo);
      double best = -1, flops = 0;
      for (int r = 0; r < 3; ++r) {
        p.execute(in, eo);
        double ms = 0;
        flops = 0;
        for (const rt::DispatchProfile& dp : p.last_profile()) ms += dp.ms;
        for (const DispatchDesc& dd : p.manifest().dispatches) flops += dd.flops;
        if (best < 0 || ms < best) best = ms;
      }
      out << "time " << tm.name << ": " << std::fixed << std::setprecision(3) << best << " ms";
      if (best > 0) out << ", " << std::setprecision(1) << flops / best / 1e6 << " GFLOP/s";
      out << " (" << p.manifest().dispatches.back().kernel << ")\n" << std::defaultfloat;
    } catch (const std::exception& e) {
      out << "time " << tm.name << ": FAIL (" << e.what() << ")\n";
      ++failed;
    }
  }
  out << "self-test: " << (failed ? "FAIL" : "PASS") << "\n";
  return failed ? 1 : 0;
}

}  // namespace vkc::cli
