// vkc::ModelSession: a model whose shapes are fixed at first use.
//
// An ONNX model may leave dims symbolic (batch, sequence length) and may take operands that decide
// shapes as graph inputs (a Reshape's shape, TopK's K, Squeeze's axes). vkc compiles for fixed
// shapes, so a ModelSession compiles the model for each new specialization key it is run with:
// every input's shape, plus the values of the inputs that decide shapes (found by the importer at
// the first compile). Each specialization is kept in memory for the session's lifetime and, with
// CompileOptions::module_cache_dir, on disk (keyed by the model's content with those shapes and
// values, the options, the target and the vkc build), so a later process loads it instead.
//
//   vkc::ModelSession model(device, "bert.onnx", {.compile = {.module_cache_dir = vkc::cache_dir("modules")}});
//   vkc::Outputs a = model.run({{"ids", ids_1x128}});   // compiles for sequence 128
//   vkc::Outputs b = model.run({{"ids", ids_1x77}});    // compiles for 77
//   vkc::Outputs c = model.run({{"ids", other_1x128}}); // reuses the first
//
// Runs are serialized: one thread at a time runs a ModelSession (others wait). Host inputs reach
// the device with no host-side copy (inputs given by value for shapes excepted).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "vkc/device.h"
#include "vkc/module.h"
#include "vkc/session.h"
#include "vkc/tensor.h"

namespace vkc {

// One dim of a model input or output as the model declares it.
struct ModelDim {
  int64_t value = -1;  // -1: dynamic
  std::string symbol;  // the ONNX dim_param ("batch", "seq"); "" when static or unnamed
};

struct ModelInputInfo {
  std::string name;
  DType dtype = DType::f32;
  bool has_shape = true;  // false: the model declares no rank either
  std::vector<ModelDim> dims;
  bool has_dtype = true;  // false: an output whose element type the model does not declare
};

struct ModelSessionOptions {
  // target, module_cache_dir and input_shapes (dims pinned ahead of time: inputs must then match
  // them) apply to every specialization; input_values are filled per specialization.
  CompileOptions compile;
  SessionOptions session;
};

// What the last run ran on.
struct Specialization {
  std::string key;                        // e.g. "ids i64[1x128]; k i64[1] = {5}"
  std::vector<std::string> bound_inputs;  // inputs compiled in as values (they decide shapes)
  bool new_now = false;                   // this run made it (compiled, or loaded from disk)
  ModuleOrigin origin = ModuleOrigin::Compiled;  // Compiled, or Cached from module_cache_dir
  double compile_ms = 0;                  // import + compile (or cache load) + pipelines, when new
  size_t dispatches = 0;
};

class ModelSession {
 public:
  // A .onnx (or .vkir) model. Reads the model's inputs now; compiles nothing until the first run.
  ModelSession(const Device& device, const std::string& model_path, const ModelSessionOptions& options = {});
  ~ModelSession();
  ModelSession(const ModelSession&) = delete;
  ModelSession& operator=(const ModelSession&) = delete;

  const std::vector<ModelInputInfo>& inputs() const;
  // The model's outputs as it declares them (ONNX value infos: a dim may be symbolic or unknown,
  // and has_shape false where the model gives no shape).
  const std::vector<ModelInputInfo>& outputs() const;

  // Checks the inputs against the model (names, dtypes, ranks, static dims, one value per symbol:
  // one-line errors naming the input and dim, before any compilation), then runs the
  // specialization for their shapes, compiling it first when it is new.
  Outputs run(const Inputs& inputs, const RunOptions& options = {});
  // The session a run with these inputs uses (made now when new), for benchmarks and profiles.
  // Its module's inputs omit the bound ones: pass it `unbound(inputs)`.
  Session& prepare(const Inputs& inputs);
  // `inputs` without those the current specialization compiled in as values.
  Inputs unbound(const Inputs& inputs) const;

  const Specialization& last_specialization() const;
  // Per-dispatch timing of the last run, when it was profiled (RunOptions::profile).
  const std::vector<DispatchTiming>& last_profile() const;
  size_t specialization_count() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace vkc
