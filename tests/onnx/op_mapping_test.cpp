// Walks every op kind of ir/ops.def and checks that ONNX's counterpart, where ONNX has one, has an
// importer. The ops ONNX has no counterpart for are listed here, so a new IR op must be placed in
// one list or the other.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "ir/ops.h"
#include "onnx/import_context.h"

namespace vkc::onnx {
namespace {

using K = ir::OpKind;

// The ONNX op type whose importer emits each IR op.
const std::map<K, std::string> kOnnxOp = {
    {K::Constant, "Constant"},
    {K::Conv, "Conv"},
    {K::ConvTranspose, "ConvTranspose"},
    {K::MatMul, "MatMul"},
    {K::Gemm, "Gemm"},
    {K::Reshape, "Reshape"},
    {K::Transpose, "Transpose"},
    {K::Pad, "Pad"},
    {K::Slice, "Slice"},
    {K::Concat, "Concat"},
    {K::Broadcast, "Expand"},
    {K::Neg, "Neg"},
    {K::Abs, "Abs"},
    {K::Relu, "Relu"},
    {K::LeakyRelu, "LeakyRelu"},
    {K::Clip, "Clip"},
    {K::Sigmoid, "Sigmoid"},
    {K::Tanh, "Tanh"},
    {K::Exp, "Exp"},
    {K::Log, "Log"},
    {K::Sqrt, "Sqrt"},
    {K::Erf, "Erf"},
    {K::Gelu, "Gelu"},
    {K::HardSwish, "HardSwish"},
    {K::Cast, "Cast"},
    {K::Add, "Add"},
    {K::Sub, "Sub"},
    {K::Mul, "Mul"},
    {K::Div, "Div"},
    {K::Max, "Max"},
    {K::Min, "Min"},
    {K::Pow, "Pow"},
    {K::Select, "Where"},
    {K::Quantize, "QuantizeLinear"},
    {K::Dequantize, "DequantizeLinear"},
    {K::ConvInteger, "ConvInteger"},
    {K::MatMulInteger, "MatMulInteger"},
    {K::ReduceSum, "ReduceSum"},
    {K::ReduceMean, "ReduceMean"},
    {K::ReduceMax, "ReduceMax"},
    {K::ReduceMin, "ReduceMin"},
    {K::ArgMax, "ArgMax"},
    {K::ArgMin, "ArgMin"},
    {K::Softmax, "Softmax"},
    {K::LogSoftmax, "LogSoftmax"},
    {K::MaxPool, "MaxPool"},
    {K::AvgPool, "AveragePool"},
    {K::MaxPoolWithIndices, "MaxPool"},  // with its Indices output
    {K::Resize, "Resize"},
    {K::TopK, "TopK"},
    // Issue 23, elementwise and logic group.
    {K::Equal, "Equal"},
    {K::Less, "Less"},
    {K::Greater, "Greater"},
    {K::LessOrEqual, "LessOrEqual"},
    {K::GreaterOrEqual, "GreaterOrEqual"},
    {K::And, "And"},
    {K::Or, "Or"},
    {K::Xor, "Xor"},
    {K::Not, "Not"},
    {K::IsNaN, "IsNaN"},
    {K::IsInf, "IsInf"},
    {K::Mod, "Mod"},
    {K::FMod, "Mod"},  // fmod = 1
    {K::Sign, "Sign"},
    {K::Elu, "Elu"},
    {K::Selu, "Selu"},
    {K::Softplus, "Softplus"},
    {K::Mish, "Mish"},
    {K::Sin, "Sin"},
    {K::Cos, "Cos"},
    {K::Floor, "Floor"},
    {K::Ceil, "Ceil"},
    {K::Round, "Round"},
    {K::PRelu, "PRelu"},
    // Indexing (issue 23, indexing and data movement group)
    {K::Gather, "Gather"},
    {K::GatherElements, "GatherElements"},
    {K::GatherND, "GatherND"},
    {K::ScatterND, "ScatterND"},
    {K::ScatterElements, "ScatterElements"},
    // Normalizations and reductions (issue 23).
    {K::ReduceProd, "ReduceProd"},
    {K::ReduceL1, "ReduceL1"},
    {K::ReduceL2, "ReduceL2"},
    {K::ReduceLogSumExp, "ReduceLogSumExp"},
    {K::LayerNorm, "LayerNormalization"},
    {K::GroupNorm, "GroupNormalization"},  // and InstanceNormalization
    {K::CumSum, "CumSum"},
};

// IR ops ONNX has no counterpart for.
const std::set<K> kNotInOnnx = {
    K::Im2Col,                         // a lowering step of conv
    K::BatchMatMul,                    // ONNX MatMul batches, and imports as matmul
    K::ExpandShape, K::CollapseShape,  // ONNX reshapes import as reshape
    K::Reverse,                        // ReverseSequence reverses per batch entry, not whole axes
    K::Sort,                           // ONNX sorts only through TopK
    K::Attention,                      // formed from MatMul/Softmax/MatMul by a pass (opset 23's
                                       // Attention is beyond the opsets vkc reads)
};

TEST(OnnxOpMapping, EveryIrOpHasAnImporterOrIsListedAsNotInOnnx) {
  for (K k : ir::all_op_kinds()) {
    SCOPED_TRACE(ir::op_name(k));
    auto it = kOnnxOp.find(k);
    if (kNotInOnnx.count(k)) {
      EXPECT_EQ(it, kOnnxOp.end()) << "listed both as mapped and as not in ONNX";
      continue;
    }
    ASSERT_NE(it, kOnnxOp.end()) << "no ONNX mapping: add one, or list the op in kNotInOnnx";
    EXPECT_NE(find_importer(it->second), nullptr) << "no importer for ONNX " << it->second;
  }
}

}  // namespace
}  // namespace vkc::onnx
