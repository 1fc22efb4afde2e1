// Issue 23, elementwise and logic group: comparisons and logic (bool results), IsNaN/IsInf, Mod,
// Sign, the activations Elu/Selu/Softplus/Mish/PRelu, Sin/Cos and rounding. Each is one IR op;
// numpy broadcasting is the IR's own (PRelu's one-way broadcast is checked by its shape rule).
#include "onnx/import_context.h"
#include "support/error.h"

namespace vkc::onnx {
namespace {

using K = ir::OpKind;

OpImporter same(K kind) {
  return [kind](NodeContext& n) {
    std::vector<ir::Value*> operands;
    for (int i = 0; i < n.num_inputs(); ++i) operands.push_back(n.input(i));
    n.set_output(0, n.emit(kind, operands));
  };
}

bool flag(NodeContext& n, const char* name, int64_t fallback) {
  int64_t v = n.attrs.get_int(name, fallback);
  if (v != 0 && v != 1) n.unsupported(cat("attribute '", name, "' is ", v, ", expected 0 or 1"));
  return v == 1;
}

void import_is_inf(NodeContext& n) {
  bool pos = flag(n, "detect_positive", 1), neg = flag(n, "detect_negative", 1);
  n.set_output(0, n.emit(K::IsInf, {n.input(0)}, {{"detect_positive", pos}, {"detect_negative", neg}}));
}

// fmod = 0: the divisor's sign (Python); fmod = 1: C's fmod. ONNX asks for fmod = 1 on floats;
// fmod = 0 on floats is accepted with numpy's meaning (np.mod).
void import_mod(NodeContext& n) {
  bool c_fmod = flag(n, "fmod", 0);
  n.set_output(0, n.emit(c_fmod ? K::FMod : K::Mod, {n.input(0), n.input(1)}));
}

void import_elu(NodeContext& n) {
  n.set_output(0, n.emit(K::Elu, {n.input(0)}, {{"alpha", n.attrs.get_float("alpha", 1.0)}}));
}

void import_selu(NodeContext& n) {
  double alpha = n.attrs.get_float("alpha", 1.67326319217681884765625);
  double gamma = n.attrs.get_float("gamma", 1.05070102214813232421875);
  n.set_output(0, n.emit(K::Selu, {n.input(0)}, {{"alpha", alpha}, {"gamma", gamma}}));
}

// Opset >= 7: the slope broadcasts to the input numpy-style (checked by the IR's shape rule).
// Opsets 1-6 had no broadcasting: a slope of C entries meant one per channel (dim 1), as PyTorch's
// old exports write it, so it is reshaped to [C, 1, ..., 1].
void import_prelu(NodeContext& n) {
  ir::Value* x = n.input(0);
  ir::Value* slope = n.input(1);
  const Shape& xs = x->type.shape;
  if (n.opset() < 7 && slope->type.rank() == 1 && xs.size() > 2 && slope->type.shape[0] == xs[1]) {
    Shape per_channel(xs.size() - 1, 1);
    per_channel[0] = xs[1];
    slope = n.reshape(slope, per_channel);
  }
  n.set_output(0, n.emit(K::PRelu, {x, slope}));
}

}  // namespace

void register_logic_importers(std::map<std::string, OpImporter>& r) {
  r["Equal"] = same(K::Equal);
  r["Less"] = same(K::Less);
  r["Greater"] = same(K::Greater);
  r["LessOrEqual"] = same(K::LessOrEqual);
  r["GreaterOrEqual"] = same(K::GreaterOrEqual);
  r["And"] = same(K::And);
  r["Or"] = same(K::Or);
  r["Xor"] = same(K::Xor);
  r["Not"] = same(K::Not);
  r["IsNaN"] = same(K::IsNaN);
  r["IsInf"] = import_is_inf;
  r["Mod"] = import_mod;
  r["Sign"] = same(K::Sign);
  r["Elu"] = import_elu;
  r["Selu"] = import_selu;
  r["Softplus"] = same(K::Softplus);
  r["Mish"] = same(K::Mish);
  r["Sin"] = same(K::Sin);
  r["Cos"] = same(K::Cos);
  r["Floor"] = same(K::Floor);
  r["Ceil"] = same(K::Ceil);
  r["Round"] = same(K::Round);
  r["PRelu"] = import_prelu;
}

}  // namespace vkc::onnx
