#include "bench/bench_peaks.h"

#include <algorithm>
#include <bit>
#include <string>

#include "bench/bench_run.h"
#include "codegen/compiler.h"
#include "codegen/glsl_compiler.h"

namespace vkc::bench {
namespace {

// Copy bandwidth through vkc's own elementwise kernel: neg over a large f32 tensor reads and
// writes every element once, so it is the copy the code generator actually emits.
nlohmann::json copy_bandwidth(rt::Context& ctx, int64_t elements, int runs, double& gbps) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {elements}});
  g.add_output(g.add_op(ir::OpKind::Neg, {x}, {}, "neg")->result(), "y");
  codegen::CompileOptions options;
  options.target = ctx.limits();
  rt::Program program(ctx, codegen::compile_graph(g, options));
  std::vector<DeviceInputs> sets;
  for (uint64_t s = 0; s < 2; ++s) {
    auto t = std::make_shared<rt::DeviceTensor>(ctx, DType::f32, Shape{elements});
    t->upload(random_tensor(DType::f32, {elements}, 1000 + s));
    sets.push_back({{"x", t}});
  }
  Timing t = time_program(program, sets, 5, runs, runs, 60);
  const double bytes = 2.0 * double(elements) * 4;
  gbps = bytes / (t.median_ms * 1e6);
  const DispatchDesc& d = program.manifest().dispatches.at(0);
  return {{"kernel", "vkc neg (elementwise)"}, {"elements", elements}, {"bytes", bytes},
          {"workgroup_size", d.workgroup_size}, {"workgroup_count", d.workgroup_count}, {"strategy", d.strategy},
          {"median_ms", t.median_ms}, {"gpu_ms", t.gpu_ms}, {"gbps", gbps}};
}

// fp32 FMA peak: independent FMA chains per invocation (enough independent work to hide the FMA
// latency), operands from push constants so the compiler cannot fold the chains, and the sum
// written out so it cannot drop them. Variants differ in how the FMA is written and in the chain
// width, because which form the driver's compiler turns into full-rate FFMA is not documented; the
// best variant is the peak (all are kept in the JSON).
struct FmaVariant {
  const char* name;
  const char* type;  // "vec4" or "float"
  int chains;
  const char* step;  // one chain step; A stands for the chain variable, m and c are in scope
};
constexpr FmaVariant kFmaVariants[] = {
    {"vec4x8 fma(a,m,c)", "vec4", 8, "A = fma(A, m, c);"},
    {"vec4x8 a*m+c", "vec4", 8, "A = A * m + c;"},
    {"floatx16 fma(a,m,c)", "float", 16, "A = fma(A, m, c);"},
    {"vec4x4 fma(a,a,c)", "vec4", 4, "A = fma(A, A, c);"},
};

std::string fma_shader(const FmaVariant& v, int iters) {
  std::string t = v.type, decl, body, sum = t + "(0)";
  for (int i = 0; i < v.chains; ++i) {
    std::string a = "a" + std::to_string(i), step = v.step;
    for (size_t p; (p = step.find('A')) != std::string::npos;) step.replace(p, 1, a);
    decl += "  " + t + " " + a + " = " + t + "(float(i) * 1e-7 + " + std::to_string(0.01 * i) + ");\n";
    body += "    " + step + "\n";
    sum = "(" + sum + " + " + a + ")";
  }
  return "#version 450\nlayout(local_size_x = 256) in;\n"
         "layout(std430, binding = 0) writeonly buffer Out { " + t + " result[]; };\n"
         "layout(push_constant) uniform Params { float m; float c; } pc;\n"
         "void main() {\n  uint i = gl_GlobalInvocationID.x;\n" + decl +
         "  " + t + " m = " + t + "(pc.m), c = " + t + "(pc.c);\n"
         "  for (int k = 0; k < " + std::to_string(iters) + "; ++k) {\n" + body + "  }\n"
         "  result[i] = " + sum + ";\n}\n";
}

// A module built by hand: one dispatch of 256-wide workgroups over the given tensors.
ModuleImage single_dispatch(const TargetLimits& limits, const std::string& name, const std::string& glsl,
                            std::vector<TensorDesc> tensors, uint32_t groups, std::vector<uint32_t> push) {
  ModuleImage m;
  m.manifest.target = limits;
  m.manifest.source = "bench " + name;
  DispatchDesc d;
  d.name = name;
  d.kernel = d.strategy = "bench_" + name;
  d.spv = name + ".spv";
  for (TensorDesc& t : tensors) {
    (t.role == TensorRole::Input ? m.manifest.inputs : m.manifest.outputs).push_back(t.name);
    d.bindings.push_back({uint32_t(d.bindings.size()), t.name, t.role == TensorRole::Output});
    m.manifest.tensors.push_back(t);
  }
  d.push_constants = std::move(push);
  d.workgroup_size = {256, 1, 1};
  d.workgroup_count = {groups, 1, 1};
  m.manifest.dispatches.push_back(d);
  m.spirv[d.spv] = codegen::compile_glsl(glsl, name, limits);
  return m;
}

