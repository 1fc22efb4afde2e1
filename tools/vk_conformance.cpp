// vk-conformance: runs ONNX test directories (model.onnx + test_data_set_*/{input,output}_*.pb)
// through the whole stack on a Vulkan device (import, compile for the device, run) and compares
// with the stored outputs. Import errors are "unsupported" (vkc cannot express the model), not
// failures. For a failure it also runs the reference interpreter, to tell a kernel bug (device
// differs from the interpreter) from a semantic difference (interpreter differs from ONNX).
//
// Output: one tab-separated line per test: RESULT<TAB>suite/test<TAB>ops<TAB>detail, where RESULT
// is pass, fail or unsupported and ops the model's distinct op types (comma-separated).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>

#include "api/compile_in_process.h"
#include "ir/interpreter.h"
#include "onnx/importer.h"
#include "onnx/model_reader.h"
#include "onnx/tensor_file.h"
#include "support/error.h"
#include "tools/cli_common.h"

namespace fs = std::filesystem;

namespace {

const char* kUsage =
    "usage: vk-conformance DIR... [--filter REGEX] [--rtol R] [--atol A] [--device INDEX|NAME]\n"
    "                      [--fail-on-failure] [--fail-on-unsupported] [--precision fp32|fp16]\n"
    "  DIR is an ONNX test directory (with model.onnx) or a folder of them.\n"
    "  --filter REGEX      only tests whose SUITE/TEST name matches (ECMAScript regex, searched)\n"
    "  --precision fp16    compile in fp16 (docs/api.md); a float output then passes when max abs\n"
    "                      error / max abs output <= 5e-3 (integers and bools still exactly)\n"
    "  --fail-on-failure   exit code 1 when any test fails (unsupported tests do not count)\n"
    "  --fail-on-unsupported  exit code 1 when any test is unsupported too (for a bar that must\n"
    "                      run every test it names)\n";

struct Tolerance {
  double rtol = 1e-4, atol = 1e-5;
  // --precision fp16: a float output passes when max abs error / max abs expected <= this
  // (docs/api.md's bound), instead of the per-element rtol/atol; 0: off.
  double max_rel = 0;
  vkc::Precision precision = vkc::Precision::fp32;
  // fp16: the largest such ratio of the outputs compared so far (reset per test, for its note).
  mutable double worst_rel = 0;
};

// "" when `actual` matches `expected`, else why not. Floats: |a - e| <= atol + rtol*|e| per
// element, NaN only where NaN is expected; integers and bools exactly.
std::string mismatch(const vkc::HostTensor& actual, const vkc::HostTensor& expected,
                     const Tolerance& tol) {
  using vkc::cat;
  if (actual.dtype() != expected.dtype())
    return cat("dtype ", vkc::dtype_name(actual.dtype()), ", expected ",
               vkc::dtype_name(expected.dtype()));
  if (actual.shape() != expected.shape())
    return cat("shape ", vkc::shape_str(actual.shape()), ", expected ",
               vkc::shape_str(expected.shape()));
  bool exact = !vkc::is_float(expected.dtype());
  if (!exact && tol.max_rel > 0) {
    double worst = 0, largest = 0;
    for (int64_t i = 0; i < expected.numel(); ++i) {
      double a = actual.get_f64(i), e = expected.get_f64(i);
      if (std::isnan(e) != std::isnan(a) || (!std::isnan(e) && (std::isinf(e) || std::isinf(a)) && a != e))
        return cat("element ", i, ": ", a, " vs ", e);
      if (std::isfinite(e) && std::isfinite(a)) {
        worst = std::max(worst, std::abs(a - e));
        largest = std::max(largest, std::abs(e));
      }
    }
    double rel = largest > 0 ? worst / largest : worst;
    tol.worst_rel = std::max(tol.worst_rel, rel);
    if (rel <= tol.max_rel) return "";
    return cat("max abs error / max abs output ", rel, " above ", tol.max_rel, " (max abs diff ", worst, ")");
  }
  int64_t bad = 0, first = -1;
  double worst = 0;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    bool ok;
    if (exact) {
      int64_t a = actual.get_i64(i), e = expected.get_i64(i);
      ok = a == e;
      if (!ok) worst = std::max(worst, std::abs(double(a) - double(e)));
    } else {
      double a = actual.get_f64(i), e = expected.get_f64(i);
      if (std::isnan(e) || std::isnan(a)) ok = std::isnan(e) && std::isnan(a);
      else if (std::isinf(e) || std::isinf(a)) ok = a == e;
      else ok = std::abs(a - e) <= tol.atol + tol.rtol * std::abs(e);
      if (!ok && std::isfinite(a) && std::isfinite(e)) worst = std::max(worst, std::abs(a - e));
    }
    if (!ok && bad++ == 0) first = i;
  }
  if (bad == 0) return "";
  return cat(bad, " of ", expected.numel(), " elements differ (first at ", first, ": ",
             actual.get_f64(first), " vs ", expected.get_f64(first), ", max abs diff ", worst, ")");
}

