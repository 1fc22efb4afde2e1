// vk-compile: IR text in, a compiled module directory out (manifest.json, one .spv per dispatch,
// constants.bin, and the source graph as source.vkir and source.bin so vk-run --check can use the
// reference and --recompile can compile it again), or
// the same content as one .vkcm file when the output name ends in .vkcm.
#include <iostream>
#include <set>

#include "api/compile_in_process.h"
#include "api/source_graph.h"
#include "module/target_profiles.h"
#include "support/error.h"
#include "tools/cli_common.h"

namespace {

// The profile names come from the library (targets/*.json), so this text never lists a stale set.
std::string usage() {
  std::string names;
  for (const std::string& t : vkc::known_targets()) names += (names.empty() ? "" : ", ") + t;
  return "usage: vk-compile INPUT.vkir|MODEL.onnx -o OUTDIR|MODEL.vkcm [--target NAME] [--report]\n"
         "                  [--input-shape NAME=D0,D1,...] [--precision fp32|fp16|fp16x3]\n"
         "                  [--print-ir-after-all] [--print-ir-after=PASS] [--device INDEX|NAME]\n"
         "       vk-compile --list-targets\n"
         "  --target NAME   a profile (" + names + ")\n"
         "                  or 'host' for the live device (default: host)\n"
         "  --list-targets  print the profile names, one a line\n"
         "  --precision P   fp32 (default: the model's dtypes) or fp16: f32 activations and weights\n"
         "                  stored as f16, sums in f32; softmax, normalizations, reductions, exp/log\n"
         "                  and sort keys stay f32; inputs and outputs keep their dtype. Expect max\n"
         "                  abs error / max abs output <= 5e-3 against the float64 reference.\n"
         "                  fp16x3: f32 tensors, f32 matrix products on f16 tensor cores as three\n"
         "                  products of f16 pieces, where the target has them (opt-in: products about\n"
         "                  1e-6 relative error against f32's 1e-7, more for operands below 1e-3:\n"
         "                  2e-5 near 1e-4; docs/api.md \"Precision\")\n"
         "  --report        print one row per dispatch: the ops it holds, strategy, workgroup size,\n"
         "                  tiles, workgroup memory against the limit, GFLOP and MB; notes say what\n"
         "                  was fused and why a fusion was refused; last, the arena's peak memory\n";
}

int compile_main(int argc, char** argv) {
  vkc::cli::Args args(argc, argv);
  if (args.flag("--help") || args.flag("-h")) {
    std::cout << usage();
    return 0;
  }
  if (args.flag("--list-targets")) {
    args.require_alone("--list-targets");
    for (const std::string& t : vkc::known_targets()) std::cout << t << "\n";
    return 0;
  }
  std::string out_dir = args.value("-o"), long_out_dir = args.value("--output");
  vkc::check(out_dir.empty() || long_out_dir.empty(), "usage: give -o or --output, not both");
  if (out_dir.empty()) out_dir = long_out_dir;
  std::string target_name = args.value("--target", "host");
  std::string device = args.value("--device");
  bool report = args.flag("--report");
  const vkc::Precision precision = vkc::parse_precision(args.value("--precision", "fp32"), "--precision");
  vkc::ir::PassManagerOptions passes;
  passes.print_after_all = args.flag("--print-ir-after-all");
  for (const std::string& p : args.values("--print-ir-after")) passes.print_after.insert(p);
  vkc::LoadOptions load_options{vkc::cli::parse_input_shapes(args.values("--input-shape"))};
  std::vector<std::string> inputs = args.positionals();
  args.finish();
  vkc::check(inputs.size() == 1, "usage: expected one input file (see --help)");
  vkc::check(!out_dir.empty(), "usage: -o OUTDIR is required (see --help)");
  // --device picks the device whose limits 'host' means; a named profile would silently ignore it.
  vkc::check(device.empty() || target_name == "host", "usage: --device applies only to --target host, not to --target ",
             target_name);
  // A misspelt pass name would otherwise print nothing and say nothing.
  std::set<std::string> known_passes;
  std::string pass_names;
  const vkc::ir::PassManager pipeline = vkc::codegen::default_pass_pipeline({}, nullptr, precision);
  for (const vkc::ir::Pass& p : pipeline.passes()) {
    known_passes.insert(p.name);
    pass_names += (pass_names.empty() ? "" : ", ") + p.name;
  }
  for (const std::string& p : passes.print_after)
    vkc::check(known_passes.count(p) > 0, "usage: --print-ir-after: unknown pass '", p, "' (passes: ", pass_names, ")");

  vkc::ir::Graph graph = vkc::load_graph(inputs[0], load_options);
  vkc::codegen::CompileOptions options;
  options.passes = passes;
  options.precision = precision;
  if (target_name == "host") {
    vkc::rt::ContextOptions co;
    co.device = device;
    vkc::rt::Context context(co);
    options.target = context.compile_limits();
  } else {
    options.target = vkc::resolve_target(target_name, nullptr);
  }
  vkc::ModuleImage module = vkc::codegen::compile_graph(graph, options);
  // OUT ending in .vkcm: the same content as one file (module/module_file.h), for shipping. The
  // source graph goes along (source.vkir, source.bin) for vk-run --check and --recompile.
  vkc::write_module_with_source(out_dir, module, vkc::SourceGraph(std::move(graph)));
  if (report) std::cout << vkc::codegen::format_report(module.manifest);
  std::cout << "wrote " << out_dir << ": " << module.manifest.dispatches.size()
            << " dispatches for target " << options.target.name << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return vkc::cli::run_tool("vk-compile", [&] { return compile_main(argc, argv); });
}