TensorDesc tensor(const std::string& name, int64_t elements, TensorRole role) {
  TensorDesc t;
  t.name = name;
  t.shape = {elements};
  t.role = role;
  return t;
}

nlohmann::json fma_peak(rt::Context& ctx, uint32_t groups, int iters, int runs, double& gflops) {
  nlohmann::json all;
  gflops = 0;
  for (const FmaVariant& v : kFmaVariants) {
    const int width = std::string(v.type) == "vec4" ? 4 : 1;
    const int64_t invocations = int64_t(groups) * 256;
    ModuleImage m = single_dispatch(ctx.limits(), "fma_peak", fma_shader(v, iters),
                                    {tensor("result", invocations * width, TensorRole::Output)}, groups,
                                    {std::bit_cast<uint32_t>(0.999f), std::bit_cast<uint32_t>(1e-3f)});
    rt::Program program(ctx, m);
    Timing t = time_program(program, {DeviceInputs{}}, 3, runs, runs, 60);
    const double flops = double(invocations) * iters * v.chains * width * 2;
    const double g = flops / (t.median_ms * 1e6);
    gflops = std::max(gflops, g);
    all.push_back({{"variant", v.name}, {"workgroups", groups}, {"iterations", iters}, {"flops", flops},
                   {"median_ms", t.median_ms}, {"gflops", g}});
  }
  return all;
}

// The device's copy bandwidth as the best a vkc kernel reaches, next to vkc's own generated
// elementwise kernel above: hand-written vec4 copies (16-byte loads and stores), one vec4 per
// invocation or grid-stride over a fixed grid. The best of all is the ceiling.
nlohmann::json vec4_copy(rt::Context& ctx, int64_t elements, bool grid_stride, int runs, double& gbps) {
  const int64_t vec4s = elements / 4;
  const uint32_t groups = grid_stride ? 132 * 32 : uint32_t((vec4s + 255) / 256);
  const std::string n = std::to_string(vec4s) + "u";
  std::string glsl =
      "#version 450\nlayout(local_size_x = 256) in;\n"
      "layout(std430, binding = 0) readonly buffer In { vec4 x[]; };\n"
      "layout(std430, binding = 1) writeonly buffer Out { vec4 y[]; };\n"
      "void main() {\n" +
      std::string(grid_stride ? "  uint stride = gl_NumWorkGroups.x * 256u;\n"
                                "  for (uint i = gl_GlobalInvocationID.x; i < " + n + "; i += stride) y[i] = x[i];\n"
                              : "  uint i = gl_GlobalInvocationID.x;\n  if (i < " + n + ") y[i] = x[i];\n") +
      "}\n";
  ModuleImage m = single_dispatch(ctx.limits(), "copy_vec4", glsl,
                                  {tensor("x", elements, TensorRole::Input), tensor("y", elements, TensorRole::Output)},
                                  groups, {});
  rt::Program program(ctx, m);
  std::vector<DeviceInputs> sets;
  for (uint64_t s = 0; s < 2; ++s) {
    auto t = std::make_shared<rt::DeviceTensor>(ctx, DType::f32, Shape{elements});
    t->upload(random_tensor(DType::f32, {elements}, 2000 + s));
    sets.push_back({{"x", t}});
  }
  Timing t = time_program(program, sets, 5, runs, runs, 60);
  const double bytes = 2.0 * double(elements) * 4;
  gbps = bytes / (t.median_ms * 1e6);
  return {{"kernel", grid_stride ? "vec4 copy, grid-stride" : "vec4 copy, one per invocation"},
          {"elements", elements}, {"bytes", bytes}, {"workgroups", groups}, {"median_ms", t.median_ms},
          {"gpu_ms", t.gpu_ms}, {"gbps", gbps}};
}

}  // namespace

Peaks measure_peaks(rt::Context& ctx, bool small, int runs) {
  Peaks p;
  // 2^28 floats: 1 GiB read + 1 GiB written, far past any L2.
  // FMA first: it also brings the clocks up from idle before the bandwidth runs (seen: the first
  // copy measured right after the machine started came out 30% low).
  p.detail["fma"] = fma_peak(ctx, small ? 64 : 132 * 64, small ? 64 : 2048, runs, p.fma_gflops);
  const int64_t elements = small ? (1 << 20) : (int64_t(1) << 28);
  double neg = 0, flat = 0, stride = 0;
  p.detail["copy_vkc_neg"] = copy_bandwidth(ctx, elements, runs, neg);
  p.detail["copy_vec4"] = vec4_copy(ctx, elements, false, runs, flat);
  p.detail["copy_vec4_grid_stride"] = vec4_copy(ctx, elements, true, runs, stride);
  p.copy_gbps = std::max({neg, flat, stride});
  return p;
}

}  // namespace vkc::bench