std::vector<std::string> sorted_files(const fs::path& dir, const std::string& prefix) {
  std::vector<std::string> files;
  for (int i = 0;; ++i) {
    fs::path p = dir / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    files.push_back(p.string());
  }
  return files;
}

std::vector<fs::path> data_sets(const fs::path& test) {
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(test))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  return sets;
}

std::string op_types(const fs::path& model) {
  try {
    ::onnx::ModelProto m = vkc::onnx::read_model_proto(model.string());
    std::set<std::string> ops;
    for (const auto& n : m.graph().node()) ops.insert(n.op_type());
    std::string s;
    for (const std::string& o : ops) s += (s.empty() ? "" : ",") + o;
    return s;
  } catch (const std::exception&) {
    return "?";
  }
}

std::vector<std::string> graph_input_names(const std::string& model) {
  ::onnx::ModelProto m = vkc::onnx::read_model_proto(model);
  std::set<std::string> initializers;
  for (const auto& t : m.graph().initializer()) initializers.insert(t.name());
  std::vector<std::string> names;
  for (const auto& in : m.graph().input())
    if (!initializers.count(in.name())) names.push_back(in.name());
  return names;
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\t', ' ');
  return s;
}

struct Outcome {
  std::string result;  // pass, fail, unsupported
  std::string detail;
};

Outcome run_test(const fs::path& test, vkc::rt::Context& context, const Tolerance& tol) {
  tol.worst_rel = 0;
  std::vector<fs::path> sets = data_sets(test);
  if (sets.empty()) return {"unsupported", "no test_data_set_* directory"};
  // Inputs of the first data set pin any dynamic dims of the model's inputs.
  std::vector<std::vector<vkc::onnx::NamedTensor>> inputs, outputs;
  try {
    for (const fs::path& s : sets) {
      inputs.emplace_back();
      outputs.emplace_back();
      for (const std::string& f : sorted_files(s, "input_")) inputs.back().push_back(vkc::onnx::read_tensor_file(f));
      for (const std::string& f : sorted_files(s, "output_")) outputs.back().push_back(vkc::onnx::read_tensor_file(f));
    }
  } catch (const vkc::Error& e) {
    return {"unsupported", std::string("test data: ") + e.what()};
  }
  // Data files are matched to the model's graph inputs by name, or by position when unnamed.
  std::string model = (test / "model.onnx").string();
  std::vector<std::string> names = graph_input_names(model);
  for (auto& set : inputs) {
    if (set.size() != names.size())
      return {"unsupported", vkc::cat("the model has ", names.size(), " inputs, the data set ",
                                      set.size(), " (omitted optional inputs)")};
    for (size_t i = 0; i < set.size(); ++i)
      if (set[i].name.empty()) set[i].name = names[i];
  }
  // Import with the data's shapes pinned (as vkc::ModelSession does at first use); then with the
  // inputs the importer needs by value (a Reshape's shape, TopK's K, Clip's bounds fed as inputs)
  // bound to the data's values, when every data set gives the same value: the module is then
  // specialized on them, as ModelSession would. Every other input is fed at run time.
  vkc::ir::Graph graph;
  std::string note;
  std::string first_error;
  vkc::onnx::ImportOptions options;
  for (const auto& t : inputs[0]) options.input_shapes[t.name] = t.tensor.shape();
  for (size_t attempt = 0; attempt <= inputs[0].size(); ++attempt) {  // each retry binds one more input at least
    try {
      graph = vkc::onnx::import_model(model, options);
      first_error.clear();
      break;
    } catch (const vkc::onnx::InputValuesNeeded& need) {
      first_error = need.what();
      bool bound = false;
      for (const std::string& name : need.names) {
        size_t i = 0;
        while (i < inputs[0].size() && inputs[0][i].name != name) ++i;
        if (i == inputs[0].size() || options.constant_inputs.count(name)) continue;
        const vkc::HostTensor& t = inputs[0][i].tensor;
        bool same = std::all_of(inputs.begin(), inputs.end(), [&](const auto& set) { return set[i].tensor == t; });
        if (!same) continue;
        options.constant_inputs[name] = t;
        options.input_shapes.erase(name);
        note += (note.empty() ? "specialized on the values of: " : ", ") + name;
        bound = true;
      }
      if (!bound) break;
    } catch (const vkc::Error& e) {
      first_error = e.what();
      break;
    }
  }
  if (!first_error.empty()) return {"unsupported", first_error};
  vkc::ModuleImage module;
  try {
    module = vkc::compile_for_device(graph, context, {}, tol.precision);
  } catch (const vkc::Error& e) {
    return {"fail", std::string("compile: ") + e.what()};
  }
  try {
    vkc::rt::Program program(context, module);
    for (size_t s = 0; s < sets.size(); ++s) {
      std::map<std::string, vkc::HostTensor> feed;
      for (const auto& t : inputs[s])
        if (graph.find_value(t.name) && !graph.find_value(t.name)->producer) feed[t.name] = t.tensor;
      vkc::rt::ExecuteOptions eo;
      eo.poison_outputs = true;
      std::map<std::string, vkc::HostTensor> got = program.execute(feed, eo);
      if (outputs[s].size() != graph.outputs().size())
        return {"fail", vkc::cat("the model has ", graph.outputs().size(), " outputs, the data set ",
                                 outputs[s].size())};
      std::optional<std::map<std::string, vkc::HostTensor>> ref;
      for (size_t o = 0; o < outputs[s].size(); ++o) {
        const std::string& name = graph.outputs()[o].name;
        std::string why = mismatch(got.at(name), outputs[s][o].tensor, tol);
        if (why.empty()) continue;
        if (!ref) ref = vkc::ir::interpret(graph, feed);
        std::string ref_vs_onnx = mismatch(ref->at(name), outputs[s][o].tensor, tol);
        std::string cause = ref_vs_onnx.empty()
                                ? "kernel: the device differs from the reference interpreter"
                                : "semantics: the reference interpreter differs from ONNX too";
        return {"fail", vkc::cat(sets[s].filename().string(), " output '", name, "': ", why, " [",
                                 cause, "]")};
      }
    }
  } catch (const vkc::Error& e) {
    return {"fail", std::string("run: ") + e.what()};
  }
  if (tol.precision == vkc::Precision::fp16) {
    // What fp16 changed: in a one-op model the input and output casts fuse into its one kernel,
    // which then reads and writes f32, and nothing is stored as f16.
    int f16 = 0;
    for (const vkc::TensorDesc& t : module.manifest.tensors) f16 += t.dtype == vkc::DType::f16;
    note += vkc::cat(note.empty() ? "" : "; ", f16, " of ", module.manifest.tensors.size(),
                     " tensors stored as f16, max abs error / max abs output ", tol.worst_rel);
  }
  return {"pass", note};
}

