#include "ir/ops.h"

#include <map>
#include <string>

namespace vkc::ir {
namespace {

using V = std::vector<int64_t>;
AttrSpec req(std::string_view n, AttrKind k) { return {n, k, true, std::nullopt}; }
AttrSpec opt(std::string_view n, AttrKind k) { return {n, k, false, std::nullopt}; }
AttrSpec def(std::string_view n, Attribute d) {
  AttrKind k = attr_kind(d);
  return {n, k, false, std::move(d)};
}

// Attributes per op. Semantics are documented in docs/ops.md; shapes in the verifier.
// Spatial attributes (strides, dilations, kernel) have one entry per spatial dim and default to all
// ones when absent; pads have 2*S entries [begin_0..begin_S-1, end_0..end_S-1] (ONNX order) and
// default to zeros. Layout strings use N (batch), C (input channels), F (output channels / filter
// count) and the spatial letters W (1-D), H W (2-D), D H W (3-D), in any order.
std::vector<AttrSpec> attrs_for(OpKind k) {
  using K = AttrKind;
  switch (k) {
    case OpKind::Constant: return {req("value", K::Tensor)};
    case OpKind::Conv:
      return {opt("strides", K::Ints), opt("dilations", K::Ints), opt("pads", K::Ints),
              def("groups", int64_t(1)), opt("input_layout", K::String),
              opt("filter_layout", K::String), opt("output_layout", K::String)};
    // requantize_*: the fused requantization of a QDQ conv / matmul (docs/ops.md, docs/int8.md).
    case OpKind::ConvInteger:
      return {opt("strides", K::Ints), opt("dilations", K::Ints), opt("pads", K::Ints),
              def("groups", int64_t(1)), opt("input_layout", K::String),
              opt("filter_layout", K::String), opt("output_layout", K::String),
              opt("requantize_to", K::String), opt("requantize_scale", K::Floats),
              def("requantize_zero_point", int64_t(0))};
    case OpKind::ConvTranspose:
      return {opt("strides", K::Ints), opt("dilations", K::Ints), opt("pads", K::Ints),
              opt("output_padding", K::Ints), opt("output_shape", K::Ints),
              def("groups", int64_t(1)), opt("input_layout", K::String),
              opt("filter_layout", K::String), opt("output_layout", K::String)};
    case OpKind::Im2Col:
      return {req("kernel", K::Ints), opt("strides", K::Ints), opt("dilations", K::Ints),
              opt("pads", K::Ints), def("groups", int64_t(1)), opt("input_layout", K::String),
              opt("filter_layout", K::String)};
    case OpKind::MatMul:
    case OpKind::BatchMatMul:
      return {def("transpose_a", false), def("transpose_b", false)};
    case OpKind::MatMulInteger:
      return {def("transpose_a", false), def("transpose_b", false), opt("requantize_to", K::String),
              opt("requantize_scale", K::Floats), def("requantize_zero_point", int64_t(0))};
    case OpKind::Gemm:
      return {def("alpha", 1.0), def("beta", 1.0), def("transpose_a", false),
              def("transpose_b", false)};
    case OpKind::ExpandShape: return {req("reassociation", K::IntsList), req("shape", K::Ints)};
    case OpKind::CollapseShape: return {req("reassociation", K::IntsList)};
    case OpKind::Reshape: return {req("shape", K::Ints)};
    case OpKind::Transpose: return {req("perm", K::Ints)};
    case OpKind::Pad: return {req("pads", K::Ints), def("value", 0.0)};
    case OpKind::Reverse: return {req("axes", K::Ints)};
    case OpKind::Slice:
      return {req("starts", K::Ints), req("ends", K::Ints), opt("axes", K::Ints),
              opt("steps", K::Ints)};
    case OpKind::Concat: return {req("axis", K::Int)};
    case OpKind::Broadcast: return {req("shape", K::Ints)};
    case OpKind::LeakyRelu: return {def("alpha", 0.01)};
    case OpKind::Clip: return {opt("min", K::Float), opt("max", K::Float)};
    case OpKind::Gelu: return {def("approximate", std::string("none"))};
    case OpKind::Cast: return {req("to", K::String)};
    case OpKind::Quantize: return {def("axis", int64_t(1)), def("to", std::string("i8"))};
    case OpKind::Dequantize: return {def("axis", int64_t(1))};
    case OpKind::ReduceSum:
    case OpKind::ReduceMean:
    case OpKind::ReduceMax:
    case OpKind::ReduceMin: return {opt("axes", K::Ints), def("keepdims", true)};
    case OpKind::ArgMax:
    case OpKind::ArgMin:
      return {def("axis", int64_t(0)), def("keepdims", true), def("select_last_index", false)};
    case OpKind::Softmax:
    case OpKind::LogSoftmax: return {def("axis", int64_t(-1))};
    case OpKind::MaxPool:
    case OpKind::AvgPool:
      return {opt("kernel", K::Ints), opt("strides", K::Ints), opt("dilations", K::Ints),
              opt("pads", K::Ints), def("ceil_mode", false), def("count_include_pad", false),
              def("global", false), opt("layout", K::String)};
    case OpKind::MaxPoolWithIndices:
      return {opt("kernel", K::Ints), opt("strides", K::Ints), opt("dilations", K::Ints),
              opt("pads", K::Ints), def("ceil_mode", false), def("global", false),
              opt("layout", K::String), def("storage_order", int64_t(0))};
    case OpKind::Resize:
      return {req("sizes", K::Ints), opt("scales", K::Floats), def("mode", std::string("nearest")),
              def("coordinate_mode", std::string("half_pixel")),
              def("nearest_mode", std::string("round_prefer_floor")), def("cubic_coeff_a", -0.75),
              def("exclude_outside", false), opt("roi", K::Floats), def("extrapolation_value", 0.0),
              opt("window", K::Ints)};  // a piece of a larger resize (ir/resize_geometry.h)
    case OpKind::Sort: return {def("axis", int64_t(-1)), def("descending", false)};
    case OpKind::TopK:
      return {req("k", K::Int), def("axis", int64_t(-1)), def("largest", true),
              def("sorted", true), def("index_type", std::string("i64"))};
    // Indexing (issue 23, indexing and data movement group)
    case OpKind::Gather:
    case OpKind::GatherElements: return {def("axis", int64_t(0))};
    case OpKind::GatherND: return {def("batch_dims", int64_t(0))};
    case OpKind::ScatterND: return {def("reduction", std::string("none"))};
    case OpKind::ScatterElements:
      return {def("axis", int64_t(0)), def("reduction", std::string("none"))};
    case OpKind::Neg:
    case OpKind::Abs:
    case OpKind::Relu:
    case OpKind::Sigmoid:
    case OpKind::Tanh:
    case OpKind::Exp:
    case OpKind::Log:
    case OpKind::Sqrt:
    case OpKind::Erf:
    case OpKind::HardSwish:
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::Max:
    case OpKind::Min:
    case OpKind::Pow:
    case OpKind::Select: return {};
    // softmax(scale * q k^T + mask, causal) v: scale is required (the pass that forms it knows it).
    // causal_offset moves the causal diagonal: a piece of query rows or keys of a larger causal
    // attention (codegen/range_split.cpp) keeps the whole op's mask. with_lse: a second result,
    // each row's log-sum-exp of its scores, by which pieces over blocks of keys are combined.
    // fp16_products: q, k, v and the probabilities may be rounded to float16 for the products
    // (sums stay float32): set by the fp16 precision mode, so that the kernel may use tensor cores
    // however fusion placed the mode's casts. mask_fill: the mask is bool, and a score where it is
    // true becomes `fill` (ONNX's Where(mask, fill, scores), PyTorch's masked_fill) instead of
    // having a float mask added. A fifth operand (with mask_fill only) is a float mask added after
    // the fill: GPT-2's older export, Where(causal, scores, min) + attention_mask.
    case OpKind::Attention:
      return {req("scale", K::Float), def("causal", false), def("k_transposed", false), def("causal_offset", int64_t(0)),
              def("with_lse", false), def("fp16_products", false), def("mask_fill", false), def("fill", 0.0)};
    // Issue 23, elementwise and logic group.
    case OpKind::IsInf: return {def("detect_positive", true), def("detect_negative", true)};
    case OpKind::Elu: return {def("alpha", 1.0)};
    case OpKind::Selu: return {def("alpha", 1.67326319217681884765625), def("gamma", 1.05070102214813232421875)};
    case OpKind::Equal:
    case OpKind::Less:
    case OpKind::Greater:
    case OpKind::LessOrEqual:
    case OpKind::GreaterOrEqual:
    case OpKind::And:
    case OpKind::Or:
    case OpKind::Xor:
    case OpKind::Not:
    case OpKind::IsNaN:
    case OpKind::Mod:
    case OpKind::FMod:
    case OpKind::Sign:
    case OpKind::Softplus:
    case OpKind::Mish:
    case OpKind::Sin:
    case OpKind::Cos:
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::Round:
    case OpKind::PRelu: return {};
    // Normalizations and reductions (issue 23).
    case OpKind::ReduceProd:
    case OpKind::ReduceL1:
    case OpKind::ReduceL2:
    case OpKind::ReduceLogSumExp: return {opt("axes", K::Ints), def("keepdims", true)};
    case OpKind::LayerNorm: return {def("axis", int64_t(-1)), def("epsilon", 1e-5), def("rms", false)};
    case OpKind::GroupNorm: return {req("num_groups", K::Int), def("epsilon", 1e-5)};
    case OpKind::CumSum: return {req("axis", K::Int), def("exclusive", false), def("reverse", false)};
  }
  // No default above: -Wswitch names an op added to ops.def without deciding its attributes.
  return {};
}

std::vector<std::string_view> operand_names_for(OpKind k) {
  switch (k) {
    case OpKind::Conv:
    case OpKind::ConvTranspose: return {"input", "filter", "bias"};
    case OpKind::Im2Col:
    case OpKind::MaxPoolWithIndices:
    case OpKind::Resize: return {"input"};
    case OpKind::MatMul:
    case OpKind::BatchMatMul: return {"lhs", "rhs"};
    case OpKind::Gemm: return {"a", "b", "c"};
    case OpKind::Select: return {"condition", "true_value", "false_value"};
    case OpKind::Quantize:
    case OpKind::Dequantize: return {"input", "scale", "zero_point"};
    case OpKind::ConvInteger: return {"input", "filter", "input_zero_point", "filter_zero_point", "bias"};
    case OpKind::MatMulInteger: return {"lhs", "rhs", "lhs_zero_point", "rhs_zero_point"};
    case OpKind::Sort: return {"keys"};
    case OpKind::Attention: return {"q", "k", "v", "mask", "added_mask"};
    case OpKind::PRelu: return {"input", "slope"};  // issue 23, elementwise and logic group
    // Indexing (issue 23, indexing and data movement group)
    case OpKind::Gather:
    case OpKind::GatherElements:
    case OpKind::GatherND: return {"data", "indices"};
    case OpKind::ScatterND:
    case OpKind::ScatterElements: return {"data", "indices", "updates"};
    // Normalizations (issue 23).
    case OpKind::LayerNorm:
    case OpKind::GroupNorm: return {"input", "scale", "bias"};
    default: return {};  // numbered ("operand 0"): a label is a nicety, not a fact to forget
  }
}

std::vector<OpSchema> build_table() {
  std::vector<OpSchema> table;
#define OP(kind, name, cat, a, b, c, d)                                                        \
  table.push_back(OpSchema{OpKind::kind, name, OpCategory::cat, a, b, c, d,                    \
                           attrs_for(OpKind::kind), operand_names_for(OpKind::kind)});
#include "ir/ops.def"
#undef OP
  return table;
}

const std::vector<OpSchema>& table() {
  static const std::vector<OpSchema> t = build_table();
  return t;
}

}  // namespace

const OpSchema& op_schema(OpKind kind) { return table()[size_t(kind)]; }
std::string_view op_name(OpKind kind) { return op_schema(kind).name; }

std::optional<OpKind> parse_op_name(std::string_view name) {
  static const std::map<std::string, OpKind, std::less<>> by_name = [] {
    std::map<std::string, OpKind, std::less<>> m;
    for (const OpSchema& s : table()) m.emplace(std::string(s.name), s.kind);
    return m;
  }();
  auto it = by_name.find(name);
  if (it == by_name.end()) return std::nullopt;
  return it->second;
}

const std::vector<OpKind>& all_op_kinds() {
  static const std::vector<OpKind> kinds = [] {
    std::vector<OpKind> v;
    for (const OpSchema& s : table()) v.push_back(s.kind);
    return v;
  }();
  return kinds;
}

bool is_elementwise(OpKind kind) {
  OpCategory c = op_schema(kind).category;
  return c == OpCategory::Unary || c == OpCategory::Binary || c == OpCategory::Ternary ||
         c == OpCategory::Quant;
}

}  // namespace vkc::ir