std::vector<fs::path> collect_tests(const std::vector<std::string>& roots) {
  std::vector<fs::path> tests;
  for (const std::string& r : roots) {
    vkc::check(fs::is_directory(r), r, ": not a directory");
    if (fs::exists(fs::path(r) / "model.onnx")) {
      tests.push_back(r);
      continue;
    }
    std::vector<fs::path> found;
    for (const auto& e : fs::directory_iterator(r))
      if (e.is_directory() && fs::exists(e.path() / "model.onnx")) found.push_back(e.path());
    std::sort(found.begin(), found.end());
    tests.insert(tests.end(), found.begin(), found.end());
  }
  return tests;
}

int conformance_main(int argc, char** argv) {
  vkc::cli::Args args(argc, argv);
  if (args.flag("--help") || args.flag("-h")) {
    std::cout << kUsage;
    return 0;
  }
  std::string filter = args.value("--filter");
  Tolerance tol;
  tol.rtol = vkc::cli::parse_double(args.value("--rtol", "1e-4"), "--rtol", 0.0);
  tol.atol = vkc::cli::parse_double(args.value("--atol", "1e-5"), "--atol", 0.0);
  tol.precision = vkc::parse_precision(args.value("--precision", "fp32"), "--precision");
  if (tol.precision == vkc::Precision::fp16) tol.max_rel = vkc::kFp16ErrorBound;
  vkc::rt::ContextOptions co;
  co.device = args.value("--device");
  bool fail_on_failure = args.flag("--fail-on-failure");
  bool fail_on_unsupported = args.flag("--fail-on-unsupported");
  std::vector<std::string> roots = args.positionals();
  args.finish();
  vkc::check(!roots.empty(), "usage: expected at least one test directory (see --help)");
  std::regex pattern;
  try {
    pattern = std::regex(filter.empty() ? std::string(".") : filter);
  } catch (const std::regex_error&) {
    throw vkc::Error(vkc::cat("usage: --filter '", filter, "' is not a valid regex"));
  }

  vkc::rt::Context context(co);
  std::map<std::string, int> counts;
  for (const fs::path& test : collect_tests(roots)) {
    std::string name = test.parent_path().filename().string() + "/" + test.filename().string();
    if (!std::regex_search(name, pattern)) continue;
    Outcome o;
    try {
      o = run_test(test, context, tol);
    } catch (const std::exception& e) {
      o = {"fail", std::string("internal: ") + e.what()};
    }
    context.clear_validation_messages();
    ++counts[o.result];
    std::cout << o.result << "\t" << name << "\t" << op_types(test / "model.onnx") << "\t"
              << one_line(o.detail) << std::endl;
  }
  std::cerr << "vk-conformance: " << counts["pass"] << " passed, " << counts["fail"] << " failed, "
            << counts["unsupported"] << " unsupported\n";
  if (fail_on_failure && counts["fail"] > 0) return 1;
  return fail_on_unsupported && counts["unsupported"] > 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  return vkc::cli::run_tool("vk-conformance", [&] { return conformance_main(argc, argv); });
}
